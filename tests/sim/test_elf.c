/*
 * test_elf.c - static ELF executables loaded by their program headers
 * (64- and 32-bit), and one-line errors for malformed ones.
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <unicorn/unicorn.h>

#include "sim_test.h"

static const char *src64 =
	".intel_syntax noprefix\n.globl _start\n.text\n_start:\n"
	"  mov eax, dword ptr [rip + val]\n"
	"  add dword ptr [rip + val], eax\n"
	"  call f\n"
	"  hlt\n"
	"f: ret\n"
	".data\nval: .long 21\n";

static const char *src32 =
	".intel_syntax noprefix\n.globl _start\n.text\n_start:\n"
	"  mov eax, dword ptr [val]\n"
	"  call f\n"
	"  hlt\n"
	"f: ret\n"
	".data\nval: .long 21\n";

/* Builds an ELF with separate text and data segments into path. */
static void build(const char *src, int mode, char *path)
{
	char dir[] = "/tmp/rtitsim-elf-XXXXXX";
	cr_assert(mkdtemp(dir));
	char cmd[1024], s[256];
	snprintf(s, sizeof(s), "%s/a.s", dir);
	FILE *f = fopen(s, "w");
	cr_assert(f);
	fputs(src, f);
	fclose(f);
	snprintf(path, 256, "%s/a.elf", dir);
	snprintf(cmd, sizeof(cmd),
		 "as %s -o %s/a.o %s && ld -m %s -static --build-id=none "
		 "-Ttext=0x401000 -Tdata=0x404000 -o %s %s/a.o 2>/dev/null",
		 mode == 64 ? "--64" : "--32", dir, s,
		 mode == 64 ? "elf_x86_64" : "elf_i386", path, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static int load_run(const char *path, int mode, struct rtit_sim_status *st,
		    char *err, size_t errsize)
{
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	cfg.mode = mode;
	struct rtit_sim *sim;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	int r = rtit_sim_load_elf(sim, path);
	snprintf(err, errsize, "%s", rtit_sim_errmsg(sim));
	if (r == 0) {
		rtit_sim_run(sim, st);
		uint64_t rax;
		rtit_sim_get_reg(sim, mode == 64 ? UC_X86_REG_RAX : UC_X86_REG_EAX, &rax);
		r = (int)rax;
	}
	rtit_sim_free(sim);
	return r;
}

Test(sim_elf, loads_64_and_32)
{
	char p64[256], p32[256], err[256];
	struct rtit_sim_status st;
	build(src64, 64, p64);
	build(src32, 32, p32);
	cr_expect_eq(load_run(p64, 64, &st, err, sizeof(err)), 21, "%s", err);
	cr_expect_eq(st.stop, RTIT_SIM_STOP_HALTED, "%s", st.msg);
	cr_expect_eq(st.insns, 5);
	cr_expect_eq(load_run(p32, 32, &st, err, sizeof(err)), 21, "%s", err);
	cr_expect_eq(st.insns, 4);
	/* the wrong class for the mode */
	cr_expect_lt(load_run(p32, 64, &st, err, sizeof(err)), 0);
	cr_expect(strstr(err, "not a 64-bit x86 ELF") != NULL, "%s", err);
}

/* Patches the 64-bit ELF at path: fn edits header and program headers. */
static void patch(const char *path, void (*fn)(Elf64_Ehdr *, Elf64_Phdr *))
{
	FILE *f = fopen(path, "r+b");
	cr_assert(f);
	Elf64_Ehdr eh;
	cr_assert_eq(fread(&eh, sizeof(eh), 1, f), 1);
	Elf64_Phdr ph[8];
	cr_assert_leq(eh.e_phnum, 8);
	fseek(f, (long)eh.e_phoff, SEEK_SET);
	cr_assert_eq(fread(ph, sizeof(ph[0]), eh.e_phnum, f), eh.e_phnum);
	fn(&eh, ph);
	rewind(f);
	fwrite(&eh, sizeof(eh), 1, f);
	fseek(f, (long)eh.e_phoff, SEEK_SET);
	fwrite(ph, sizeof(ph[0]), eh.e_phnum, f);
	fclose(f);
}

static int load_idx(Elf64_Ehdr *eh, Elf64_Phdr *ph, int k)
{
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && k-- == 0)
			return i;
	return -1;
}

static void p_overlap(Elf64_Ehdr *eh, Elf64_Phdr *ph)
{
	ph[load_idx(eh, ph, 1)].p_vaddr = ph[load_idx(eh, ph, 0)].p_vaddr;
}

static void p_outside(Elf64_Ehdr *eh, Elf64_Phdr *ph)
{
	ph[load_idx(eh, ph, 1)].p_offset = 0x7fffffff;
}

static void p_entry(Elf64_Ehdr *eh, Elf64_Phdr *ph)
{
	eh->e_entry = 0x10;
}

Test(sim_elf, malformed)
{
	static const struct {
		void (*fn)(Elf64_Ehdr *, Elf64_Phdr *);
		const char *msg;
	} cases[] = {
		{ p_overlap, "overlaps PT_LOAD" },
		{ p_outside, "is outside the file or wraps" },
		{ p_entry, "entry 0x10 is not in a loaded segment" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char p[256], err[256];
		struct rtit_sim_status st;
		build(src64, 64, p);
		patch(p, cases[i].fn);
		cr_expect_lt(load_run(p, 64, &st, err, sizeof(err)), 0, "case %zu", i);
		cr_expect(strstr(err, cases[i].msg) != NULL, "case %zu: %s", i, err);
		cr_expect(strstr(err, p) == err, "message starts with the path: %s", err);
	}
	char err[256];
	struct rtit_sim_status st;
	cr_expect_lt(load_run("/nonexistent", 64, &st, err, sizeof(err)), 0);
	cr_expect_str_eq(err, "/nonexistent: No such file or directory");
}
