/*
 * load.c - guest memory and programs: flat binaries, static ELF
 * executables (by program headers, with libelf), assembly sources
 * (assembled and linked at a fixed address with the system as/ld).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gelf.h>
#include <libelf.h>

#include "sim_internal.h"
#include "rtit/asm.h"

#define PAGE 0x1000ull

static bool overlaps_mapping(struct rtit_sim *sim, uint64_t lo, uint64_t hi,
			     uint64_t *olo)
{
	uc_mem_region *regs;
	uint32_t n;
	bool hit = false;
	if (uc_mem_regions(sim->uc, &regs, &n) != UC_ERR_OK)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (regs[i].begin < hi && regs[i].end >= lo) {
			*olo = regs[i].begin;
			hit = true;
			break;
		}
	}
	uc_free(regs);
	return hit;
}

int rtit_sim_map(struct rtit_sim *sim, uint64_t addr, uint64_t size)
{
	if (!sim || !size)
		return -RTIT_ERR_INVALID;
	uint64_t lo = addr & ~(PAGE - 1);
	uint64_t hi = (addr + size + PAGE - 1) & ~(PAGE - 1);
	uint64_t o;
	if (hi <= lo)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "memory range 0x%" PRIx64 "+0x%" PRIx64 " wraps",
				  addr, size);
	if (overlaps_mapping(sim, lo, hi, &o))
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "memory 0x%" PRIx64 "-0x%" PRIx64
				  " overlaps the mapping at 0x%" PRIx64, lo, hi, o);
	if (uc_mem_map(sim->uc, lo, hi - lo, UC_PROT_ALL) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "cannot map 0x%" PRIx64 "-0x%" PRIx64, lo, hi);
	return 0;
}

/* Maps the pages of [lo, hi) that are not mapped yet. */
static int map_missing(struct rtit_sim *sim, uint64_t lo, uint64_t hi)
{
	lo &= ~(PAGE - 1);
	hi = (hi + PAGE - 1) & ~(PAGE - 1);
	for (uint64_t p = lo; p < hi; p += PAGE) {
		uint8_t b;
		if (uc_mem_read(sim->uc, p, &b, 1) == UC_ERR_OK)
			continue;
		if (uc_mem_map(sim->uc, p, PAGE, UC_PROT_ALL) != UC_ERR_OK)
			return sim_seterr(sim, -RTIT_ERR_INVALID,
					  "cannot map page 0x%" PRIx64, p);
	}
	return 0;
}

int rtit_sim_load_flat(struct rtit_sim *sim, const void *bytes, size_t len,
		       uint64_t addr, uint64_t entry)
{
	if (!sim || !bytes || !len)
		return -RTIT_ERR_INVALID;
	if (entry < addr || entry >= addr + len)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "entry 0x%" PRIx64 " is outside the image 0x%" PRIx64
				  "-0x%" PRIx64, entry, addr, addr + len);
	int r = rtit_sim_map(sim, addr, len);
	if (r < 0)
		return r;
	if (uc_mem_write(sim->uc, addr, bytes, len) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "cannot write the image");
	sim->entry = entry;
	sim->loaded = true;
	return 0;
}

int rtit_sim_load_flat_file(struct rtit_sim *sim, const char *path,
			    uint64_t addr, uint64_t entry)
{
	if (!sim || !path)
		return -RTIT_ERR_INVALID;
	FILE *f = fopen(path, "rb");
	if (!f)
		return sim_seterr(sim, -RTIT_ERR_IO, "%s: %s", path, strerror(errno));
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -RTIT_ERR_NOMEM;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	if (!n) {
		free(buf);
		return sim_seterr(sim, -RTIT_ERR_INVALID, "%s: empty file", path);
	}
	int r = rtit_sim_load_flat(sim, buf, n, addr, entry);
	free(buf);
	if (r < 0) {
		char tmp[sizeof(sim->errmsg)];
		memcpy(tmp, sim->errmsg, sizeof(tmp));
		sim_seterr(sim, r, "%.100s: %.150s", path, tmp);
	}
	return r;
}

static int add_symbols(struct rtit_sim *sim, Elf *e)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 1; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				continue;
			int t = GELF_ST_TYPE(s.st_info);
			if (t == STT_SECTION || t == STT_FILE || s.st_shndx == SHN_UNDEF)
				continue;
			const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
			if (!nm || !*nm)
				continue;
			struct sim_symbol *ns = realloc(sim->syms,
				(sim->nsyms + 1) * sizeof(*ns));
			if (!ns)
				return -RTIT_ERR_NOMEM;
			sim->syms = ns;
			ns[sim->nsyms].name = strdup(nm);
			ns[sim->nsyms].value = s.st_value;
			if (!ns[sim->nsyms].name)
				return -RTIT_ERR_NOMEM;
			sim->nsyms++;
		}
	}
	return 0;
}

int rtit_sim_symbol(const struct rtit_sim *sim, const char *name,
		    uint64_t *value)
{
	if (!sim || !name)
		return -RTIT_ERR_INVALID;
	for (size_t i = 0; i < sim->nsyms; i++) {
		if (!strcmp(sim->syms[i].name, name)) {
			*value = sim->syms[i].value;
			return 0;
		}
	}
	return -RTIT_ERR_INVALID;
}

int rtit_sim_load_elf(struct rtit_sim *sim, const char *path)
{
	if (!sim || !path)
		return -RTIT_ERR_INVALID;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "libelf: %s", elf_errmsg(-1));
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return sim_seterr(sim, -RTIT_ERR_IO, "%s: %s", path, strerror(errno));
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int r = 0;
	size_t fsize = 0;
	const char *raw = NULL;
	GElf_Ehdr eh;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID, "%s: not an ELF file", path);
		goto out;
	}
	raw = elf_rawfile(e, &fsize);
	int want_class = sim->m.mode == 64 ? ELFCLASS64 : ELFCLASS32;
	int want_mach = sim->m.mode == 64 ? EM_X86_64 : EM_386;
	if (gelf_getclass(e) != want_class || eh.e_machine != want_mach) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID,
			       "%s: not a %d-bit x86 ELF (class %d, machine %d)",
			       path, sim->m.mode, gelf_getclass(e), eh.e_machine);
		goto out;
	}
	if (eh.e_type != ET_EXEC) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID,
			       "%s: not a static executable (e_type %d)", path,
			       eh.e_type);
		goto out;
	}
	size_t nph;
	if (elf_getphdrnum(e, &nph) != 0 || nph == 0) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID, "%s: no program headers", path);
		goto out;
	}
	bool entry_ok = false;
	int nload = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph)) {
			r = sim_seterr(sim, -RTIT_ERR_INVALID,
				       "%s: program header %zu unreadable", path, i);
			goto out;
		}
		if (ph.p_type != PT_LOAD || !ph.p_memsz)
			continue;
		if (ph.p_filesz > ph.p_memsz || ph.p_offset > fsize ||
		    ph.p_filesz > fsize - ph.p_offset ||
		    ph.p_vaddr + ph.p_memsz < ph.p_vaddr) {
			r = sim_seterr(sim, -RTIT_ERR_INVALID,
				       "%s: PT_LOAD %zu is outside the file or wraps",
				       path, i);
			goto out;
		}
		/* segments may share a page, never a byte */
		for (size_t j = 0; j < i; j++) {
			GElf_Phdr q;
			if (!gelf_getphdr(e, (int)j, &q) || q.p_type != PT_LOAD ||
			    !q.p_memsz)
				continue;
			if (q.p_vaddr < ph.p_vaddr + ph.p_memsz &&
			    ph.p_vaddr < q.p_vaddr + q.p_memsz) {
				r = sim_seterr(sim, -RTIT_ERR_INVALID,
					       "%s: PT_LOAD %zu (0x%" PRIx64
					       ") overlaps PT_LOAD %zu (0x%" PRIx64 ")",
					       path, i, (uint64_t)ph.p_vaddr, j,
					       (uint64_t)q.p_vaddr);
				goto out;
			}
		}
		r = map_missing(sim, ph.p_vaddr, ph.p_vaddr + ph.p_memsz);
		if (r < 0)
			goto out;
		if (ph.p_filesz &&
		    uc_mem_write(sim->uc, ph.p_vaddr, raw + ph.p_offset,
				 ph.p_filesz) != UC_ERR_OK) {
			r = sim_seterr(sim, -RTIT_ERR_INTERNAL,
				       "%s: cannot write PT_LOAD %zu", path, i);
			goto out;
		}
		if (eh.e_entry >= ph.p_vaddr && eh.e_entry < ph.p_vaddr + ph.p_memsz)
			entry_ok = true;
		nload++;
	}
	if (!nload) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID, "%s: no PT_LOAD segment", path);
		goto out;
	}
	if (!entry_ok) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID,
			       "%s: entry 0x%" PRIx64 " is not in a loaded segment",
			       path, (uint64_t)eh.e_entry);
		goto out;
	}
	r = add_symbols(sim, e);
	if (r < 0)
		goto out;
	sim->entry = eh.e_entry;
	sim->loaded = true;
out:
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

int rtit_sim_load_asm(struct rtit_sim *sim, const char *src, uint64_t addr,
		      const char *name, int line_base)
{
	return rtit_sim_load_asm_sections(sim, src, addr, NULL, 0, name, line_base);
}

int rtit_sim_load_asm_sections(struct rtit_sim *sim, const char *src, uint64_t addr,
			       const struct rtit_asm_section *secs, size_t nsecs,
			       const char *name, int line_base)
{
	if (!sim || !src)
		return -RTIT_ERR_INVALID;
	struct rtit_asm a;
	char err[sizeof(sim->errmsg)];
	int r = rtit_asm_build_sections(src, addr, secs, nsecs, sim->m.mode == 64 ? 64 : 32,
					name, line_base, &a, err, sizeof(err));
	if (r < 0)
		return sim_seterr(sim, r, "%s", err);
	r = rtit_sim_load_elf(sim, a.elf);
	uint64_t start;
	if (r == 0 && rtit_sim_symbol(sim, "_start", &start) < 0)
		sim->entry = addr;
	rtit_asm_cleanup(&a);
	return r;
}
