/*
 * perfdata.c - an Intel PT run as a perf.data file and the ELF image it
 * names (rtit/perfdata.h), for Linux perf's Intel PT decoder (perf 6.1).
 *
 * The layouts follow Linux's tools/perf: util/header.h (struct
 * perf_file_header, perf_file_attr), include/uapi/linux/perf_event.h
 * (perf_event_attr, PERF_RECORD_COMM/MMAP2), lib/perf/include/perf/event.h
 * (perf_record_auxtrace_info, perf_record_auxtrace; the user record types
 * from PERF_RECORD_USER_TYPE_START = 64), util/intel-pt.h (the private
 * array of AUXTRACE_INFO) and arch/x86/util/intel-pt.c intel_pt_info_fill
 * (what `perf record` puts in it).  No perf source is used: the structures
 * are written here field by field.
 *
 * Time: the attr has no PERF_SAMPLE_TIME and Cap Time Zero is 0, so perf
 * decodes "timelessly" (intel_pt_timeless_decoding): the whole trace of
 * the thread once, at the end; timing packets are still parsed (MTC with
 * the TSC:CTC ratio, CYC).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtit/msr_pt.h"
#include "rtit/perfdata.h"

/* The thread the trace belongs to (any pid works: perf finds the thread
 * by the AUXTRACE record's tid). */
#define PID 4242

/* tools/perf/util/header.h: "PERFILE2", the file format version 2. */
#define PERF_MAGIC2 0x32454c4946524550ull
/* lib/perf/include/perf/event.h, enum perf_user_event_type */
#define PERF_RECORD_AUXTRACE_INFO 70
#define PERF_RECORD_AUXTRACE 71
#define PERF_RECORD_FINISHED_ROUND 68
/* tools/perf/util/auxtrace.h, enum auxtrace_type */
#define PERF_AUXTRACE_INTEL_PT 1
/* The PMU type perf record would take from
 * /sys/bus/event_source/devices/intel_pt/type: any dynamic type past the
 * fixed ones (PERF_TYPE_MAX); perf matches the attr by this number. */
#define INTEL_PT_PMU_TYPE 8

/* tools/perf/util/intel-pt.h: the private array of AUXTRACE_INFO. */
enum {
	PRIV_PMU_TYPE,
	PRIV_TIME_SHIFT,
	PRIV_TIME_MULT,
	PRIV_TIME_ZERO,
	PRIV_CAP_USER_TIME_ZERO,
	PRIV_TSC_BIT,
	PRIV_NORETCOMP_BIT,
	PRIV_HAVE_SCHED_SWITCH,
	PRIV_SNAPSHOT_MODE,
	PRIV_PER_CPU_MMAPS,
	PRIV_MTC_BIT,
	PRIV_MTC_FREQ_BITS,
	PRIV_TSC_CTC_N,
	PRIV_TSC_CTC_D,
	PRIV_CYC_BIT,
	PRIV_MAX_NONTURBO_RATIO,
	PRIV_FILTER_STR_LEN,
	PRIV_MAX,
};

/*
 * The intel_pt PMU's config bits (/sys/bus/event_source/devices/intel_pt/
 * format/, arch/x86/events/intel/pt.c) sit where IA32_RTIT_CTL has the
 * same enables (SDM Vol. 3C 33.2.7.2): pt=config:0 (TraceEn), cyc=1,
 * pwr_evt=4, fup_on_ptw=5, mtc=9, tsc=10, noretcomp=11, ptw=12,
 * branch=13, mtc_period=14-17, cyc_thresh=19-22, psb_period=24-27,
 * event=31, notnt=55.  OS and User (bits 2/3) are the attr's
 * exclude_kernel/exclude_user instead; the filters (ADDRn_CFG, CR3) are
 * not config bits.
 */
#define CTL_TRACEEN (1ull << 0)
#define CTL_CYCEN (1ull << 1)
#define CTL_OS (1ull << 2)
#define CTL_USER (1ull << 3)
#define CTL_MTCEN (1ull << 9)
#define CTL_TSCEN (1ull << 10)
#define CTL_DISRETC (1ull << 11)
#define CTL_MTCFREQ (0xfull << 14)
#define CTL_CONFIG_BITS (CTL_TRACEEN | CTL_CYCEN | (3ull << 4) | (0x1full << 9) | \
			 CTL_MTCFREQ | (0xfull << 19) | (0xfull << 24) | (1ull << 31) | \
			 (1ull << 55))

struct buf {
	uint8_t *p;
	size_t n, cap;
	bool nomem;		/* an allocation failed: everything after is dropped */
};

static void put(struct buf *b, const void *src, size_t n)
{
	if (b->nomem)
		return;
	if (b->n + n > b->cap) {
		size_t cap = (b->n + n) * 2 + 4096;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->nomem = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	if (src)
		memcpy(b->p + b->n, src, n);
	else
		memset(b->p + b->n, 0, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put16(struct buf *b, uint16_t v) { put(b, &v, 2); }

static void pad_to(struct buf *b, size_t align)
{
	put(b, NULL, (align - b->n % align) % align);
}

/* A record's perf_event_header: type, misc, size. */
static void put_header(struct buf *b, uint32_t type, uint16_t misc, uint16_t size)
{
	put32(b, type);
	put16(b, misc);
	put16(b, size);
}

/* A NUL-terminated string padded to 8 bytes, as perf writes comm and
 * filename fields. */
static size_t str8_size(const char *s) { return (strlen(s) + 1 + 7) & ~(size_t)7; }

static void put_str8(struct buf *b, const char *s)
{
	size_t n = str8_size(s);
	put(b, s, strlen(s));
	put(b, NULL, n - strlen(s));
}

/* The sample_id trailer of a non-sample record for the attr's sample_type
 * PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER (struct sample_id in
 * perf_event.h): pid, tid, then the event's id. */
#define SAMPLE_ID_SIZE 16
#define EVENT_ID 1
#define PEBS_EVENT_ID 2

static void put_sample_id(struct buf *b)
{
	put32(b, PID);
	put32(b, PID);
	put64(b, EVENT_ID);
}

struct range {
	uint64_t addr, size, off;	/* off: in image.elf */
};

/* The ELF header and the program headers (one PT_LOAD per range) of
 * class BITS at the start of b, for write_elf. */
#define ELF_HEADERS(BITS, MACHINE)                                                          \
	do {                                                                                \
		Elf##BITS##_Ehdr *e = (Elf##BITS##_Ehdr *)b->p;                             \
		memcpy(e->e_ident, ident, EI_NIDENT);                                       \
		e->e_type = ET_EXEC, e->e_machine = MACHINE, e->e_version = EV_CURRENT;     \
		e->e_entry = (Elf##BITS##_Addr)entry, e->e_phoff = (Elf##BITS##_Off)ehsz;   \
		e->e_shoff = (Elf##BITS##_Off)sh_off;                                       \
		e->e_ehsize = (Elf##BITS##_Half)ehsz, e->e_phentsize = (Elf##BITS##_Half)phsz; \
		e->e_phnum = (Elf##BITS##_Half)nr, e->e_shentsize = (Elf##BITS##_Half)shsz; \
		e->e_shnum = (Elf##BITS##_Half)nsh, e->e_shstrndx = (Elf##BITS##_Half)shstrndx; \
		for (size_t i = 0; i < nr; i++) {                                           \
			Elf##BITS##_Phdr *p = (Elf##BITS##_Phdr *)(b->p + ehsz + i * phsz); \
			p->p_type = PT_LOAD, p->p_flags = PF_R | PF_W | PF_X;               \
			p->p_offset = (Elf##BITS##_Off)r[i].off;                            \
			p->p_vaddr = p->p_paddr = (Elf##BITS##_Addr)r[i].addr;              \
			p->p_filesz = p->p_memsz = (Elf##BITS##_Word)r[i].size;             \
			p->p_align = 0x1000;                                                \
		}                                                                           \
	} while (0)

/*
 * image.elf: the ELF header, one PT_LOAD per range, the ranges' bytes at
 * page-aligned offsets (so an MMAP2's pgoff is a page), then the section
 * headers (one SHT_PROGBITS per range, .symtab, .strtab, .shstrtab) and a
 * FUNC symbol at each range's start.  elf64 chooses the class.
 */
static void write_elf(struct buf *b, struct range *r, size_t nr, const uint8_t *const *bytes,
		      bool elf64, uint64_t entry)
{
	size_t ehsz = elf64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsz = elf64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t shsz = elf64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size_t symsz = elf64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	put(b, NULL, ehsz + nr * phsz);
	for (size_t i = 0; i < nr; i++) {
		pad_to(b, 0x1000);
		r[i].off = b->n;
		put(b, bytes[i], r[i].size);
	}
	/* .shstrtab: "", ".shstrtab", ".symtab", ".strtab", ".text" (every
	 * range section shares the name); .strtab: "", "range_N"... */
	static const char shstr[] = "\0.shstrtab\0.symtab\0.strtab\0.text";
	enum { N_SHSTRTAB = 1, N_SYMTAB = 11, N_STRTAB = 19, N_TEXT = 27 };
	size_t shstr_off = b->n;
	put(b, shstr, sizeof(shstr));
	size_t str_off = b->n;
	put(b, NULL, 1);
	for (size_t i = 0; i < nr; i++) {
		char name[32];
		snprintf(name, sizeof(name), "range_%zu", i);
		put(b, name, strlen(name) + 1);
	}
	size_t str_len = b->n - str_off;
	pad_to(b, 8);
	size_t sym_off = b->n;
	size_t name_at = 1;
	put(b, NULL, symsz);	/* symbol 0 */
	for (size_t i = 0; i < nr; i++) {
		if (elf64) {
			Elf64_Sym s = {.st_name = (Elf64_Word)name_at,
				       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = (Elf64_Section)(1 + i),
				       .st_value = r[i].addr, .st_size = r[i].size};
			put(b, &s, sizeof(s));
		} else {
			Elf32_Sym s = {.st_name = (Elf32_Word)name_at,
				       .st_info = ELF32_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = (Elf32_Section)(1 + i),
				       .st_value = (Elf32_Addr)r[i].addr, .st_size = (Elf32_Word)r[i].size};
			put(b, &s, sizeof(s));
		}
		char name[32];
		name_at += (size_t)snprintf(name, sizeof(name), "range_%zu", i) + 1;
	}
	size_t sym_len = b->n - sym_off;
	pad_to(b, 8);
	size_t sh_off = b->n;
	size_t nsh = 1 + nr + 3, shstrndx = nr + 3;
	/* section headers: null, ranges, .symtab, .strtab, .shstrtab */
	for (size_t i = 0; i < nsh; i++) {
		uint32_t name = 0, type = SHT_NULL, link = 0, info = 0;
		uint64_t flags = 0, addr = 0, off = 0, size = 0, align = 0, entsize = 0;
		if (i >= 1 && i <= nr) {
			name = N_TEXT, type = SHT_PROGBITS, flags = SHF_ALLOC | SHF_EXECINSTR;
			addr = r[i - 1].addr, off = r[i - 1].off, size = r[i - 1].size, align = 16;
		} else if (i == nr + 1) {
			name = N_SYMTAB, type = SHT_SYMTAB, off = sym_off, size = sym_len;
			link = (uint32_t)(nr + 2), info = 1, align = 8, entsize = symsz;
		} else if (i == nr + 2) {
			name = N_STRTAB, type = SHT_STRTAB, off = str_off, size = str_len, align = 1;
		} else if (i == nr + 3) {
			name = N_SHSTRTAB, type = SHT_STRTAB, off = shstr_off;
			size = sizeof(shstr), align = 1;
		}
		if (elf64) {
			Elf64_Shdr s = {name, type, flags, addr, off, size, link, info, align, entsize};
			put(b, &s, sizeof(s));
		} else {
			Elf32_Shdr s = {name, type, (Elf32_Word)flags, (Elf32_Addr)addr, (Elf32_Off)off,
					(Elf32_Word)size, link, info, (Elf32_Word)align, (Elf32_Word)entsize};
			put(b, &s, sizeof(s));
		}
	}
	/* ELF header and program headers at the start */
	uint8_t ident[EI_NIDENT] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3,
				    elf64 ? ELFCLASS64 : ELFCLASS32, ELFDATA2LSB, EV_CURRENT};
	if (b->nomem)
		return;
	if (elf64)
		ELF_HEADERS(64, EM_X86_64);
	else
		ELF_HEADERS(32, EM_386);
}

/*
 * The address filters as `perf record --filter` gives them to the
 * kernel and writes them into AUXTRACE_INFO: "filter OFF/SIZE@FILE" for
 * an ADDRn_CFG of 1 (FilterEn inside), "stop OFF/SIZE@FILE" for 2
 * (TraceStop), OFF a file offset in image.elf, joined by ",".  perf needs
 * them to know that a direct branch into such a range is what a TIP.PGD
 * ends (intel_pt_pgd_ip): it does not compare the TIP.PGD's IP with the
 * branch's target.  ADDRn_A/B: as the run started (SDM 33.2.8.5); CFG:
 * IA32_RTIT_CTL bits 35:32 + 4n.  -1 when a range is not in one region.
 */
static int addr_filter(const uint64_t *a, const uint64_t *b, uint64_t ctl, const struct range *r,
		       size_t nr, const char *elfpath, char *out, size_t size)
{
	size_t len = 0;
	out[0] = 0;
	for (unsigned n = 0; n < 4; n++) {
		uint64_t cfg = (ctl & RTIT_PT_CTL_ADDR_CFG_MASK(n)) >> RTIT_PT_CTL_ADDR_CFG_SHIFT(n);
		if (cfg != RTIT_PT_ADDR_FILTER && cfg != RTIT_PT_ADDR_STOP)
			continue;
		size_t i = 0;
		while (i < nr && !(a[n] >= r[i].addr && b[n] < r[i].addr + r[i].size && a[n] <= b[n]))
			i++;
		if (i == nr)
			return -1;
		len += (size_t)snprintf(out + len, size - len, "%s%s 0x%" PRIx64 "/0x%" PRIx64 "@%s",
					len ? "," : "", cfg == RTIT_PT_ADDR_FILTER ? "filter" : "stop",
					r[i].off + (a[n] - r[i].addr), b[n] - a[n] + 1, elfpath);
		if (len >= size)
			return -1;
	}
	return 0;
}

/* perf_event_attr for the intel_pt event, as `perf record -e
 * intel_pt//` would write it for a per-thread recording. */
static struct perf_event_attr pt_attr(uint64_t ctl)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = INTEL_PT_PMU_TYPE;
	a.size = PERF_ATTR_SIZE_VER7;
	a.config = (ctl & CTL_CONFIG_BITS) | CTL_TRACEEN;
	a.sample_period = 1;
	/* no PERF_SAMPLE_TIME: timeless decoding (see the top) */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_IDENTIFIER;
	a.exclude_kernel = !(ctl & CTL_OS);
	a.exclude_user = !(ctl & CTL_USER);
	/* perf's Intel PT support needs ordered events, and perf orders only
	 * with sample_id_all: COMM and MMAP2 then end with the sample_id
	 * fields of sample_type (pid, tid; identifier). */
	a.sample_id_all = 1;
	a.disabled = 1;
	a.enable_on_exec = 1;
	return a;
}

/* The PEBS event whose records go to the trace, as `perf record -e
 * '{intel_pt//,instructions/aux-output/ppp}'` writes it (perf-intel-pt(1),
 * "PEBS via Intel PT"): aux_output set, so perf synthesizes its samples
 * from the BBP/BIP/BEP blocks (--itrace=o, intel_pt_setup_pebs_events);
 * IA32_PMC0 counts retired instructions here (docs/sim.md). */
static struct perf_event_attr pebs_attr(const struct perf_event_attr *pt)
{
	struct perf_event_attr a = *pt;
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.precise_ip = 3;
	a.aux_output = 1;
	return a;
}

static int fail(char *msg, size_t msgsz, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *msg, size_t msgsz, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, msgsz, fmt, ap);
	va_end(ap);
	return err;
}

/* Writes @b to @path whole: to PATH.tmp, then renamed; nothing is left
 * behind on a failure. */
static int spit(const char *path, const struct buf *b, char *msg, size_t msgsz)
{
	char tmp[4200];
	if (b->nomem)
		return fail(msg, msgsz, -RTIT_ERR_NOMEM, "%s: out of memory", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return fail(msg, msgsz, -RTIT_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
	bool ok = fwrite(b->p, 1, b->n, f) == b->n;
	int e = errno;
	if (fclose(f))
		ok = false, e = errno;
	if (!ok || rename(tmp, path)) {
		if (ok)
			e = errno;
		unlink(tmp);
		return fail(msg, msgsz, -RTIT_ERR_IO, "%s: cannot write: %s", path, strerror(e));
	}
	return 0;
}

/* AUXTRACE_INFO (perf_record_auxtrace_info: header, u32 type, u32
 * reserved, u64 priv[]), the private array as intel_pt_info_fill fills
 * it, the filter string, then caps/event_trace. */
static void put_auxtrace_info(struct buf *d, const struct rtit_sideband *sb, const char *filter)
{
	uint64_t priv[PRIV_MAX] = {0};
	priv[PRIV_PMU_TYPE] = INTEL_PT_PMU_TYPE;
	priv[PRIV_TIME_SHIFT] = 0;
	priv[PRIV_TIME_MULT] = 0;	/* no perf clock to convert TSC to */
	priv[PRIV_TIME_ZERO] = 0;
	priv[PRIV_CAP_USER_TIME_ZERO] = 0;
	priv[PRIV_TSC_BIT] = CTL_TSCEN;
	priv[PRIV_NORETCOMP_BIT] = CTL_DISRETC;
	priv[PRIV_HAVE_SCHED_SWITCH] = 0;
	priv[PRIV_SNAPSHOT_MODE] = 0;
	priv[PRIV_PER_CPU_MMAPS] = 0;
	priv[PRIV_MTC_BIT] = CTL_MTCEN;
	priv[PRIV_MTC_FREQ_BITS] = CTL_MTCFREQ;
	/* CPUID 15H: TSC = ART * EBX / EAX; the sideband's art_num/art_den */
	priv[PRIV_TSC_CTC_N] = sb->art_num ? sb->art_num : 1;
	priv[PRIV_TSC_CTC_D] = sb->art_den ? sb->art_den : 1;
	priv[PRIV_CYC_BIT] = CTL_CYCEN;
	priv[PRIV_MAX_NONTURBO_RATIO] = sb->cbr;
	/* the string NUL-terminated, padded to 8 bytes (roundup(len + 1, 8)) */
	size_t flen = strlen(filter), fpad = flen ? (flen + 1 + 7) & ~(size_t)7 : 0;
	priv[PRIV_FILTER_STR_LEN] = flen;
	/* After the fixed array and the filter string: the intel_pt PMU's
	 * caps/event_trace (perf 5.18 on); perf synthesizes its IF change
	 * samples only with it.  EventEn set says the CPU has it. */
	uint64_t cap_event_trace = sb->ia32_rtit_ctl >> 31 & 1;
	put_header(d, PERF_RECORD_AUXTRACE_INFO, 0, (uint16_t)(8 + 8 + sizeof(priv) + fpad + 8));
	put32(d, PERF_AUXTRACE_INTEL_PT);
	put32(d, 0);
	put(d, priv, sizeof(priv));
	put(d, filter, flen);
	put(d, NULL, fpad - flen);
	put64(d, cap_event_trace);
}

/* MMAP2 per region: pid, tid, start, len, pgoff, maj, min, ino,
 * ino_generation, prot, flags, filename.  User-space maps (the kernel's
 * maps need a kernel image perf recognises: checked by the caller). */
static void put_mmaps(struct buf *d, const struct range *r, size_t nr, const char *elfpath)
{
	for (size_t i = 0; i < nr; i++) {
		put_header(d, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
			   (uint16_t)(8 + 8 + 24 + 8 + 16 + 8 + str8_size(elfpath) + SAMPLE_ID_SIZE));
		put32(d, PID);
		put32(d, PID);
		put64(d, r[i].addr);
		put64(d, r[i].size);
		put64(d, r[i].off);
		put32(d, 0);	/* maj */
		put32(d, 0);	/* min */
		put64(d, 0);	/* ino */
		put64(d, 0);	/* ino_generation */
		put32(d, 7);	/* PROT_READ | PROT_WRITE | PROT_EXEC */
		put32(d, 2);	/* MAP_PRIVATE */
		put_str8(d, elfpath);
		put_sample_id(d);
	}
}

/* A process run (the sideband's map lines): one MMAP2 per executable
 * file mapping, naming the file itself at its offset, as `perf record`
 * sees the program, its interpreter and its libraries: perf reads their
 * code and symbols from the files. */
static void put_file_mmaps(struct buf *d, const struct rtit_sideband *sb)
{
	for (size_t i = 0; i < sb->nmmaps; i++) {
		const struct rtit_sideband_mmap *m = &sb->mmaps[i];
		if (!(m->prot & 4))
			continue;
		/* a bundle's copy (relative to the sideband, D132): perf opens
		 * the file by the name, wherever it runs */
		char rel[1500], *abs = NULL;
		if (m->path[0] != '/' && rtit_sideband_mmap_path(sb, i, rel, sizeof(rel)) == 0)
			abs = realpath(rel, NULL);
		const char *name = abs ? abs : m->path;
		put_header(d, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
			   (uint16_t)(8 + 8 + 24 + 8 + 16 + 8 + str8_size(name) + SAMPLE_ID_SIZE));
		put32(d, PID);
		put32(d, PID);
		put64(d, m->addr);
		put64(d, m->size);
		put64(d, m->offset);
		put32(d, 0);	/* maj */
		put32(d, 0);	/* min */
		put64(d, 0);	/* ino */
		put64(d, 0);	/* ino_generation */
		put32(d, m->prot & 7);
		put32(d, 2);	/* MAP_PRIVATE */
		put_str8(d, name);
		put_sample_id(d);
		free(abs);
	}
}

/* The data section: AUXTRACE_INFO, COMM, the MMAP2s, AUXTRACE with the
 * trace, FINISHED_ROUND. */
static void put_records(struct buf *d, const struct rtit_perfdata_in *in, const struct range *r,
			size_t nr, const char *elfpath, const char *filter)
{
	put_auxtrace_info(d, in->sb, filter);

	/* COMM: pid, tid, comm */
	static const char comm[] = "rtitsim";
	put_header(d, PERF_RECORD_COMM, 0, (uint16_t)(8 + 8 + str8_size(comm) + SAMPLE_ID_SIZE));
	put32(d, PID);
	put32(d, PID);
	put_str8(d, comm);
	put_sample_id(d);

	if (in->sb->nmmaps)
		put_file_mmaps(d, in->sb);
	else
		put_mmaps(d, r, nr, elfpath);

	/* AUXTRACE: size, offset, reference, idx, tid, cpu, reserved, then
	 * the data, padded to 8 bytes as perf record pads it (the size
	 * counts the padding; zero bytes are PAD packets). */
	size_t padded = (in->trace_len + 7) & ~(size_t)7;
	put_header(d, PERF_RECORD_AUXTRACE, 0, 48);
	put64(d, padded);
	put64(d, 0);
	put64(d, 0);
	put32(d, 0);		/* idx: the only mmap */
	put32(d, PID);
	put32(d, UINT32_MAX);	/* cpu -1: per-thread */
	put32(d, 0);
	put(d, in->trace, in->trace_len);
	put(d, NULL, padded - in->trace_len);

	put_header(d, PERF_RECORD_FINISHED_ROUND, 0, 8);
}

/* The file: header, the ids, attrs (perf_file_attr: the attr, then its
 * ids as a section), the data section @d; no feature sections. */
static void put_file(struct buf *f, uint64_t ctl, const struct buf *d)
{
	struct perf_event_attr attrs[2];
	attrs[0] = pt_attr(ctl);
	attrs[1] = pebs_attr(&attrs[0]);
	const uint64_t hdr_size = 104, attr_size = PERF_ATTR_SIZE_VER7 + 16;
	uint64_t ids_off = hdr_size, attrs_off = ids_off + 2 * 8;
	uint64_t data_off = attrs_off + 2 * attr_size;
	put64(f, PERF_MAGIC2);
	put64(f, hdr_size);
	put64(f, attr_size);
	put64(f, attrs_off);	/* attrs */
	put64(f, 2 * attr_size);
	put64(f, data_off);	/* data */
	put64(f, d->n);
	put64(f, 0);		/* event_types (unused) */
	put64(f, 0);
	put(f, NULL, 32);	/* adds_features: none */
	put64(f, EVENT_ID);	/* each event's one id */
	put64(f, PEBS_EVENT_ID);
	for (int i = 0; i < 2; i++) {
		put(f, &attrs[i], PERF_ATTR_SIZE_VER7);
		put64(f, ids_off + 8 * (uint64_t)i);
		put64(f, 8);
	}
	put(f, d->p, d->n);
}

/* The image's regions as ranges (malloc'd, *nr of them), checked: user
 * space only. */
static int image_ranges(const struct rtit_image *img, struct range **rp, const uint8_t ***bp,
			size_t *nr, char *msg, size_t msgsz)
{
	size_t n = rtit_image_regions(img, NULL);
	if (!n)
		return fail(msg, msgsz, -RTIT_ERR_INVALID, "the image is empty");
	struct range *r = calloc(n, sizeof(*r));
	const uint8_t **bytes = calloc(n, sizeof(*bytes));
	if (!r || !bytes) {
		free(r);
		free(bytes);
		return fail(msg, msgsz, -RTIT_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		size_t len;
		rtit_image_region(img, i, &r[i].addr, &bytes[i], &len);
		r[i].size = len;
		if (r[i].addr >> 63) {
			uint64_t at = r[i].addr;
			free(r);
			free(bytes);
			return fail(msg, msgsz, -RTIT_ERR_INVALID,
				    "the image has code at 0x%" PRIx64 ", a kernel address; perf.data"
				    " gets only user maps", at);
		}
	}
	*rp = r;
	*bp = bytes;
	*nr = n;
	return 0;
}

int rtit_perfdata_write(const struct rtit_perfdata_in *in, const char *dir, char *msg,
			size_t msgsz)
{
	char elfpath[4096], path[4096], filter[1024];
	struct range *r = NULL;
	const uint8_t **bytes = NULL;
	size_t nr = 0;
	int ret;

	if (!in->sb || in->sb->dialect != RTIT_DIALECT_PT || !in->sb->has_ia32_rtit_ctl)
		return fail(msg, msgsz, -RTIT_ERR_INVALID,
			    "not an Intel PT run: the sideband gives no ia32_rtit_ctl");
	if ((ret = image_ranges(in->img, &r, &bytes, &nr, msg, msgsz)) < 0)
		return ret;
	char *abs = realpath(dir, NULL);
	if (!abs) {
		ret = fail(msg, msgsz, -RTIT_ERR_IO, "%s: %s", dir, strerror(errno));
		goto out;
	}
	snprintf(elfpath, sizeof(elfpath), "%s/image.elf", abs);
	free(abs);
	/* image.elf's layout first: the filter string names its offsets */
	struct buf elf = {0}, d = {0}, f = {0};
	write_elf(&elf, r, nr, bytes, in->sb->mode != 32, r[0].addr);
	if (addr_filter(in->addr_a, in->addr_b, in->sb->ia32_rtit_ctl, r, nr, elfpath, filter,
			sizeof(filter)) < 0) {
		ret = fail(msg, msgsz, -RTIT_ERR_INVALID,
			   "an IA32_RTIT_ADDRn range that IA32_RTIT_CTL uses is not inside one region"
			   " of the image");
		goto free_bufs;
	}
	put_records(&d, in, r, nr, elfpath, filter);
	put_file(&f, in->sb->ia32_rtit_ctl, &d);
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	if (d.nomem)
		f.nomem = true;
	if ((ret = spit(elfpath, &elf, msg, msgsz)) == 0 &&
	    (ret = spit(path, &f, msg, msgsz)) < 0)
		unlink(elfpath);
free_bufs:
	free(elf.p);
	free(d.p);
	free(f.p);
out:
	free(r);
	free(bytes);
	return ret;
}
