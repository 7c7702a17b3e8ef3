/*
 * pt_errata.h - the published Intel PT errata that libipt 2.0.5 knows
 * (the bits of its struct pt_errata), their names, and which a CPU has
 * (family/model, as libipt's pt_cpu_errata says; docs/decisions.md D100).
 * Shared by the Intel PT encoder model, which can produce each erratum's
 * packets (switches, D101-D104, D108-D110), and the flow decoder, which has a
 * workaround for each it models (D106).  A file-format level table: the
 * isa layer.
 */
#ifndef RTIT_PT_ERRATA_H
#define RTIT_PT_ERRATA_H

#include <stdbool.h>
#include <stddef.h>

/* In libipt's order; the public IDs of Intel's specification updates. */
enum rtit_pt_erratum {
	RTIT_PT_BDM70,		/* PSB+ may contain unexpected packets */
	RTIT_PT_BDM64,		/* incorrect packet after a TSX abort */
	RTIT_PT_SKD007,		/* OVF after the first byte of a CYC */
	RTIT_PT_SKD022,		/* VM entry that clears TraceEn may send a FUP */
	RTIT_PT_SKD010,		/* FUP may be dropped after OVF */
	RTIT_PT_SKL014,		/* TIP.PGD may have no target IP */
	RTIT_PT_APL12,		/* OVF may be followed by an unexpected FUP */
	RTIT_PT_APL11,		/* OVF may be followed by TIP.PGD */
	RTIT_PT_SKL168,		/* CYC dropped right before a PSB */
	RTIT_PT_SKZ84,		/* TMA corrupted with VMX TSC scaling/offset */
	RTIT_PT_NERRATA
};

#define RTIT_PT_ERRATUM(x) (1u << (x))

/* "bdm70", ... (lower case, as libipt's fields); NULL out of range. */
const char *rtit_pt_erratum_name(unsigned e);

/* The erratum named @name, or -1. */
int rtit_pt_erratum_by_name(const char *name);

/*
 * A CPU as the scenario's `cpu` line and the sideband give it: "default"
 * (no CPU claimed: no errata) or FAMILY/MODEL[/STEPPING], each a C
 * number (0x hex or decimal), e.g. "6/0x4e/3".  Returns 1 for a CPU (its
 * fields set), 0 for "default" (or empty), -1 otherwise.
 */
int rtit_pt_cpu_parse(const char *s, unsigned *family, unsigned *model, unsigned *stepping);

/* The errata libipt 2.0.5's pt_cpu_errata gives an Intel CPU of @family
 * and @model (stepping plays no part there); 0 for a CPU it does not
 * know (D100). */
unsigned rtit_pt_cpu_errata(unsigned family, unsigned model);

/* The errata of the CPU string @cpu (rtit_pt_cpu_parse); 0 when it
 * names none or does not parse. */
unsigned rtit_pt_cpu_errata_str(const char *cpu);

/* A comma-separated list of names ("skl014,apl12"), or "none": the mask
 * in *mask.  0, or -1 at a name it does not know. */
int rtit_pt_errata_parse(const char *s, unsigned *mask);

/* @mask as such a list ("none" for 0) into @buf; returns @buf. */
char *rtit_pt_errata_format(unsigned mask, char *buf, size_t n);

#endif /* RTIT_PT_ERRATA_H */
