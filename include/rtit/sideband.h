/*
 * sideband.h - the sideband file: what a decoder needs besides the trace
 * (the dialect, the trace configuration the stream does not state, where
 * the run stopped) and what the run produced (sizes, digests).  One module
 * writes it (`rtitsim run`) and reads it (`rtitsim decode`, the tests, a
 * library user); docs/formats.md specifies it.  A file format, like the
 * flow files: the isa/record layer.  rtit_flow_cfg_from_sideband()
 * (rtit/flow.h) turns it into a flow decoder's configuration.
 *
 * Format: UTF-8 text, one "KEY VALUE" line each (VALUE is the rest of the
 * line), the first line exactly RTIT_SIDEBAND_HEADER.  `param` lines are
 * "param KEY = VALUE" (the run's encoder parameters).  The format version
 * is the writer's `rtitsim_version`; a reader ignores keys it does not
 * know (later versions only add keys) and rejects a known key whose value
 * does not parse.
 */
#ifndef RTIT_SIDEBAND_H
#define RTIT_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rtit/error.h"
#include "rtit/packet.h"	/* enum rtit_dialect */

#define RTIT_SIDEBAND_HEADER "# rtitsim sideband: what a decoder needs besides the trace"
#define RTIT_SIDEBAND_MAX_PARAMS 64
#define RTIT_SIDEBAND_NERRATA 9	/* RTIT errata E1..E8 by number */
#define RTIT_SIDEBAND_MAX_MAPS 16
#define RTIT_SIDEBAND_MAX_HANDLERS 64
#define RTIT_SIDEBAND_MAX_MSRS 32

/* A file mapping of a process run ("mmap" lines): the code a decoder
 * needs is the file's bytes [offset, offset + size) at addr.  As many as
 * the run made (a growable array: rtit_sideband_add_mmap; D133). */
struct rtit_sideband_mmap {
	uint64_t addr, size, offset;
	unsigned prot;		/* 1 read, 2 write, 4 execute */
	uint64_t at;		/* instructions retired when it was made */
	char build_id[41];	/* hex, "" none */
	char path[384];		/* absolute, or relative to the sideband's
				 * directory (a bundle's copy: D132) */
};

struct rtit_sideband_param {
	char key[64];
	char value[192];
};

/* A program image file (`map` lines): an ELF loaded at its p_vaddr + addr
 * (the bias), or a raw file's bytes at addr.  The file is relative to the
 * sideband's directory unless absolute (a bundle: docs/formats.md). */
struct rtit_sideband_map {
	char file[512];
	uint64_t addr;
	bool elf;
};

/* A trace MSR as it was when tracing was first enabled (`msr` lines). */
struct rtit_sideband_msr {
	uint32_t msr;
	uint64_t value;
};

struct rtit_sideband {
	char version[32];	/* rtitsim_version: the writer's version */
	char scenario[1024];	/* the scenario file, "<program>" for a program */
	char name[128];
	char image[1024];	/* a program run: its path (absolute) */
	int dialect;		/* RTIT_DIALECT_RTIT or _PT; -1 not given */
	char cpu[64];
	int mode;		/* 64, 32; 0 not given */
	/* RTIT: Cycle_Acc, Cmprs_Ret, MTC_Range and RTIT_CTL at the first
	 * enable (-1: not given) */
	int cycle_acc, cmprs_ret, mtc_range;
	bool has_rtit_ctl;
	uint64_t rtit_ctl;
	/* Intel PT: IA32_RTIT_CTL at the first enable and the fields a
	 * decoder needs from it and from CPUID (SDM 33.2.7.2, 33.3.6-33.3.8,
	 * CPUID.15H) */
	bool has_ia32_rtit_ctl;
	uint64_t ia32_rtit_ctl;
	int ret_compression;	/* -1 not given */
	unsigned mtc_freq, cyc_thresh, art_num, art_den, cbr;
	struct rtit_sideband_param params[RTIT_SIDEBAND_MAX_PARAMS];
	size_t nparams;
	/* What the run produced. */
	uint64_t trace_bytes, flow_records, instructions, events, packets, psbs;
	int64_t overflows;	/* -1 not given */
	char trace_xxh3[17], flow_xxh3[17];	/* canonical (big-endian) hex */
	char stop[256];		/* why the run stopped, one line */
	/* From stop: the end address ("reached end address A") or the HLT it
	 * halted at ("halted at A", end_after: the HLT retired) */
	bool has_end, end_after;
	uint64_t end_ip;
	/* Intel PT: the published errata the encoder reproduced (key
	 * pt_errata, RTIT_PT_ERRATUM bits of rtit/pt_errata.h; written when
	 * not 0), and then IA32_RTIT_ADDRn_A/B (the filter ranges, which the
	 * SKL014 workaround needs: SDM Table 33-6, docs/decisions.md D105) */
	unsigned pt_errata;
	uint64_t addr_a[4], addr_b[4];
	/* RTIT: how often each erratum's behaviour fired (E1..E8) */
	uint64_t errata_fired[RTIT_SIDEBAND_NERRATA];
	/* A process run (docs/linux.md): its file mappings in order (a
	 * growable array, freed by rtit_sideband_fini), how many there were
	 * in all (an older writer's list may be incomplete: more than
	 * nmmaps), the exit status (-1 none), system calls. */
	struct rtit_sideband_mmap *mmaps;
	size_t nmmaps, mmaps_cap;
	uint64_t mmaps_total;
	int exit_status;
	uint64_t syscalls;
	/* The program image (`map`), the interrupt/exception handlers the
	 * decoder binds events to (`handler VECTOR IP`), whether RTIT_CTL is
	 * written from outside the program (`external_ctl`), and every trace
	 * MSR value at the first enable (`msr`): issue 19's bundles. */
	struct rtit_sideband_map maps[RTIT_SIDEBAND_MAX_MAPS];
	size_t nmaps;
	struct { unsigned vector; uint64_t ip; } handlers[RTIT_SIDEBAND_MAX_HANDLERS];
	size_t nhandlers;
	bool external_ctl;
	/* Whether the trace control MSR (IA32_RTIT_CTL, RTIT_CTL) held the
	 * same value (the msr line's) every time tracing was enabled, so its
	 * packet enables hold for the whole trace (`ctl_fixed`): 1, 0, or
	 * -1 not given (docs/decisions.md D137) */
	int ctl_fixed;
	struct rtit_sideband_msr msrs[RTIT_SIDEBAND_MAX_MSRS];
	size_t nmsrs;
	/* rtit_sideband_read: the file it was read from (relative `mmap`
	 * and `map` paths are relative to its directory); "" otherwise */
	char source[1024];
};

/* Sets @sb's stop line and, from it, where the run ended (has_end,
 * end_ip, end_after), as reading a `stop` line does. */
void rtit_sideband_set_stop(struct rtit_sideband *sb, const char *stop);

/* Empties @sb: nothing given (the -1s above).  @sb holds no mmap array
 * (a new struct, or one rtit_sideband_fini finished). */
void rtit_sideband_init(struct rtit_sideband *sb);

/* Frees what @sb holds (its mmap array) and empties it as
 * rtit_sideband_init does.  Safe on an initialised, empty @sb. */
void rtit_sideband_fini(struct rtit_sideband *sb);

/* Appends a copy of @m to @sb's mappings, growing the array (doubling).
 * Returns 0 or -RTIT_ERR_NOMEM. */
int rtit_sideband_add_mmap(struct rtit_sideband *sb, const struct rtit_sideband_mmap *m);

/* The path of mapping @i's file as a caller opens it: absolute, or
 * relative to the directory of @sb->source (the sideband it was read
 * from; as given when @sb was not read from a file).  Returns 0, or
 * -RTIT_ERR_NOSPACE when it does not fit @cap. */
int rtit_sideband_mmap_path(const struct rtit_sideband *sb, size_t i, char *out, size_t cap);

/*
 * Reads the sideband at @path into @sb (initialised here: @sb must hold
 * no mmap array, see rtit_sideband_init; free with rtit_sideband_fini).
 * Returns 0, -RTIT_ERR_IO (cannot read it), -RTIT_ERR_INVALID (not a
 * sideband: no header line; a known key with a bad value; more than
 * RTIT_SIDEBAND_MAX_PARAMS params), -RTIT_ERR_NOMEM, with one line in
 * @err ("PATH:LINE: what").  On failure @sb holds nothing to free.
 */
int rtit_sideband_read(const char *path, struct rtit_sideband *sb, char *err,
		       size_t errsz);

/* Writes @sb in the format above.  Returns 0 or -RTIT_ERR_IO. */
int rtit_sideband_write(FILE *f, const struct rtit_sideband *sb);

/* The path of map @i's file as a caller opens it: absolute, or relative
 * to the directory of @sideband_path (the sideband file).  Returns 0, or
 * -RTIT_ERR_NOSPACE when it does not fit @cap. */
int rtit_sideband_map_path(const struct rtit_sideband *sb, size_t i, const char *sideband_path,
			   char *out, size_t cap);

/* The value of param @key, or NULL. */
const char *rtit_sideband_param(const struct rtit_sideband *sb, const char *key);

#endif /* RTIT_SIDEBAND_H */
