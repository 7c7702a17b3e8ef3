/*
 * pt_encoder.h - the model of an Intel PT trace unit (SDM chapter 33).
 *
 * It consumes the simulator's records (sim.h) and writes the bytes the
 * hardware would: the packets of Tables 33-55/33-56 for each operation,
 * with LastIP and RET compression, PSB+ by PSBFreq, TSC/TMA/MTC/CYC/CBR,
 * the internal buffer and its overflow, filtering and TraceStop, and the
 * single-range and ToPA output schemes.  It mirrors the RTIT model
 * (rtit_encoder.h) in structure and shares its sink.
 */
#ifndef RTIT_PT_ENCODER_H
#define RTIT_PT_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/ip.h"
#include "rtit/packet.h"
#include "rtit/record.h"
#include "rtit/msr_pt.h"
#include "rtit/pt_state.h"
#include "rtit/pt_errata.h"
#include "rtit/encoder.h"	/* struct rtit_enc_sink, rtit_enc_note */
#include "rtit/rtit_state.h"	/* struct rtit_ibuf, rtit_outq (shared) */

/* Model parameters: the capability profile, what the manual leaves to the
 * implementation, and switches for the readings of its ambiguities. */
#define RTIT_PT_MAX_DEFERRED 16

struct rtit_pt_params {
	struct rtit_pt_caps caps;
	uint64_t buffer_bytes;		/* internal buffer; 0 = unlimited */
	uint64_t drain_num, drain_den;	/* drain rate, bytes per core cycle */
	uint32_t art_num, art_den;	/* TSC = ART * num / den (CPUID.15H) */
	uint8_t cbr;			/* core:bus ratio (CBR): the clock's, D79 */
	uint64_t vmcs;			/* current VMCS pointer; 0 = none */
	bool long_tnt;			/* Long TNT (47 bits) instead of TNT-8 (D21) */
	bool pgd_stop_suppressed;	/* TraceStop's TIP.PGD without IP (D21) */
	bool filter_sequential;		/* FilterEn also on sequential steps (D21) */
	bool psb_mode_tsx;		/* MODE.TSX in PSB+ (33.3.7, D43) */
	/* Implementation-specific packets (33.4.2.19-20), off by default:
	 * PADs before each PSB so that it starts at a multiple of pad_align
	 * bytes of the stream (0 = none; a power of two up to 4096), and an
	 * MNT with payload mnt after each PSBEND (mnt_on) */
	uint32_t pad_align;
	bool mnt_on;
	uint64_t mnt;
	/* Deferred TIPs (33.4.2.3), 0 = off: a near indirect JMP/CALL's TIP
	 * waits while a partial TNT accumulates, up to this many (at most
	 * RTIT_PT_MAX_DEFERRED), and goes out after the TNT (D47) */
	uint8_t deferred_tips;
	/* Stand-alone CYCs (33.3.6 "before the internal hardware counter
	 * wraps"), 0 = off: a CYC(N) each time N more cycles than CYCThresh
	 * asks passed since the last CYC with no CYC sent (D49) */
	uint32_t cyc_standalone;
	/* Which legal IPBytes (Table 33-18): enum rtit_pt_ip_choice, the
	 * shortest with 011b first by default (D59) */
	uint8_t ip_choice;
	/* VMX controls for Intel PT (33.5.1, Table 33-52): the three "conceal
	 * VMX from PT" controls (secondary processor-based execution control
	 * bit 19, VM-exit control bit 24, VM-entry control bit 17); and
	 * guest-only tracing (33.5.2.2): the "clear IA32_RTIT_CTL" exit
	 * control and the "load IA32_RTIT_CTL" entry control (D48) */
	bool vmx_conceal_nonroot, vmx_conceal_exit, vmx_conceal_entry;
	bool vmx_guest_only;
	bool vmx_nonroot;		/* the run starts in VMX non-root operation */
	/* A VM entry by VMLAUNCH/VMRESUME loads IA32_RTIT_CTL with
	 * vmx_entry_ctl (its VM-entry MSR-load area has an entry for it, or
	 * the "load IA32_RTIT_CTL" entry control; param vmx_entry_ctl, D148) */
	bool vmx_entry_ctl_on;
	uint64_t vmx_entry_ctl;
	/* The guest's VMCS TSC controls (docs/decisions.md D143): "use TSC
	 * offsetting" (primary processor-based VM-execution control bit 3)
	 * and "use TSC scaling" (secondary control bit 25).  The offset and
	 * multiplier are the identity (0 and 1.0): TSC packets in VMX
	 * non-root operation carry the host's TSC (SDM 33.5.2.1, 33.8.3.1);
	 * the controls matter for erratum SKZ84 only */
	bool vmx_tsc_offsetting, vmx_tsc_scaling;
	uint64_t psb_period_nocfg;	/* PSB period when EBX[1]=0 */
	/* Published errata the model reproduces (RTIT_PT_ERRATUM bits of
	 * RTIT_PT_ERRATA_MODELLED; docs/decisions.md D100-D104): set by the
	 * CPU (`cpu F/M/S`, as libipt's pt_cpu_errata) and by name */
	unsigned errata;
	bool slow_path_only;		/* testing: never take the fast path */
};

/* The errata the model can produce (D101-D104, D108-D110, D126, D143,
 * D149): SKL014, APL12, APL11, BDM70, SKD010, SKD007, BDM64, SKL168,
 * SKZ84, SKD022. */
#define RTIT_PT_ERRATA_MODELLED (RTIT_PT_ERRATUM(RTIT_PT_SKL014) | \
				 RTIT_PT_ERRATUM(RTIT_PT_SKD022) | \
				 RTIT_PT_ERRATUM(RTIT_PT_SKD007) | \
				 RTIT_PT_ERRATUM(RTIT_PT_BDM64) | \
				 RTIT_PT_ERRATUM(RTIT_PT_BDM70) | \
				 RTIT_PT_ERRATUM(RTIT_PT_SKD010) | \
				 RTIT_PT_ERRATUM(RTIT_PT_APL12) | \
				 RTIT_PT_ERRATUM(RTIT_PT_APL11) | \
				 RTIT_PT_ERRATUM(RTIT_PT_SKL168) | \
				 RTIT_PT_ERRATUM(RTIT_PT_SKZ84))

/* Defaults: the full profile, unlimited buffer, ART = TSC, CBR 16. */
void rtit_pt_params_default(struct rtit_pt_params *p);

/*
 * Sets one parameter by name ("param KEY = VALUE").  Keys: profile
 * (full|basic|client), buffer_bytes, drain (N or N/D), art (NUM/DEN: TSC =
 * ART * NUM / DEN), vmcs, long_tnt, pgd_stop_suppressed,
 * filter_sequential, psb_mode_tsx, pad_align (PADs aligning each PSB),
 * mnt (an MNT with this payload after each PSBEND), deferred_tips (0-16),
 * cyc_standalone (cycles, 0 = off), ip_compression (shortest|update48|full), vmx_nonroot, vmx_conceal_nonroot, vmx_conceal_exit, vmx_conceal_entry,
 * vmx_guest_only, vmx_entry_ctl (the IA32_RTIT_CTL a VM entry loads),
 * vmx_tsc_offsetting, vmx_tsc_scaling,
 * ranges (0-4), mtc_periods,
 * cyc_thresholds, psb_freqs (16-bit bitmaps), and each capability by its
 * field name (cr3_filter, psb_cyc, ip_filter, mtc, ptwrite, power_events,
 * psb_pmi_preserve, event_trace, tnt_disable, topa, topa_multi,
 * single_range, fabric); cpu (default or FAMILY/MODEL[/STEPPING]: the
 * modelled errata that CPU has, D100) and each modelled erratum by its
 * libipt name (skl014, apl12, apl11, bdm70, skd010, skd007, bdm64, skl168, skz84, skd022: on or off).  Returns 0, or -RTIT_ERR_BAD_CONFIG with a
 * message in @err.
 */
int rtit_pt_param_set(struct rtit_pt_params *p, const char *key, const char *value,
		      char *err, size_t errlen);

/* Reads guest physical memory (the ToPA tables).  Returns 0 or < 0. */
typedef int (*rtit_pt_read_mem_fn)(void *opaque, uint64_t phys, void *buf, size_t n);

struct rtit_pt_stats {
	uint64_t bytes, packets, psbs, overflows, dropped_packets;
	uint64_t topa_pmis, topa_stops, op_errors, lost_bytes;
};


/* The model.  Embed by value; touch only through the functions below. */
struct rtit_pt_model {
	struct rtit_pt_params p;
	struct rtit_enc_sink sink;
	struct rtit_pt_stats stats;
	struct rtit_pkt_ctx ctx;
	rtit_pt_read_mem_fn read_mem;
	void *mem_opaque;
	/* registers (33.2.8) */
	uint64_t ctl, status, cr3_match, out_base, out_mask;
	uint64_t addr_a[RTIT_PT_MAX_RANGES], addr_b[RTIT_PT_MAX_RANGES];
	uint64_t pkt_bytes;		/* PacketByteCnt, unbounded (D20) */
	uint64_t psb_bytes;		/* bytes since the last PSB */
	bool filter_en, ovf, psb_due;
	bool ip_full_next;		/* the next IP packet must not use LastIP */
	/* packet state */
	struct rtit_last_ip lastip;
	struct rtit_pt_tnt tnt;
	struct rtit_pt_callstack calls;
	struct rtit_ibuf ibuf;
	uint8_t mode_bits;		/* MODE.Exec bits of the current mode */
	bool mode_known;		/* the decoder knows mode_bits */
	/* platform view */
	uint8_t cpl, mode;
	uint64_t cr3;
	bool ifl;			/* RFLAGS.IF after the last record */
	bool nonroot, smm_saved_te, asleep, pwre_sent;
	bool vmx_ctl_saved;		/* guest-only: a VM exit cleared the CTL */
	uint64_t vmx_saved_ctl;		/* ... which the VM entry loads again */
	bool halted;		/* after a HLT or an MWAIT that entered a C-state,
				 * until the record that wakes it */
	uint8_t sleep_state;
	bool vmcs_sent;
	uint64_t out_pos;		/* bytes of the stream so far (pad_align) */
	/* TIPs deferred behind the partial TNT (33.4.2.3), in order */
	uint64_t dtip[RTIT_PT_MAX_DEFERRED];
	unsigned ndtip;
	bool intx;			/* InTX: an RTM transaction is active
					 * (33.2.9.1) */
	bool encl_optout;		/* inside an opt-out (production) SGX
					 * enclave: ContextEn = 0 (33.2.6.3) */
	uint64_t next_ip;		/* where execution goes on */
	/* time */
	uint64_t last_cycles, last_tsc, cyc_base;
	bool have_time, cyc_valid;
	uint64_t mtc_last;		/* ART >> MTCFreq at the last MTC */
	/* deferred debugger writes (no record) */
	bool deferred_enable, deferred_trig0, deferred_pe0;
	const struct rtit_sim_rec *cur;
	int err;
	/* output (33.2.7): single range or ToPA */
	bool out_ready;			/* the output pointers are loaded */
	uint64_t topa_table, topa_entry;	/* current table, entry value */
	uint32_t topa_index;
	uint64_t out_off;		/* offset in region (single range or ToPA) */
	uint8_t obuf[4096];
	size_t olen;
	/* the fast path's view, valid while fp_ok (fast_refresh in
	 * pt_model.c) */
	bool fp_ok, fp_pe, fp_ranges, fp_retc;
	uint64_t fp_mtc_tsc;		/* the first TSC an MTC may be due at */
	uint64_t fp_mask;		/* RET compression's address width */
	/* the PEBS record the simulator announced (rtit_pt_model_on_pebs),
	 * for its RTIT_EV_PEBS record (encoder/pt/pt_pebs.c) */
	bool pebs_have;
	struct rtit_sim_pebs pebs;
	/* Erratum BDM70 (D104): a PSB+ begun while PacketEn=0 waits for
	 * its end (PSBEND) until the next packet says whether a TIP.PGE
	 * follows; the FUP's IP, and the enable's MODE.Exec still due */
	bool bdm70_hold, bdm70_mode;
	bool skd007_cut;	/* the OVF's CYC keeps its first byte only (D109) */
	bool bdm64_hold;	/* a TIP in a transaction waits a record (D110) */
	uint64_t bdm64_ip;	/* its target */
	uint64_t bdm70_ip;
	/* Erratum SKL168 (D126): the CYC and the MTC of an MTC step wait
	 * here until the next packet (or the record's end) says whether a
	 * PSB follows them; skl168_arm while that MTC is sent */
	bool skl168_arm;
	uint8_t skl168_n;
	struct rtit_packet skl168_pkt[2];
	struct rtit_outq outq;		/* last: large */
};

/* Initialises @m at reset (all PT MSRs 0, 33.2.8.1).  Returns 0,
 * -RTIT_ERR_INVALID or -RTIT_ERR_BAD_CONFIG. */
int rtit_pt_model_init(struct rtit_pt_model *m, const struct rtit_pt_params *p,
		       const struct rtit_enc_sink *sink);

/* The platform state when tracing starts: CPL, CR3, mode (16/32/64). */
void rtit_pt_model_set_platform(struct rtit_pt_model *m, uint8_t cpl, uint64_t cr3, uint8_t mode);

/* RFLAGS.IF when tracing starts (MODE.Exec's IF bit with EventEn,
 * 33.4.2.8); records carry it afterwards (RTIT_SIM_F_IF). */
void rtit_pt_model_set_if(struct rtit_pt_model *m, bool ifl);

/* The guest memory reader for the ToPA table walk. */
void rtit_pt_model_set_mem(struct rtit_pt_model *m, rtit_pt_read_mem_fn fn, void *opaque);

/* Consumer callbacks for struct rtit_sim_consumer (opaque = the model). */
void rtit_pt_model_on_batch(const struct rtit_sim_rec *recs, size_t n, void *opaque);
int rtit_pt_model_msr_write(void *opaque, uint32_t msr, uint64_t value,
			    const struct rtit_sim_rec *ctx);
int rtit_pt_model_msr_read(void *opaque, uint32_t msr, uint64_t *value,
			   const struct rtit_sim_rec *ctx);

/* Consumer callback for struct rtit_sim_consumer.on_pebs: keeps a copy
 * of the PEBS record for the RTIT_EV_PEBS record that follows, which
 * writes it as packet blocks (BBP, BIP..., BEP, FUP: 33.4.1.1, Table
 * 33-47, docs/decisions.md D54). */
void rtit_pt_model_on_pebs(void *opaque, const struct rtit_sim_pebs *p,
			   const struct rtit_sim_rec *ctx);

/* One record (what on_batch does for each). */
void rtit_pt_model_on_rec(struct rtit_pt_model *m, const struct rtit_sim_rec *r);

/* Writes out every byte still in the internal buffer. */
void rtit_pt_model_drain(struct rtit_pt_model *m);

/* The end of the run: drains.  Returns 0 or the first sink error. */
int rtit_pt_model_finish(struct rtit_pt_model *m);

/* The hidden state now, for an observer (rtit/encoder.h). */
void rtit_pt_model_observe(const struct rtit_pt_model *m, struct rtit_enc_state *st);

/* Enables (33.2.6). */
bool rtit_pt_trigger_en(const struct rtit_pt_model *m);
bool rtit_pt_context_en(const struct rtit_pt_model *m);
bool rtit_pt_packet_en(const struct rtit_pt_model *m);

#endif /* RTIT_PT_ENCODER_H */
