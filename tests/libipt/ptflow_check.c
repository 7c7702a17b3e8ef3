/*
 * ptflow_check.c - decodes an Intel PT trace that `rtitsim run` wrote with
 * libipt's instruction-flow decoder (Intel's reference decoder, an
 * independent tool) over the same program image, and compares every
 * instruction libipt reports with the simulator's ground-truth flow.
 *
 *   ptflow_check PREFIX SCENARIO.scn [--may-be-empty] [--no-errata] [--time] [--packets]
 *
 * reads PREFIX.trace, PREFIX.flow and PREFIX.sideband.  libipt is told the
 * CPU the sideband names (`cpu F/M/S`: pt_config.cpu and the errata
 * pt_cpu_errata gives it, whose workarounds libipt then applies) and the
 * address filter (ADDRn_CFG of ia32_rtit_ctl, ia32_rtit_addrN_a/b: its
 * SKL014 workaround needs them); --no-errata clears the errata bits
 * again (libipt without its workarounds; docs/decisions.md D107).  --time
 * also gives libipt the timing configuration (MTCFreq, CPUID.15H as
 * art_num/art_den) and compares the TSC libipt's time decoder reports at
 * each instruction (pt_insn_time) with the flow's (docs/decisions.md D128).
 * --packets runs libipt's packet decoder alone instead (docs/decisions.md
 * D145: SKZ84's workaround is in it only).  Between an enable (TIP.PGE, or the
 * FUP of a PSB+/OVF) and the next disable, libipt's instructions must be
 * the flow's instructions one by one; across a disabled stretch the flow
 * is searched forward for the enable IP.  TSX: each instruction's
 * speculative flag must be the flow's (inside a transaction: from the
 * XBEGIN that began it up to, not including, the XEND that committed it,
 * or up to its abort), except from an overflow to the next MODE.TSX (no
 * packet says InTX after an OVF, 33.3.8); every abort libipt reports
 * (ptev_tsx, aborted) must be one of the flow's, at the same IP.
 *
 * libipt's instruction decoder cannot be told the execution mode: it learns
 * it from MODE.Exec events only, and its query decoder drops a MODE.Exec
 * still waiting for its TIP.PGE when an OVF comes (pt_qry_decode_ovf resets
 * the event queue).  An overflow right after an enable can therefore leave
 * libipt without a mode where the stream is decodable with the sideband's
 * (docs/decisions.md D61).  An error while libipt has never been given a
 * mode is reported, libipt resynchronises at the next PSB, and the flow's
 * instructions it skipped count as not checked; any other libipt error
 * before the end of the flow is a failure.
 *
 * A trace libipt decodes no instruction of is a failure, unless
 * --may-be-empty says nothing was traced (rtitsim's own decoder found no
 * instruction in it either: a filter the program never entered).
 *
 * An error after libipt said the trace has ended (pts_eos) is not a
 * failure: past the last packet libipt walks on where the trace no longer
 * says anything (into bytes the program never ran, possibly).
 *
 * Exit 0 when everything libipt decoded matched, 1 on a mismatch (first one
 * printed), 2 on bad input.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>

#include "rtit/image.h"
#include "rtit/opcodes_pt.h"
#include "rtit/pt_errata.h"
#include "rtit/sideband.h"
#include "runfiles.h"

/* libipt's image callback: the program's bytes from the scenario's image
 * (the flow layer's, the bytes its files provide; no simulator). */
static int read_image(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
		      void *ctx)
{
	(void)asid;
	/* Shorten at the image's end: libipt asks for up to 15 bytes. */
	while (size && rtit_image_read(ctx, ip, buf, size) < 0)
		size--;
	return size ? (int)size : -pte_nomap;
}

/* --time: libipt's TSC at each instruction against the flow's, the
 * instruction found by IP from where the last one was (D128). */
struct time_tally {
	size_t j, timed, equal;
	uint64_t sum, max;
};

static void time_tally(struct time_tally *t, struct pt_insn_decoder *dec, uint64_t ip,
		       const struct rtit_sim_rec *recs, size_t nrecs)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	size_t j = t->j;

	while (j < nrecs && !(recs[j].kind == RTIT_SIM_INSN && recs[j].ip == ip))
		j++;
	if (j == nrecs || pt_insn_time(dec, &tsc, &lost_mtc, &lost_cyc) < 0)
		return;
	t->j = j + 1;
	t->timed++;
	uint64_t d = tsc > recs[j].tsc ? tsc - recs[j].tsc : recs[j].tsc - tsc;
	t->equal += !d;
	t->sum += d;
	if (d > t->max)
		t->max = d;
}

/* A far transfer or another instruction that changes CPL: what libipt
 * (pt_insn_at_disabled_event) binds a TIP.PGD() with no IP to. */
static bool far_transfer(uint8_t cls)
{
	return (cls >= RTIT_IC_FAR_JMP && cls <= RTIT_IC_SYSEXIT) || cls == RTIT_IC_UIRET;
}

/* The last PSB that starts before @off: its PSB+ ends in an OVF before
 * any MODE.Exec, and the OVF is before @off. */
static bool psb_cut(const struct pt_config *c, uint64_t off, const uint8_t *trace, size_t tlen)
{
	uint8_t psb[rtit_pt_psb_size];	/* 02 82 repeated (SDM Table 33-36) */
	for (size_t i = 0; i < sizeof(psb); i += 2) {
		psb[i] = rtit_pt_ext;
		psb[i + 1] = rtit_pt_ext_psb;
	}
	uint64_t p = off < tlen ? off : tlen;
	while (p && (p + sizeof(psb) > tlen || memcmp(trace + p, psb, sizeof(psb))))
		p--;
	if (p + sizeof(psb) > tlen || memcmp(trace + p, psb, sizeof(psb)))
		return false;
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(c);
	bool cut = false;
	if (pd && pt_pkt_sync_set(pd, p) >= 0) {
		struct pt_packet pk;
		uint64_t at = 0;
		int k = 0;
		while (pt_pkt_get_offset(pd, &at) >= 0 && at < off &&
		       pt_pkt_next(pd, &pk, sizeof(pk)) >= 0) {
			if (k++ && (pk.type == ppt_psb || pk.type == ppt_psbend ||
				    (pk.type == ppt_mode && pk.payload.mode.leaf == pt_mol_exec)))
				break;
			if (pk.type == ppt_ovf) {
				cut = true;
				break;
			}
		}
	}
	pt_pkt_free_decoder(pd);
	return cut;
}

/*
 * Three errors of libipt 2.0.5 on streams the SDM allows, each at an OVF
 * (docs/decisions.md D212).  Returns their description, or NULL.
 *
 * - "trace stream does not match query" with the OVF next: TIPs deferred
 *   behind TNT bits (SDM 33.4.2.3) cut by an overflow.  libipt signals an
 *   event only once its TNT cache is empty (pt_qry_status_flags), so with
 *   a bit left for a later branch its instruction decoder walks on to the
 *   next indirect branch and queries a TIP where the OVF is
 *   (pt_qry_indirect_branch: an event ahead is -pte_bad_query).
 * - "unknown instruction" after a PSB+ that an OVF cut before its
 *   MODE.Exec (33.3.8: the OVF ends PSB+): libipt forgets the execution
 *   mode at the PSB and has none for the instruction at the OVF's FUP,
 *   which the image has.
 * - "unknown opcode" right after an OVF with SKZ84's workaround on: its
 *   search for the OVF's FUP (pt_pkt_find_ovf_fup) answers -pte_bad_opc at
 *   the invalid packet its own workaround makes of a TMA with reserved
 *   bits set (Intel erratum SKZ84).
 */
static const char *libipt_limit(const struct pt_config *c, int status, uint64_t off,
				const uint8_t *trace, size_t tlen)
{
	if (status == -pte_bad_query && off + 1 < tlen && trace[off] == rtit_pt_ext &&
	    trace[off + 1] == rtit_pt_ext_ovf)
		return "a TIP queried at an OVF after deferred TIPs (SDM 33.4.2.3)";
	if (status == -pte_bad_insn)
		return psb_cut(c, off, trace, tlen) ?
			"no execution mode after a PSB+ an OVF cut (SDM 33.3.8)" : NULL;
	if (status != -pte_bad_opc || !c->errata.skz84 || off < 2 || off > tlen ||
	    trace[off - 2] != rtit_pt_ext || trace[off - 1] != rtit_pt_ext_ovf)
		return NULL;
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(c);
	const char *why = NULL;
	if (pd && pt_pkt_sync_set(pd, off) >= 0) {
		struct pt_packet pk;
		while (pt_pkt_next(pd, &pk, sizeof(pk)) >= 0 && pk.type != ppt_fup) {
			if (pk.type == ppt_invalid) {
				why = "an SKZ84 TMA after an OVF (its FUP search stops there)";
				break;
			}
		}
	}
	pt_pkt_free_decoder(pd);
	return why;
}

/* The libipt limits met, the first with its offset. */
struct limits {
	const uint8_t *trace;
	size_t tlen;
	size_t resyncs;
	const char *first;
	uint64_t first_off;
};

/* libipt's error *@status at the decoder's offset: one of its limits
 * (libipt_limit)?  Then it is counted and libipt resynchronises at the
 * next PSB (*@status: pt_insn_sync_forward's); the instructions between
 * are not checked.  Else false, *@status unchanged. */
static bool limit_resync(struct pt_insn_decoder *dec, const struct pt_config *c, int *status,
			 struct limits *l)
{
	uint64_t off = 0;
	const char *why;
	if (pt_insn_get_offset(dec, &off) < 0 ||
	    !(why = libipt_limit(c, *status, off, l->trace, l->tlen)))
		return false;
	if (!l->resyncs++) {
		l->first = why;
		l->first_off = off;
	}
	*status = pt_insn_sync_forward(dec);
	return true;
}

/* The CPU and the address filter from PREFIX.sideband (no sideband, or
 * `cpu default`: no CPU, no errata, as before).  0, or -1 after printing
 * what failed. */
static int configure_cpu(struct pt_config *c, const char *prefix, bool no_errata, bool timing)
{
	struct rtit_sideband sb;
	char path[1024], err[512];
	unsigned f, m, st;

	snprintf(path, sizeof(path), "%s.sideband", prefix);
	if (rtit_sideband_read(path, &sb, err, sizeof(err)) < 0)
		return 0;
	if (rtit_pt_cpu_parse(sb.cpu, &f, &m, &st) == 1) {
		c->cpu.vendor = pcv_intel;
		c->cpu.family = (uint16_t)f;
		c->cpu.model = (uint8_t)m;
		c->cpu.stepping = (uint8_t)st;
		int e = pt_cpu_errata(&c->errata, &c->cpu);
		if (e < 0 && e != -pte_bad_cpu) {
			fprintf(stderr, "%s: pt_cpu_errata: %s\n", path, pt_errstr(pt_errcode(e)));
			rtit_sideband_fini(&sb);
			return -1;
		}
	}
	if (no_errata)
		memset(&c->errata, 0, sizeof(c->errata));
	if (timing) {	/* TSC = ART * EBX / EAX (SDM 33.8.3) */
		c->mtc_freq = (uint8_t)sb.mtc_freq;
		c->cpuid_0x15_eax = sb.art_den;
		c->cpuid_0x15_ebx = sb.art_num;
	}
	/* ADDRn_CFG (Table 33-6): 4 bits each from bit 32, as libipt packs them */
	c->addr_filter.config.addr_cfg = (uint32_t)((sb.ia32_rtit_ctl >> 32) & 0xffff);
	c->addr_filter.addr0_a = sb.addr_a[0];
	c->addr_filter.addr0_b = sb.addr_b[0];
	c->addr_filter.addr1_a = sb.addr_a[1];
	c->addr_filter.addr1_b = sb.addr_b[1];
	c->addr_filter.addr2_a = sb.addr_a[2];
	c->addr_filter.addr2_b = sb.addr_b[2];
	c->addr_filter.addr3_a = sb.addr_a[3];
	c->addr_filter.addr3_b = sb.addr_b[3];
	if (!sb.pt_errata)	/* no ranges in the sideband: no filter known */
		c->addr_filter.config.addr_cfg = 0;
	rtit_sideband_fini(&sb);
	return 0;
}

/* --packets: libipt's packet decoder (pt_pkt_next) over the whole trace,
 * as ptdump would: how many packets, the offsets of those it calls
 * invalid (ppt_invalid: with the SKZ84 bit, a TMA with reserved bits set
 * and the byte after it, docs/decisions.md D145), and the first error.
 * 0 when it reads to the end, 1 at an error. */
static int packet_check(const struct pt_config *c, const char *name)
{
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(c);
	size_t n = 0, ninv = 0;
	uint64_t off = 0;
	int st;

	if (!pd) {
		fprintf(stderr, "cannot allocate the libipt packet decoder\n");
		return 2;
	}
	printf("%s: libipt packets (errata skz84 %s):", name, c->errata.skz84 ? "on" : "off");
	st = pt_pkt_sync_forward(pd);
	while (st >= 0) {
		struct pt_packet p;
		pt_pkt_get_offset(pd, &off);
		st = pt_pkt_next(pd, &p, sizeof(p));
		if (st < 0)
			break;
		n++;
		if (p.type == ppt_invalid) {
			printf(" invalid(%u bytes) at 0x%" PRIx64 ";", p.size, off);
			ninv++;
		}
	}
	pt_pkt_free_decoder(pd);
	if (st == -pte_eos) {
		printf(" %zu packets, %zu invalid, to the end\n", n, ninv);
		return 0;
	}
	printf(" error '%s' at 0x%" PRIx64 " after %zu packets\n", pt_errstr(pt_errcode(st)), off, n);
	return 1;
}

/* What main read and built from the run's files. */
static void free_inputs(struct rtit_image *img, struct rtit_sim_rec *recs, uint8_t *trace,
			uint64_t *ips, uint8_t *cls, uint8_t *spec, uint64_t *aborts)
{
	rtit_image_free(img);
	free(ips);
	free(cls);
	free(spec);
	free(aborts);
	free(recs);
	free(trace);
}

int main(int argc, char **argv)
{
	struct rtit_image *img;
	struct rtit_sim_rec *recs;
	size_t nrecs, tlen;

	bool may_be_empty = false, no_errata = false, timing = false, pkts = false;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--may-be-empty"))
			may_be_empty = true;
		else if (!strcmp(argv[i], "--packets"))
			pkts = true;
		else if (!strcmp(argv[i], "--no-errata"))
			no_errata = true;
		else if (!strcmp(argv[i], "--time"))
			timing = true;
		else
			argc = 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: ptflow_check PREFIX SCENARIO.scn [--may-be-empty] [--no-errata] [--time] [--packets]\n");
		return 2;
	}
	if (runfiles_read_flow(argv[1], &recs, &nrecs) < 0)
		return 2;
	uint8_t *trace = runfiles_read_trace(argv[1], &tlen);
	if (!trace || runfiles_load_image(argv[2], &img) < 0)
		return 2;

	/* The flow's instructions (events are not instructions), whether
	 * each ran inside a transaction, and the IPs of its TSX aborts. */
	uint64_t *ips = malloc((nrecs + 1) * sizeof(*ips));
	uint8_t *cls = malloc(nrecs + 1), *spec = malloc(nrecs + 1);
	uint64_t *aborts = malloc((nrecs + 1) * sizeof(*aborts));
	size_t nips = 0, naborts = 0;
	bool intx = false;
	for (size_t i = 0; i < nrecs; i++) {
		const struct rtit_sim_rec *r = &recs[i];
		if (r->kind == RTIT_SIM_INSN) {
			if (r->flags & RTIT_SIM_F_TX)
				intx = r->cls == RTIT_IC_XBEGIN;
			spec[nips] = intx;
			cls[nips] = r->cls;
			ips[nips++] = r->ip;
		} else if (r->cls == RTIT_EV_TSX_ABORT) {
			intx = false;
			aborts[naborts++] = r->ip;
		}
	}

	struct pt_config config;
	pt_config_init(&config);
	config.begin = trace;
	config.end = trace + tlen;
	if (configure_cpu(&config, argv[1], no_errata, timing) < 0)
		return 2;
	if (pkts) {
		int pr = packet_check(&config, argv[1]);
		free_inputs(img, recs, trace, ips, cls, spec, aborts);
		return pr;
	}
	struct pt_insn_decoder *dec = pt_insn_alloc_decoder(&config);
	if (!dec) {
		fprintf(stderr, "cannot allocate the libipt decoder\n");
		return 2;
	}
	pt_image_set_callback(pt_insn_get_image(dec), read_image, img);

	/* First decode everything libipt will: segments of consecutive
	 * instructions, a new one after each enable, disable or overflow. */
	size_t cap = 4096, n = 0, events = 0, matched = 0;
	uint64_t *dip = malloc(cap * sizeof(*dip));
	uint8_t *seg_start = malloc(cap), *dspec = malloc(cap);
	size_t tsx_events = 0;
	bool resync = true, have_async = false, spec_known = true;
	/* libipt has had a MODE.Exec (its only source of the mode); it lost
	 * its mode at an error and resynchronised (the next segment's gap
	 * is not checked); how often. */
	bool mode_known = false, after_unknown = false;
	size_t mode_resyncs = 0;
	uint64_t first_unknown_off = 0;
	struct limits lim = { .trace = trace, .tlen = tlen };
	uint8_t *seg_unchecked = malloc(cap);
	/* decoded after libipt said pts_eos: its guess that execution went
	 * on where the trace no longer says (an event lost at the end of the
	 * trace, e.g. in an overflow that never resolved, is not in it) */
	uint8_t *after_eos = malloc(cap);
	bool saw_eos = false;
	/* The IP of the last event libipt gave with one (MODE.TSX, MODE.Exec,
	 * PTW: bound to a FUP); at an overflow, kept for the next segment:
	 * libipt takes the OVF before it lists the instruction at that IP. */
	uint64_t ev_ip = 0, ovf_ev_ip = 0;
	bool ev_ip_valid = false, ovf_ev_valid = false;
	uint64_t *seg_ovf_ip = malloc(cap * sizeof(*seg_ovf_ip));
	uint8_t *seg_ovf_valid = malloc(cap);
	uint64_t async_from = 0;
	int status = pt_insn_sync_forward(dec), rc = 0;
	if (status < 0 && status != -pte_eos && limit_resync(dec, &config, &status, &lim))
		after_unknown = true;
	struct time_tally tt = { 0 };
	uint8_t *skip_int = malloc(cap);	/* an INT n precedes this one */
	while (status >= 0) {
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			events++;
			if (getenv("PTFLOW_VERBOSE") && *getenv("PTFLOW_VERBOSE") == '2')
				fprintf(stderr, "  event %d ip 0x%" PRIx64 "%s\n", ev.type,
					(uint64_t)ev.variant.overflow.ip, ev.ip_suppressed ? " suppressed" : "");
			if (ev.type == ptev_enabled || ev.type == ptev_overflow ||
			    ev.type == ptev_disabled || ev.type == ptev_async_disabled)
				resync = true;
			if (ev.type == ptev_async_branch) {
				have_async = true;
				async_from = ev.variant.async_branch.from;
			}
			if (ev.type == ptev_overflow) {
				spec_known = false;
				ovf_ev_ip = ev_ip;
				ovf_ev_valid = ev_ip_valid;
			}
			ev_ip_valid = !ev.ip_suppressed && (ev.type == ptev_tsx ||
				      ev.type == ptev_exec_mode || ev.type == ptev_ptwrite);
			ev_ip = ev.type == ptev_tsx ? ev.variant.tsx.ip :
				ev.type == ptev_exec_mode ? ev.variant.exec_mode.ip :
				ev.type == ptev_ptwrite ? ev.variant.ptwrite.ip : 0;
			if (ev.type == ptev_exec_mode)
				mode_known = true;
			if (ev.type == ptev_tsx) {
				spec_known = true;
				tsx_events++;
				size_t a = 0;
				while (ev.variant.tsx.aborted && !ev.ip_suppressed && a < naborts &&
				       aborts[a] != ev.variant.tsx.ip)
					a++;
				if (ev.variant.tsx.aborted && !ev.ip_suppressed && a == naborts) {
					fprintf(stderr, "%s: libipt reports a TSX abort at 0x%" PRIx64
						", which the flow does not have\n", argv[1],
						(uint64_t)ev.variant.tsx.ip);
					rc = 1;
				}
			}
		}
		/* pts_eos: no more trace, but instructions that need none
		 * still decode, until pt_insn_next says -pte_eos. */
		struct pt_insn insn;
		bool eos = status >= 0 && (status & pts_eos);
		saw_eos |= eos;
		if (status >= 0)
			status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0 && status != -pte_eos && !mode_known) {
			/* No mode yet (D61): on from the next PSB+. */
			if (!mode_resyncs++)
				pt_insn_get_offset(dec, &first_unknown_off);
			status = pt_insn_sync_forward(dec);
			resync = after_unknown = true;
			continue;
		}
		if (status < 0 && status != -pte_eos && limit_resync(dec, &config, &status, &lim)) {
			resync = after_unknown = true;
			continue;
		}
		if (status < 0)
			break;
		if (n == cap) {
			cap *= 2;
			dip = realloc(dip, cap * sizeof(*dip));
			seg_start = realloc(seg_start, cap);
			seg_unchecked = realloc(seg_unchecked, cap);
			after_eos = realloc(after_eos, cap);
			seg_ovf_ip = realloc(seg_ovf_ip, cap * sizeof(*seg_ovf_ip));
			seg_ovf_valid = realloc(seg_ovf_valid, cap);
			skip_int = realloc(skip_int, cap);
			dspec = realloc(dspec, cap);
		}
		if (getenv("PTFLOW_VERBOSE") && *getenv("PTFLOW_VERBOSE") == '2')
			fprintf(stderr, "  %zu: 0x%" PRIx64 "%s%s\n", n, insn.ip,
				insn.speculative ? " spec" : "", eos ? " eos" : "");
		dip[n] = insn.ip;
		if (timing)
			time_tally(&tt, dec, insn.ip, recs, nrecs);
		dspec[n] = spec_known ? insn.speculative : 2;	/* 2: not known */
		seg_start[n] = resync;
		seg_unchecked[n] = after_unknown;
		after_eos[n] = eos;
		seg_ovf_ip[n] = ovf_ev_ip;
		seg_ovf_valid[n] = ovf_ev_valid;
		ovf_ev_valid = ev_ip_valid = false;
		/* INT n: Table 33-23 gives its FUP the CLIP, so libipt takes
		 * it as an event at the INT and does not list the INT; the
		 * flow has it as a retired instruction.  The same for ENCLU
		 * (EENTER, ERESUME, EEXIT: Table 33-55 case 17). */
		skip_int[n] = have_async && async_from != insn.ip;
		n++;
		resync = have_async = after_unknown = false;
		if (n > 4 * nips + 64)	/* running far past the flow's end */
			break;
	}
	/* A libipt error counts only before the end of the flow and of the
	 * trace: past them the decoder walks into bytes the program never
	 * ran. */
	int ipt_err = status < 0 && status != -pte_eos && !saw_eos ? status : 0;
	uint64_t err_off = 0;
	if (ipt_err)
		pt_insn_get_offset(dec, &err_off);

	/* Then place each segment in the flow: at the first position, from
	 * where the previous one ended, where all of it matches (up to the
	 * end of the flow: past it the decoder cannot know execution
	 * stopped).  Within a segment every instruction must match. */
	size_t k = 0, unchecked = 0, cr3_binds = 0, ovf_binds = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !seg_start[j])
			j++;
		size_t best = SIZE_MAX, best_len = 0;
		for (size_t p = k; p < nips && best == SIZE_MAX; p++) {
			size_t q = p, t = i;
			for (; t < j && q < nips; t++) {
				if (skip_int[t] && (cls[q] == RTIT_IC_INT || cls[q] == RTIT_IC_ENCLU) &&
				    ips[q] != dip[t])
					q++;
				if (q >= nips || ips[q] != dip[t] ||
				    (dspec[t] != 2 && spec[q] != dspec[t]))
					break;
				q++;
			}
			/* past the end of the trace: the segment ends here */
			if (t < j && after_eos[t])
				t = j;
			if (t == j || q >= nips)
				best = p, best_len = q - p;
			else if (t - i > best_len)
				best_len = t - i;
		}
		if (best == SIZE_MAX) {
			fprintf(stderr, "%s: libipt's instructions %zu-%zu (from 0x%" PRIx64 ") are not in the flow (IP and TSX speculative flag)"
				" after instruction %zu; the longest partial match is %zu instructions\n",
				argv[1], i + 1, j, dip[i], k, best_len);
			rc = 1;
			break;
		}
		/* flow positions: an INT n libipt does not list counts */
		matched += best_len;
		if (seg_unchecked[i])
			unchecked += best - k;
		/* The instruction a FUP-bound event named right before an OVF
		 * (e.g. an XBEGIN's MODE.TSX + FUP): libipt takes the overflow
		 * first and never lists it (D61). */
		if (i && seg_ovf_valid[i] && k < nips && best > k && ips[k] == seg_ovf_ip[i])
			ovf_binds++;
		/* A TIP.PGD() after a MOV CR3 that did not disable (no CR3
		 * filtering): libipt binds it to the MOV CR3, the first
		 * instruction that changes CR3, and does not list the far
		 * transfer after it that left the traced CPL (D61). */
		size_t e = best + best_len;
		if (e > 0 && e < nips && cls[e - 1] == RTIT_IC_MOV_CR3 && far_transfer(cls[e]))
			cr3_binds++;
		if (getenv("PTFLOW_VERBOSE"))
			fprintf(stderr, "libipt %zu-%zu (from 0x%" PRIx64 ") is flow %zu-%zu%s\n", i, j,
				dip[i], best, best + best_len,
				seg_unchecked[i] ? ", after a resync for the mode" : "");
		k = best + best_len;
		i = j;
		if (k >= nips)
			break;
	}
	/* libipt lost its mode and found no PSB+ after it */
	if (after_unknown && k < nips)
		unchecked += nips - k;
	if (ipt_err && !rc && k < nips) {
		fprintf(stderr, "%s: libipt: %s at trace offset 0x%" PRIx64 " after %zu instructions\n",
			argv[1], pt_errstr(pt_errcode(ipt_err)), err_off, n);
		rc = 1;
	}
	free(dip);
	free(seg_start);
	free(skip_int);
	free(dspec);
	free(seg_unchecked);
	free(after_eos);
	free(seg_ovf_ip);
	free(seg_ovf_valid);
	printf("%s: libipt decoded %zu of the flow's %zu instructions, all matching (%zu events,"
	       " %zu TSX)", argv[1], matched, nips, events, tsx_events);
	if (mode_resyncs)
		printf("; %zu not checked: libipt had no execution mode at offset 0x%" PRIx64
		       " (%zu resyncs, D61)", unchecked, first_unknown_off, mode_resyncs);
	if (lim.resyncs)
		printf("; libipt's limit at offset 0x%" PRIx64 ": %s (%zu resyncs, D212)",
		       lim.first_off, lim.first, lim.resyncs);
	if (cr3_binds)
		printf("; %zu far transfers after a MOV CR3 not listed (D61)", cr3_binds);
	if (ovf_binds)
		printf("; %zu instructions of an event right before an OVF not listed (D61)", ovf_binds);
	unchecked += cr3_binds + ovf_binds;
	if (timing)
		printf("; time: libipt's TSC at %zu instructions, %zu the flow's, %zu off by %" PRIu64
		       " in all (at most %" PRIu64 ")", tt.timed, tt.equal, tt.timed - tt.equal,
		       tt.sum, tt.max);
	printf("%s\n", rc ? " -- FAILED" : "");
	if (!rc && !matched && !unchecked && !may_be_empty) {
		fprintf(stderr, "%s: libipt decoded nothing\n", argv[1]);
		rc = 1;
	}
	pt_insn_free_decoder(dec);
	free_inputs(img, recs, trace, ips, cls, spec, aborts);
	return rc;
}
