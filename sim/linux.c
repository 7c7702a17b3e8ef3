/*
 * linux.c - a Linux process: the program, its interpreter and the initial
 * stack as the Linux kernel sets them up (execve, with address-space
 * randomisation off), and the address space the system calls change
 * (docs/linux.md; D88).
 *
 * The program runs at CPL 3.  Its SYSCALLs go to one page of kernel text
 * at LX_KERNEL_ENTRY holding a SYSRET: the system call itself is served by
 * syscall.c when the SYSCALL retires, so the records a tracer sees are the
 * SYSCALL (CPL 3 -> 0, to the kernel entry) and the SYSRET (CPL 0 -> 3,
 * back to the next instruction), as on hardware with the kernel filtered
 * out of the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <gelf.h>
#include <libelf.h>

#include "rtit/image.h"
#include "linux.h"

#define PAGE 0x1000ull
#define PAGE_DOWN(a) ((a) & ~(PAGE - 1))
#define PAGE_UP(a) (((a) + PAGE - 1) & ~(PAGE - 1))

/* The largest span a loaded ELF may cover (its segments' lowest to
 * highest address): larger is refused before any page is mapped. */
#define LX_MAX_IMAGE (1ull << 32)

void rtit_sim_process_config(struct rtit_sim_config *cfg)
{
	cfg->mode = 64;
	cfg->cpl = 3;
	cfg->stack_top = RTIT_SIM_PROCESS_STACK_TOP;
	cfg->stack_size = RTIT_SIM_PROCESS_STACK_SIZE;
}

/* ------------------------------------------------------- address space */

static uint32_t lx_uc_prot(int prot)
{
	uint32_t p = 0;
	if (prot & PROT_READ)
		p |= UC_PROT_READ;
	if (prot & PROT_WRITE)
		p |= UC_PROT_WRITE | UC_PROT_READ;
	if (prot & PROT_EXEC)
		p |= UC_PROT_EXEC | UC_PROT_READ;
	return p;
}

/* The code at [lo, hi) changed: Unicorn's translations and the block
 * cache forget it (the cache is small: cleared whole). */
static void code_changed(struct rtit_sim *sim, uint64_t lo, uint64_t hi)
{
	uc_ctl_remove_cache(sim->uc, lo, hi);
	sim_cache_clear(&sim->cache);
}

bool lx_any_mapped(struct rtit_sim *sim, uint64_t addr, uint64_t len)
{
	uc_mem_region *regs;
	uint32_t n;
	bool hit = false;
	if (uc_mem_regions(sim->uc, &regs, &n) != UC_ERR_OK)
		return true;
	for (uint32_t i = 0; i < n && !hit; i++)
		hit = regs[i].begin < addr + len && regs[i].end >= addr;
	uc_free(regs);
	return hit;
}

void lx_unmap(struct rtit_sim *sim, uint64_t addr, uint64_t len)
{
	uc_mem_region *regs;
	uint32_t n;
	uint64_t hi = addr + len;
	bool any = false;
	if (uc_mem_regions(sim->uc, &regs, &n) != UC_ERR_OK)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t b = regs[i].begin, e = regs[i].end + 1;
		if (b >= hi || e <= addr)
			continue;
		uint64_t lo = b > addr ? b : addr, top = e < hi ? e : hi;
		uc_mem_unmap(sim->uc, lo, top - lo);
		any = true;
	}
	uc_free(regs);
	if (any)
		code_changed(sim, addr, hi);
}

int lx_map(struct rtit_sim *sim, uint64_t addr, uint64_t len, int prot)
{
	if (!len || (addr | len) & (PAGE - 1) || addr + len < addr ||
	    addr + len > RTIT_SIM_PROCESS_STACK_TOP + PAGE)
		return -EINVAL;
	lx_unmap(sim, addr, len);
	if (uc_mem_map(sim->uc, addr, len, lx_uc_prot(prot)) != UC_ERR_OK)
		return -ENOMEM;
	return 0;
}

int lx_protect(struct rtit_sim *sim, uint64_t addr, uint64_t len, int prot)
{
	uint64_t a = addr, hi = addr + len;
	uc_mem_region *regs;
	uint32_t n;
	if (uc_mem_regions(sim->uc, &regs, &n) != UC_ERR_OK)
		return -ENOMEM;
	/* every page of the range must be mapped (Linux: ENOMEM) */
	while (a < hi) {
		bool found = false;
		for (uint32_t i = 0; i < n; i++) {
			if (regs[i].begin <= a && regs[i].end >= a) {
				a = regs[i].end + 1;
				found = true;
				break;
			}
		}
		if (!found) {
			uc_free(regs);
			return -ENOMEM;
		}
	}
	uc_free(regs);
	if (uc_mem_protect(sim->uc, addr, len, lx_uc_prot(prot)) != UC_ERR_OK)
		return -ENOMEM;
	code_changed(sim, addr, hi);
	return 0;
}

uint64_t lx_find_free(struct rtit_sim *sim, uint64_t len)
{
	struct sim_linux *lx = sim->lx;
	uint64_t top = lx->mmap_top;
	uc_mem_region *regs;
	uint32_t n;
	if (uc_mem_regions(sim->uc, &regs, &n) != UC_ERR_OK)
		return 0;
	for (;;) {
		if (top < len || top - len < LX_MMAP_FLOOR) {
			top = 0;
			break;
		}
		uint64_t lo = top - len;
		uint64_t below = UINT64_MAX;
		for (uint32_t i = 0; i < n; i++)
			if (regs[i].begin < top && regs[i].end >= lo &&
			    (below == UINT64_MAX || regs[i].begin < below))
				below = regs[i].begin;
		if (below == UINT64_MAX) {
			top = lo;
			break;
		}
		top = below;
	}
	uc_free(regs);
	return top;
}

int lx_note_mapping(struct rtit_sim *sim, uint64_t addr, uint64_t len, uint64_t off,
		    int prot, const char *path)
{
	struct sim_linux *lx = sim->lx;
	if (lx->nmaps == lx->maps_cap) {
		size_t nc = lx->maps_cap ? lx->maps_cap * 2 : 16;
		struct rtit_sim_mapping *nm = realloc(lx->maps, nc * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		lx->maps = nm;
		lx->maps_cap = nc;
	}
	struct rtit_sim_mapping *m = &lx->maps[lx->nmaps++];
	memset(m, 0, sizeof(*m));
	m->addr = addr;
	m->size = len;
	m->offset = off;
	m->prot = (uint32_t)prot & 7;
	m->at = sim->retired;
	snprintf(m->path, sizeof(m->path), "%s", path);
	/* the build-id of the file, when it is an ELF with one */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		rtit_elf_build_id(fd, m->build_id);
		close(fd);
	}
	return 0;
}

const struct rtit_sim_mapping *rtit_sim_mappings(const struct rtit_sim *sim, size_t *n)
{
	*n = sim && sim->lx ? sim->lx->nmaps : 0;
	return *n ? sim->lx->maps : NULL;
}

/* ------------------------------------------------------------- loading */

struct loaded {
	uint64_t bias, entry, phdr, lo, hi;
	uint16_t phnum;
	bool dyn;
	char interp[PATH_MAX];
};

static int elf_prot(uint32_t f)
{
	return ((f & PF_R) ? PROT_READ : 0) | ((f & PF_W) ? PROT_WRITE : 0) |
	       ((f & PF_X) ? PROT_EXEC : 0);
}

/* Checks the headers of @e (@what: "program" or "interpreter"). */
static int check_elf(struct rtit_sim *sim, Elf *e, const char *path, GElf_Ehdr *eh,
		     size_t *nph)
{
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, eh))
		return sim_seterr(sim, -RTIT_ERR_INVALID, "%s: not an ELF file", path);
	if (gelf_getclass(e) != ELFCLASS64 || eh->e_machine != EM_X86_64)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "%s: not an x86-64 ELF (class %d, machine %d)", path,
				  gelf_getclass(e), eh->e_machine);
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "%s: not an executable (e_type %d)", path, eh->e_type);
	if (elf_getphdrnum(e, nph) != 0 || *nph == 0)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "%s: no program headers", path);
	return 0;
}

/* The span of the PT_LOAD segments and PT_INTERP; validates each. */
static int scan_phdrs(struct rtit_sim *sim, Elf *e, const char *path, size_t nph,
		      size_t fsize, const char *raw, struct loaded *L)
{
	L->lo = UINT64_MAX;
	L->hi = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			return sim_seterr(sim, -RTIT_ERR_INVALID, "%s: program header %zu unreadable",
					  path, i);
		if (ph.p_type == PT_INTERP) {
			if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset ||
			    !ph.p_filesz || ph.p_filesz >= sizeof(L->interp) ||
			    raw[ph.p_offset + ph.p_filesz - 1] != 0)
				return sim_seterr(sim, -RTIT_ERR_INVALID, "%s: bad PT_INTERP", path);
			memcpy(L->interp, raw + ph.p_offset, ph.p_filesz);
			continue;
		}
		if (ph.p_type != PT_LOAD || !ph.p_memsz)
			continue;
		if (ph.p_filesz > ph.p_memsz || ph.p_offset > fsize ||
		    ph.p_filesz > fsize - ph.p_offset || ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
		    (ph.p_vaddr & (PAGE - 1)) != (ph.p_offset & (PAGE - 1)))
			return sim_seterr(sim, -RTIT_ERR_INVALID,
					  "%s: PT_LOAD %zu is outside the file, wraps or is"
					  " not page-congruent", path, i);
		if (PAGE_DOWN(ph.p_vaddr) < L->lo)
			L->lo = PAGE_DOWN(ph.p_vaddr);
		if (PAGE_UP(ph.p_vaddr + ph.p_memsz) > L->hi)
			L->hi = PAGE_UP(ph.p_vaddr + ph.p_memsz);
	}
	if (L->lo == UINT64_MAX)
		return sim_seterr(sim, -RTIT_ERR_INVALID, "%s: no PT_LOAD segment", path);
	if (L->hi - L->lo > LX_MAX_IMAGE)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "%s: the segments span 0x%" PRIx64 " bytes (more than 4 GiB)",
				  path, L->hi - L->lo);
	return 0;
}

/* Maps the PT_LOAD segments at L->bias, as the kernel's load_elf_binary:
 * whole pages from the file, the rest of the last file page of a
 * segment with bss and the bss itself zero (padzero). */
static int map_segments(struct rtit_sim *sim, Elf *e, const char *path, size_t nph,
			const char *raw, size_t fsize, struct loaded *L)
{
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_memsz)
			continue;
		uint64_t va = ph.p_vaddr + L->bias;
		uint64_t lo = PAGE_DOWN(va), fend = va + ph.p_filesz;
		uint64_t mend = PAGE_UP(va + ph.p_memsz);
		uint64_t off = PAGE_DOWN(ph.p_offset);
		int prot = elf_prot(ph.p_flags);
		/* MAP_FIXED, as the kernel: a page shared with the previous
		 * segment takes this segment's bytes */
		if (lx_map(sim, lo, mend - lo, prot | PROT_READ) < 0)
			return sim_seterr(sim, -RTIT_ERR_INVALID,
					  "%s: cannot map PT_LOAD %zu at 0x%" PRIx64, path, i, lo);
		/* whole file pages, bounded by the file */
		uint64_t copy = ph.p_filesz ? PAGE_UP(fend) - lo : 0;
		if (off + copy > fsize)
			copy = fsize - off;
		if (copy && uc_mem_write(sim->uc, lo, raw + off, copy) != UC_ERR_OK)
			return sim_seterr(sim, -RTIT_ERR_INTERNAL, "%s: cannot write PT_LOAD %zu",
					  path, i);
		if (ph.p_memsz > ph.p_filesz) {
			/* bss: zero from the file's end (padzero) */
			static const uint8_t zero[4096];
			for (uint64_t a = fend; a < mend;) {
				uint64_t n = mend - a < sizeof(zero) ? mend - a : sizeof(zero);
				uc_mem_write(sim->uc, a, zero, n);
				a += n;
			}
		}
		if (lx_note_mapping(sim, lo, PAGE_UP(fend) - lo, off, prot, path) < 0)
			return -RTIT_ERR_NOMEM;
	}
	return 0;
}

/* Loads one ELF (the program or its interpreter).  @interp: loading the
 * interpreter (ET_DYN placed by the mmap allocator; no PT_INTERP). */
static int load_one(struct rtit_sim *sim, const char *path, bool interp, struct loaded *L)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sim_seterr(sim, -RTIT_ERR_IO, "%s%s: %s", interp ? "the interpreter " : "",
				  path, strerror(errno));
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t nph = 0, fsize = 0;
	const char *raw;
	int r = check_elf(sim, e, path, &eh, &nph);
	if (r < 0)
		goto out;
	raw = elf_rawfile(e, &fsize);
	memset(L, 0, sizeof(*L));
	if ((r = scan_phdrs(sim, e, path, nph, fsize, raw, L)) < 0)
		goto out;
	if (interp && L->interp[0]) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID, "the interpreter %s has an interpreter", path);
		goto out;
	}
	L->dyn = eh.e_type == ET_DYN;
	if (!L->dyn)
		L->bias = 0;
	else if (!interp)
		L->bias = LX_PIE_BASE - L->lo;	/* ELF_ET_DYN_BASE */
	else {
		uint64_t at = lx_find_free(sim, L->hi - L->lo);
		if (!at) {
			r = sim_seterr(sim, -RTIT_ERR_INVALID, "%s: no room to load it", path);
			goto out;
		}
		L->bias = at - L->lo;
		sim->lx->mmap_top = at;
	}
	if (!L->dyn && L->lo < LX_MMAP_FLOOR) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID,
			       "%s: a PT_LOAD at 0x%" PRIx64 " is below 0x%llx (mmap_min_addr)",
			       path, L->lo, LX_MMAP_FLOOR);
		goto out;
	}
	if (L->hi + L->bias > RTIT_SIM_PROCESS_STACK_TOP - RTIT_SIM_PROCESS_STACK_SIZE) {
		r = sim_seterr(sim, -RTIT_ERR_INVALID,
			       "%s: its segments reach 0x%" PRIx64 ", into the stack", path,
			       L->hi + L->bias);
		goto out;
	}
	if ((r = map_segments(sim, e, path, nph, raw, fsize, L)) < 0)
		goto out;
	L->entry = eh.e_entry + L->bias;
	L->phnum = (uint16_t)nph;
	/* AT_PHDR: PT_PHDR, else the headers inside the first segment */
	L->phdr = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_PHDR)
			L->phdr = ph.p_vaddr + L->bias;
	}
	if (!L->phdr) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    eh.e_phoff >= ph.p_offset && eh.e_phoff < ph.p_offset + ph.p_filesz) {
				L->phdr = ph.p_vaddr + (eh.e_phoff - ph.p_offset) + L->bias;
				break;
			}
		}
	}
	uint8_t b;
	if (uc_mem_read(sim->uc, L->entry, &b, 1) != UC_ERR_OK)
		r = sim_seterr(sim, -RTIT_ERR_INVALID, "%s: entry 0x%" PRIx64
			       " is not in a loaded segment", path, L->entry);
out:
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

/* ------------------------------------------------------------- CPUID */

/*
 * The CPUID a process sees (D88): an Intel family 6 model 0x5E part with
 * what Unicorn 2.0.1's TCG executes: x87, MMX, SSE to SSE4.2, POPCNT,
 * CMPXCHG16B, PCLMULQDQ, LAHF in 64-bit mode; no AVX, no XSAVE (so no
 * OSXSAVE), no leaf-7 features.  Unicorn's own answer for its Skylake
 * model leaves out FPU and MMX (CPUID.01H:EDX 0x07088100), which makes
 * glibc's dynamic loader refuse libc ("CPU ISA level is lower than
 * required"); a program must see a CPU it can run on.
 */
#define LX_CPUID1_EDX 0x078bfbffu	/* FPU..PSE36, CLFSH, MMX, FXSR, SSE, SSE2 */
#define LX_CPUID1_ECX 0x00982203u	/* SSE3 PCLMULQDQ SSSE3 CX16 SSE4.1 SSE4.2 POPCNT */

static void cpuid_leaf(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	static const char brand[48] = "rtitsim x86-64 process CPU (Unicorn 2.0.1)";
	memset(r, 0, 16);
	(void)sub;
	switch (leaf) {
	case 0:
		r[0] = 7;
		memcpy(&r[1], "Genu", 4);	/* EBX EDX ECX: GenuineIntel */
		memcpy(&r[3], "ineI", 4);
		memcpy(&r[2], "ntel", 4);
		break;
	case 1:
		r[0] = 0x000506e3;		/* family 6, model 0x5E, stepping 3 */
		r[1] = 0x00000800;		/* CLFLUSH line 64 bytes */
		r[2] = LX_CPUID1_ECX;
		r[3] = LX_CPUID1_EDX;
		break;
	case 0x80000000:
		r[0] = 0x80000008;
		break;
	case 0x80000001:
		r[2] = 1;			/* LAHF/SAHF in 64-bit mode */
		r[3] = (1u << 11) | (1u << 20) | (1u << 29);	/* SYSCALL, NX, LM */
		break;
	case 0x80000002: case 0x80000003: case 0x80000004:
		memcpy(r, brand + 16 * (leaf - 0x80000002), 16);
		break;
	case 0x80000008:
		r[0] = 0x3030;			/* 48-bit physical and linear */
		break;
	default:
		break;
	}
}

static int on_cpuid(uc_engine *uc, void *opaque)
{
	uint64_t a = 0, c = 0;
	uint32_t r[4];
	uc_reg_read(uc, UC_X86_REG_RAX, &a);
	uc_reg_read(uc, UC_X86_REG_RCX, &c);
	cpuid_leaf((uint32_t)a, (uint32_t)c, r);
	static const int regs[4] = { UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX,
				     UC_X86_REG_RDX };
	for (int i = 0; i < 4; i++) {
		uint64_t v = r[i];
		uc_reg_write(uc, regs[i], &v);
	}
	return 1;	/* answered: Unicorn does not execute it */
}

/* ----------------------------------------------------- the initial stack */

/* Auxiliary vector types (Linux include/uapi/linux/auxvec.h, the ABI). */
enum { AT_NULL_ = 0, AT_PHDR_ = 3, AT_PHENT_ = 4, AT_PHNUM_ = 5, AT_PAGESZ_ = 6,
       AT_BASE_ = 7, AT_FLAGS_ = 8, AT_ENTRY_ = 9, AT_UID_ = 11, AT_EUID_ = 12,
       AT_GID_ = 13, AT_EGID_ = 14, AT_PLATFORM_ = 15, AT_HWCAP_ = 16, AT_CLKTCK_ = 17,
       AT_SECURE_ = 23, AT_RANDOM_ = 25, AT_HWCAP2_ = 26, AT_EXECFN_ = 31 };

#define LX_UID 1000

static bool put(struct rtit_sim *sim, uint64_t at, const void *b, size_t n)
{
	return uc_mem_write(sim->uc, at, b, n) == UC_ERR_OK;
}

/* Copies a string below *sp; its address. */
static uint64_t push_str(struct rtit_sim *sim, uint64_t *sp, const char *s, bool *ok)
{
	size_t n = strlen(s) + 1;
	*sp -= n;
	*ok = *ok && put(sim, *sp, s, n);
	return *sp;
}

/* The System V x86-64 ABI's initial process stack (3.4.1): argc, argv,
 * NULL, envp, NULL, auxv, AT_NULL; the strings above.  Returns RSP. */
static int build_stack(struct rtit_sim *sim, const struct loaded *prog, const struct loaded *in,
		       bool has_interp, uint64_t *rsp)
{
	struct sim_linux *lx = sim->lx;
	const struct rtit_sim_process *p = &lx->p;
	uint64_t sp = RTIT_SIM_PROCESS_STACK_TOP;
	bool ok = true;
	uint64_t execfn = push_str(sim, &sp, lx->exe, &ok);
	uint64_t plat = push_str(sim, &sp, "x86_64", &ok);
	uint8_t rnd[16];
	for (int i = 0; i < 16; i += 8) {
		uint64_t v = lx_rand64(lx);
		memcpy(rnd + i, &v, 8);
	}
	sp -= 16;
	uint64_t random = sp;
	ok = ok && put(sim, sp, rnd, 16);
	int nstr = p->argc + p->envc;
	uint64_t *ptr = calloc((size_t)nstr + 1, sizeof(*ptr));
	if (!ptr)
		return -RTIT_ERR_NOMEM;
	for (int i = 0; i < p->envc; i++)
		ptr[p->argc + i] = push_str(sim, &sp, p->envp[i], &ok);
	for (int i = 0; i < p->argc; i++)
		ptr[i] = push_str(sim, &sp, p->argv[i], &ok);
	/* AT_HWCAP: CPUID.01H:EDX, as the process's CPUID answers it */
	uint64_t hw = LX_CPUID1_EDX;
	uint64_t aux[][2] = {
		{ AT_PHDR_, prog->phdr }, { AT_PHENT_, 56 }, { AT_PHNUM_, prog->phnum },
		{ AT_PAGESZ_, PAGE }, { AT_BASE_, has_interp ? in->bias + in->lo : 0 },
		{ AT_FLAGS_, 0 }, { AT_ENTRY_, prog->entry }, { AT_UID_, LX_UID },
		{ AT_EUID_, LX_UID }, { AT_GID_, LX_UID }, { AT_EGID_, LX_UID },
		{ AT_SECURE_, 0 }, { AT_RANDOM_, random }, { AT_HWCAP_, hw }, { AT_HWCAP2_, 0 },
		{ AT_CLKTCK_, 100 }, { AT_EXECFN_, execfn }, { AT_PLATFORM_, plat },
		{ AT_NULL_, 0 } };
	size_t naux = sizeof(aux) / sizeof(aux[0]);
	size_t words = 1 + (size_t)p->argc + 1 + (size_t)p->envc + 1 + 2 * naux;
	sp = (sp - words * 8) & ~15ull;		/* RSP 16-byte aligned at entry */
	uint64_t w = sp, v;
	v = (uint64_t)p->argc;
	ok = ok && put(sim, w, &v, 8);
	w += 8;
	for (int i = 0; i <= p->argc; i++, w += 8) {
		v = i < p->argc ? ptr[i] : 0;
		ok = ok && put(sim, w, &v, 8);
	}
	for (int i = 0; i <= p->envc; i++, w += 8) {
		v = i < p->envc ? ptr[p->argc + i] : 0;
		ok = ok && put(sim, w, &v, 8);
	}
	ok = ok && put(sim, w, aux, sizeof(aux));
	free(ptr);
	if (!ok || sp < RTIT_SIM_PROCESS_STACK_TOP - RTIT_SIM_PROCESS_STACK_SIZE / 2)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "the arguments and environment do not fit the stack");
	*rsp = sp;
	return 0;
}

/* The kernel text page: the SYSRET that ends every system call. */
static int kernel_page(struct rtit_sim *sim)
{
	static const uint8_t sysretq[] = { 0x48, 0x0f, 0x07 };
	if (uc_mem_map(sim->uc, LX_KERNEL_ENTRY, PAGE, UC_PROT_READ | UC_PROT_EXEC) != UC_ERR_OK ||
	    uc_mem_write(sim->uc, LX_KERNEL_ENTRY, sysretq, sizeof(sysretq)) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "cannot map the kernel entry page");
	struct sim_model *m = &sim->m;
	m->lstar = LX_KERNEL_ENTRY;
	/* STAR as Linux sets it: kernel CS 0x08 (SS 0x10); SYSRET to user
	 * CS 0x23 + 16 = 0x33, SS 0x2b (Vol. 3 5.8.8) */
	m->star = (0x23ull << 48) | (0x08ull << 32);
	/* SYSCALL_MASK: TF DF IF IOPL NT AC (Linux's syscall_init) */
	m->fmask = 0x47700;
	return 0;
}

static int start_registers(struct rtit_sim *sim, uint64_t rsp, uint64_t entry)
{
	static const int zero_regs[] = {
		UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX,
		UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_R8,
		UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12,
		UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15 };
	uint64_t z = 0;
	for (size_t i = 0; i < sizeof(zero_regs) / sizeof(zero_regs[0]); i++)
		uc_reg_write(sim->uc, zero_regs[i], &z);
	sim_reg_set(sim, R_SP, rsp);
	sim_reg_set(sim, R_FLAGS, 0x202);	/* IF, as a Linux process runs */
	sim->entry = entry;
	sim->loaded = true;
	return 0;
}

static int process_paths(struct rtit_sim *sim, const struct rtit_sim_process *p)
{
	struct sim_linux *lx = sim->lx;
	if (!realpath(p->path, lx->exe))
		return sim_seterr(sim, -RTIT_ERR_IO, "%s: %s", p->path, strerror(errno));
	if (!getcwd(lx->cwd, sizeof(lx->cwd)))
		return sim_seterr(sim, -RTIT_ERR_IO, "the working directory: %s", strerror(errno));
	if (p->writable) {
		struct stat st;
		if (!realpath(p->writable, lx->writable) || stat(lx->writable, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			return sim_seterr(sim, -RTIT_ERR_IO, "--writable %s: not a directory",
					  p->writable);
	}
	return 0;
}

int rtit_sim_load_process(struct rtit_sim *sim, const struct rtit_sim_process *p)
{
	if (!sim || !p || !p->path || p->argc < 0 || p->envc < 0)
		return -RTIT_ERR_INVALID;
	if (sim->m.mode != 64 || sim->m.cpl != 3 || sim->lx || sim->loaded)
		return sim_seterr(sim, -RTIT_ERR_INVALID,
				  "a process needs a fresh 64-bit simulator at CPL 3");
	if (elf_version(EV_CURRENT) == EV_NONE)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "libelf: %s", elf_errmsg(-1));
	struct sim_linux *lx = calloc(1, sizeof(*lx));
	if (!lx)
		return -RTIT_ERR_NOMEM;
	sim->lx = lx;
	lx->p = *p;
	if (!lx->p.syscall_cycles)
		lx->p.syscall_cycles = RTIT_SIM_SYSCALL_CYCLES;
	lx->mmap_top = LX_MMAP_TOP;
	lx->rand = p->seed ^ 0x9e3779b97f4a7c15ull;
	if (!lx->rand)
		lx->rand = 1;
	lx->last_nr = -1;
	int r = process_paths(sim, p);
	if (r < 0)
		return r;
	struct loaded prog, in;
	memset(&in, 0, sizeof(in));
	if ((r = load_one(sim, lx->exe, false, &prog)) < 0)
		return r;
	bool has_interp = prog.interp[0] != 0;
	if (has_interp && (r = load_one(sim, prog.interp, true, &in)) < 0)
		return r;
	/* the break follows the program's highest segment */
	lx->brk_start = lx->brk_cur = prog.hi + prog.bias;
	if ((r = kernel_page(sim)) < 0 || (r = lx_fds_init(sim)) < 0)
		return r;
	uc_hook h;
	if (uc_hook_add(sim->uc, &h, UC_HOOK_INSN, (void *)on_cpuid, sim, 1, 0,
			UC_X86_INS_CPUID) != UC_ERR_OK)
		return sim_seterr(sim, -RTIT_ERR_INTERNAL, "cannot hook CPUID");
	uint64_t rsp = 0;
	if ((r = build_stack(sim, &prog, &in, has_interp, &rsp)) < 0)
		return r;
	start_registers(sim, rsp, has_interp ? in.entry : prog.entry);
	sim_tmpl_on_state(sim);
	return 0;
}

int rtit_sim_process_info(const struct rtit_sim *sim, struct rtit_sim_process_info *info)
{
	if (!sim || !info)
		return -RTIT_ERR_INVALID;
	memset(info, 0, sizeof(*info));
	const struct sim_linux *lx = sim->lx;
	if (!lx)
		return -RTIT_ERR_INVALID;
	info->exited = lx->exited;
	info->exit_status = lx->exit_status;
	info->syscalls = lx->syscalls;
	info->syscall_cycles = lx->sys_cycles;
	info->syscall_ns = lx->sys_ns;
	size_t o = 0;
	for (int i = 0; i < lx->nenosys && o < sizeof(info->unsupported); i++) {
		const char *nm = lx_syscall_name(lx->enosys[i].nr);
		char num[24];
		if (!nm) {
			snprintf(num, sizeof(num), "syscall_%d", lx->enosys[i].nr);
			nm = num;
		}
		o += (size_t)snprintf(info->unsupported + o, sizeof(info->unsupported) - o,
				      "%s%s x%" PRIu64, i ? ", " : "", nm, lx->enosys[i].n);
	}
	if (lx->last_nr >= 0) {
		const char *nm = lx_syscall_name(lx->last_nr);
		if (nm)
			snprintf(info->last, sizeof(info->last), "%s", nm);
		else
			snprintf(info->last, sizeof(info->last), "syscall %d", lx->last_nr);
	}
	return 0;
}

void sim_linux_free(struct rtit_sim *sim)
{
	if (!sim->lx)
		return;
	lx_fds_fini(sim->lx);
	free(sim->lx->maps);
	free(sim->lx);
	sim->lx = NULL;
}

/* A budget stop names the last system call: a guest that loops forever
 * is found by what it did last. */
void sim_linux_budget_note(struct rtit_sim *sim)
{
	struct rtit_sim_process_info info;
	size_t n = strlen(sim->st.msg);
	rtit_sim_process_info(sim, &info);
	snprintf(sim->st.msg + n, sizeof(sim->st.msg) - n, "; the last system call was %s%s",
		 info.last[0] ? info.last : "none", info.last[0] ? "" : " yet");
	if (info.last[0]) {
		n = strlen(sim->st.msg);
		snprintf(sim->st.msg + n, sizeof(sim->st.msg) - n,
			 " after %" PRIu64 " instructions", sim->lx->last_at);
	}
}

/* The signal Linux sends for exception @vec (arch/x86/kernel/traps.c). */
const char *sim_linux_signal(int vec)
{
	switch (vec) {
	case 0: case 16: case 19: return "SIGFPE";
	case 1: case 3: return "SIGTRAP";
	case 6: return "SIGILL";
	case 17: return "SIGBUS";
	default: return "SIGSEGV";
	}
}
