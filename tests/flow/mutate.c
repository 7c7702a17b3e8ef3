/*
 * mutate.c - the mutation test of the flow decoder (issue 17, "How to be
 * sure"): every golden vector's trace with single-byte mutations, decoded
 * against the vector's program image and compared with its ground truth.
 *
 *   mutate [-k N] [-v] [--list-reproduced] [--show N] [--show-libipt N] [--show-later N] [--max-silent N]
 *          [--max-ipt-later N] [--max-ipt-none N] GOLDEN_DIR
 *
 * For each GOLDEN_DIR/NAME.scn: the session runs it in memory (the trace
 * and the ground-truth flow, as `rtitsim run` writes them; `rtitsim golden
 * verify` checks that these are the expected vectors), the image comes
 * from the scenario as `rtitsim decode` loads it, and the decoder's
 * configuration from the sideband as `rtitsim decode` takes it.  The
 * unmutated trace must decode to the truth (a vector whose trace does
 * not, E8, is left out and counted).  Then for every byte of the
 * trace, K other values (deterministic: xorshift seeded from the vector's
 * name, so that one vector's mutants do not depend on the others; -k N, or
 * RTITSIM_MUTATE_K; -k 255 is every value), each decoded whole.  A mutant
 * is judged by the first decoded record that the truth does not have (the
 * library's comparator, rtit/flow.h, given PacketEn before each truth
 * record as the encoder had it, rtit_flow_cmp_traced: a segment that
 * follows only enables and disables must not start past a traced
 * instruction):
 *
 *   reproduced        no error and no difference (a byte the flow does
 *                     not depend on, or one that means the same);
 *   error first       the decoder reported an error (RTIT_FLOW_N_ERROR) at
 *                     or before that record, or reported one and nothing
 *                     differs;
 *   value changed     no error before it, and the mutated packet decodes
 *                     to the same type and size at the same offset with
 *                     another value in a field (a TNT bit, an IP with the
 *                     same compression, a CR3, a TNT of the same size
 *                     with other bits or another bit count: D137, ...),
 *                     the record being the
 *                     one that consumed that packet or a later one: a
 *                     well-formed trace, often of another flow the
 *                     program could have run; no decoder can tell (D87);
 *   decoded alike     Intel PT, built with libipt: libipt's instruction
 *     by libipt       decoder gives the same instructions as rtitsim up
 *                     to and past the first wrong record, with no error:
 *                     a well-formed trace of that other flow by an
 *                     independent reading of the rules (D137);
 *   equivalent        one of the mutants listed in `equivalent[]` below,
 *     (listed)        decoded with no error: a trace of another flow the
 *                     program's image allows that no rule of the manual
 *                     rules out, each argued there and in
 *                     docs/decisions.md D200 (the equivalent mutants of
 *                     mutation testing: found by hand, each named, so a
 *                     new one still fails);
 *   silently wrong    any other: the decoder printed a record not in the
 *                     truth with no error at or before it (an error that
 *                     comes later does not help; one at that record's
 *                     packet counts as at it, D137, also when the walk
 *                     from that packet made more records before the
 *                     error, D139, counted apart).  Its
 *                     records up to the next error are counted.  The
 *                     target is 0; the exit status is 1 when there are
 *                     more than --max-silent N of them (default 0).
 *
 * Prints the counts, and the first silently wrong mutants (vector,
 * offset, old and new byte, the difference; --show N: the first N, 10 by
 * default).  With libipt: --show-libipt N lists the first N mutants that
 * libipt rejects and rtitsim does not, --show-later N the first N that
 * libipt rejects at an earlier offset than rtitsim.  --max-ipt-later N
 * and --max-ipt-none N make the exit status 1 when more of them are
 * rtitsim's later error or no error (issue 17: at libipt's packet).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <malloc.h>
#include <time.h>

#ifdef HAVE_LIBIPT
#include <intel-pt.h>
#endif

#include "rtit/encoder.h"
#include "rtit/flow.h"
#include "rtit/image.h"
#include "rtit/msr_rtit.h"
#include "rtit/opcodes_pt.h"
#include "rtit/pktdec.h"
#include "rtit/pt_errata.h"
#include "rtit/record.h"
#include "rtit/scenario.h"
#include "rtit/session.h"

enum { max_handlers = 64 };

/*
 * Equivalent mutants (D200): single-byte mutations of golden vectors whose
 * trace is a well-formed trace of another flow of the same program image:
 * the decoder's records differ from the ground truth, and no rule of the
 * manuals tells them apart from a run of that other flow, with the image
 * and sideband `rtitsim decode` has.  Each was examined by hand; a mutant
 * counts here only when the decoder reports no error at all (an error
 * after its wrong records makes it silently wrong again).
 */
static const struct equiv {
	const char *vector;
	unsigned off;
	uint8_t old, new;
	const char *why;
} equivalent[] = {
	{ "pt_erratum_skd007", 0x3d, 0x13, 0x04,
	  "CYC -> TNT(N) before the TNT(T): the JCC goes not taken, the indirect JMP after it"
	  " has its TIP deferred behind the T bit (SDM 33.4.2.3) and lost to the OVF" },
	{ "pt_erratum_skd007_off", 0x3d, 0x13, 0x04,
	  "as pt_erratum_skd007: CYC -> TNT(N); a deferred TIP lost to the OVF (SDM 33.4.2.3)" },
	{ "pt_pebs", 0x6f, 0x06, 0x00,
	  "TNT(T) -> PAD: the loop's JCC not taken, the second PEBS record's FUP (its NLIP) then"
	  " binds one instruction on; PAD may appear anywhere (SDM 33.4.2.11)" },
	{ "pt_table56", 0x43, 0x19, 0x31,
	  "TSC -> TIP.PGE(0x40100f): tracing re-enabled by a branch into ADDR0 at the WRMSR"
	  " (Table 33-56 case 5); only the MSR the WRMSR writes, not in the trace, differs" },
	{ "rtit_pcc", 0x0f, 0x98, 0xb8,
	  "FUP.PCC -> FUP.FAR(NLIP) then TIP: an interrupt at 0x403022 to 0x403100 (RTIT Table 19"
	  " row 30); no IDT is in the image or sideband" },
	{ "rtit_pcc", 0x0f, 0x98, 0xb0,
	  "FUP.PCC -> TIP(0x403022): the JMP RAX goes there, then to 0x403100 with the next TIP"
	  " (RTIT Table 19); RAX is not in the trace" },
	{ "rtit_psb_pkt_cnt", 0x1a, 0xb5, 0x85,
	  "a FUP.PGE right after a mid-trace PSB: tracing restarted there, as an RTIT_CTL write"
	  " makes it (RTIT 4.2.1, 4.2.8; D168)" },
	{ "rtit_table19_leaving", 0x11, 0x80, 0xc3,
	  "a FUP.PGE + FUP.PGD pair read as one PIP while tracing is off: PIP is sent with"
	  " FilterEn 0 (RTIT 4.2.10)" },
};
#define N_EQUIV (sizeof(equivalent) / sizeof(equivalent[0]))
static unsigned equiv_seen[N_EQUIV];	/* drawn and judged equivalent */
static unsigned equiv_drawn[N_EQUIV];	/* drawn */

static int equiv_find(const char *vector, size_t off, uint8_t old, uint8_t nb)
{
	for (unsigned i = 0; i < N_EQUIV; i++)
		if (equivalent[i].off == off && equivalent[i].old == old &&
		    equivalent[i].new == nb && !strcmp(equivalent[i].vector, vector))
			return (int)i;
	return -1;
}

static unsigned max_show = 10;	/* --show N: how many silently wrong mutants to print */

struct vec {
	char name[256];
	uint8_t *trace;
	size_t tlen;
	struct rtit_sim_rec *truth;
	size_t ntruth;
	/* PacketEn before each truth record, as the encoder had it
	 * (rtit_flow_cmp_traced), or NULL */
	uint8_t *traced;
	struct rtit_image *img;
	uint64_t hip[max_handlers];
	int hvec[max_handlers], nh;
	struct rtit_flow_cfg cfg;
	/* the packets of the unmutated trace: start offset of the packet
	 * holding each byte, and whether it is a TNT or an IP packet */
	uint32_t *pkt_start;
	uint8_t *pkt_kind;	/* 0 other, 1 TNT, 2 IP */
	uint32_t *psb_of;	/* Intel PT: the PSB of the PSB+ a byte is in */
	/* for libipt: the CPU and the address filter (the sideband's) */
	char cpu[64];
	uint64_t ctl, addr_a[4], addr_b[4];
	bool has_filter;
};

/* The decoded instructions of one decode up to its first error note:
 * their IPs, INT n and ENCLU left out (libipt reports them as events,
 * D131), and for each decoded record, how many of those came before it. */
static uint64_t *dec_ips;
static size_t dec_nips, dec_cap;
static uint32_t *dec_at;	/* per decoded record */
static size_t dec_nrec, dec_rcap;

/* One decode's verdict. */
struct judge {
	struct rtit_flow_dec *fd;
	struct rtit_flow_cmp *cmp;
	bool error_seen, diverged, silent;
	uint64_t wrong_recs;		/* records after a silent divergence */
	uint64_t div_index;		/* the first wrong record's, in the decoded ones */
	bool at_div;			/* an error came at that record's packet */
	uint64_t at_div_recs;		/* the records made before it (D139) */
	uint64_t err_off;		/* the first error note's offset */
	char err_msg[160];		/* and its message */
	uint64_t div_off;		/* trace offset behind the first difference */
	char what[256];
};

static int vector_of(void *opaque, uint64_t ip)
{
	const struct vec *v = opaque;
	int r = -1;
	for (int i = 0; i < v->nh; i++)
		if (v->hip[i] == ip) {
			if (r >= 0 && r != v->hvec[i])
				return -1;
			r = v->hvec[i];
		}
	return r;
}

static uint64_t handler_of(void *opaque, unsigned vector)
{
	const struct vec *v = opaque;
	for (int i = 0; i < v->nh; i++)
		if (v->hvec[i] == (int)vector)
			return v->hip[i];
	return UINT64_MAX;
}

static int read_mem(void *opaque, uint64_t addr, uint8_t *buf, size_t n)
{
	const struct vec *v = opaque;
	return rtit_image_read(v->img, addr, buf, n);
}

static void feed(struct judge *j, const struct rtit_sim_rec *recs, const uint64_t *offs,
		 size_t n);

static void on_rec(void *opaque, const struct rtit_sim_rec *recs, size_t n)
{
	struct judge *j = opaque;
	if (!j->error_seen) {
		if (dec_nips + n > dec_cap || dec_nrec + n > dec_rcap) {
			dec_cap = dec_rcap = 2 * (dec_nrec + dec_nips + n);
			dec_ips = realloc(dec_ips, dec_cap * sizeof(*dec_ips));
			dec_at = realloc(dec_at, dec_rcap * sizeof(*dec_at));
			if (!dec_ips || !dec_at) {
				fputs("mutate: out of memory\n", stderr);
				exit(2);
			}
		}
		for (size_t i = 0; i < n; i++) {
			dec_at[dec_nrec++] = (uint32_t)dec_nips;
			if (recs[i].kind == RTIT_SIM_INSN && recs[i].cls != RTIT_IC_INT &&
			    recs[i].cls != RTIT_IC_ENCLU)
				dec_ips[dec_nips++] = recs[i].ip;
		}
	}
	if (j->silent) {
		if (!j->error_seen)	/* up to the next error */
			j->wrong_recs += n;
		return;
	}
	if (j->diverged)
		return;
	/* the flow only: instructions and events (ip, len, class, taken,
	 * next), not the times or RFLAGS.IF or VM-exit details the records
	 * carry (a mutated TSC or MODE.Exec.IF is another valid trace) */
	struct rtit_sim_rec b[64];
	const uint64_t *offs = rtit_flow_dec_batch_offsets(j->fd);
	for (size_t i = 0; i < n && !j->diverged; i += 64) {
		size_t m = n - i < 64 ? n - i : 64;
		for (size_t x = 0; x < m; x++) {
			b[x] = recs[i + x];
			b[x].cycles = b[x].tsc = 0;
			b[x].pad0 &= (uint8_t)~(RTIT_FLOW_A_CYC_EXACT | RTIT_FLOW_A_IF_KNOWN |
						RTIT_FLOW_A_VMX_INFO);
		}
		feed(j, b, offs + i, m);
	}
}

static void feed(struct judge *j, const struct rtit_sim_rec *recs, const uint64_t *offs, size_t n)
{
	if (!rtit_flow_cmp_feed(j->cmp, recs, offs, n)) {
		struct rtit_flow_cmp_result res;
		rtit_flow_cmp_finish(j->cmp, &res);
		j->diverged = true;
		j->div_off = res.mm.offset;
		j->div_index = res.mm.decoded_index;
		snprintf(j->what, sizeof(j->what), "%s", res.mm.what);
		if (!j->error_seen) {
			j->silent = true;	/* the first wrong record; later batches add theirs */
			j->wrong_recs = 1;
		}
	}
}

static void on_note(void *opaque, const struct rtit_flow_note *nt)
{
	struct judge *j = opaque;
	if (nt->kind == RTIT_FLOW_N_ERROR) {
		/* an error at the packet behind the first wrong record (a TIP
		 * into memory the image lacks: the branch's record, then "no
		 * memory mapped" at that TIP): the error is at the divergence
		 * (D137), also when the walk from that packet made more
		 * records before it met the image's end (D139: counted) */
		if (j->silent && nt->offset <= j->div_off) {
			j->silent = false, j->at_div = true;
			j->at_div_recs = j->wrong_recs;
		}
		if (!j->error_seen) {
			j->err_off = nt->offset;
			snprintf(j->err_msg, sizeof(j->err_msg), "%s", nt->msg ? nt->msg : "");
		}
		j->error_seen = true;
	}
	if (!j->diverged)
		rtit_flow_cmp_note(j->cmp, nt);
}

/* Decodes @t (@len bytes) of @v; fills @j. */
static int judge_run(struct vec *v, const uint8_t *t, size_t len, struct judge *j)
{
	struct rtit_flow_cfg cfg = v->cfg;
	bool silent_was;
	int r;

	memset(j, 0, sizeof(*j));
	dec_nips = dec_nrec = 0;
	cfg.mem = t;
	cfg.mem_len = len;
	cfg.opaque = j;
	if (rtit_flow_cmp_new(&j->cmp, v->truth, v->ntruth) < 0 ||
	    rtit_flow_dec_new(&j->fd, &cfg) < 0)
		return -1;
	if (v->traced)
		rtit_flow_cmp_traced(j->cmp, v->traced);
	r = rtit_flow_dec_run(j->fd);
	silent_was = j->silent;
	if (!j->diverged) {
		struct rtit_flow_cmp_result res;
		if (!rtit_flow_cmp_finish(j->cmp, &res)) {
			j->diverged = true;
			j->div_off = res.mm.offset;
			j->div_index = res.mm.decoded_index;
			snprintf(j->what, sizeof(j->what), "%s", res.mm.what);
			if (!j->error_seen)
				silent_was = true, j->wrong_recs = 1;
		}
	}
	j->silent = (silent_was || j->silent) && !j->at_div;
	rtit_flow_dec_free(j->fd);
	rtit_flow_cmp_free(j->cmp);
	return r < 0 ? -1 : 0;
}

/* PacketEn before each record, from the encoder's state after the one
 * before it (the session's observer; rtit/encoder.h), for the
 * comparator's check of skipped traced records (rtit_flow_cmp_traced). */
struct pe_rec {
	uint8_t *v;
	size_t n, cap;
	bool before, failed;
};

static void pe_on_record(void *opaque, const struct rtit_sim_rec *rec,
			 const struct rtit_enc_state *st)
{
	struct pe_rec *p = opaque;
	if (!rec) {	/* before the first record, and after the end */
		if (!p->n)
			p->before = st->packet_en;
		return;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		uint8_t *v = realloc(p->v, cap);
		if (!v) {
			p->failed = true;
			return;
		}
		p->v = v, p->cap = cap;
	}
	if (p->failed)
		return;
	p->v[p->n++] = p->before;
	p->before = st->packet_en;
}

/* The packets of the unmutated trace (their start and kind per byte). */
static int map_packets(struct vec *v)
{
	static struct rtit_pktdec pd;
	struct rtit_pktdec_cfg c = { .dialect = (enum rtit_dialect)v->cfg.dialect,
				     .cycle_acc = v->cfg.cycle_acc,
				     .buffovf_loads_lip = v->cfg.buffovf_loads_lip,
				     /* as the flow decoder reads them (D143) */
				     .pt_skz84 = (v->cfg.pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKZ84)) != 0,
				     .mem = v->trace, .mem_len = v->tlen };
	struct rtit_pktdec_item it;

	v->pkt_start = calloc(v->tlen + 1, sizeof(*v->pkt_start));
	v->pkt_kind = calloc(v->tlen + 1, 1);
	v->psb_of = calloc(v->tlen + 1, sizeof(*v->psb_of));
	if (!v->pkt_start || !v->pkt_kind || !v->psb_of || rtit_pktdec_init(&pd, &c) < 0)
		return -1;
	for (size_t i = 0; i <= v->tlen; i++)
		v->pkt_start[i] = v->psb_of[i] = UINT32_MAX;
	uint32_t psb = UINT32_MAX;
	for (;;) {
		int r = rtit_pktdec_next(&pd, &it);
		if (r == 0)
			break;
		if (r < 0) {
			if (rtit_pktdec_resync(&pd, false) <= 0)
				break;
			continue;
		}
		enum rtit_pkt_type ty = it.pkt.type;
		uint8_t kind = (ty == RTIT_R_TNT || ty == RTIT_PT_TNT8 || ty == RTIT_PT_TNT64) ? 1 :
			       rtit_pkt_has_ip(ty) ? 2 : 0;
		if (ty == RTIT_PT_PSB)
			psb = (uint32_t)it.offset;
		for (size_t k = 0; k < it.pkt.size && it.offset + k < v->tlen; k++) {
			v->pkt_start[it.offset + k] = (uint32_t)it.offset;
			v->pkt_kind[it.offset + k] = kind;
			v->psb_of[it.offset + k] = psb;
		}
		if (ty == RTIT_PT_PSBEND || ty == RTIT_PT_OVF)
			psb = UINT32_MAX;
	}
	return 0;
}

/*
 * Whether the mutant at @pos (new byte @nb) only changes the value of a TNT
 * bit or of an IP: the same packet, of the same type and size, decodes at
 * the same offset from the mutated bytes, and the bytes changed are its
 * payload (RTIT 4.2.2/4.2.3, SDM Tables 33-16 to 33-22).
 */
/* The packet that decodes at offset @s of @t (the vector's length), in
 * its context (a BIP's size comes from its BBP, an RTIT CCP from the
 * packet before it).  Returns false when none starts there. */
static bool pkt_at(const struct vec *v, const uint8_t *t, uint32_t s, struct rtit_packet *out)
{
	static struct rtit_pktdec pd;
	struct rtit_pktdec_cfg c = { .dialect = (enum rtit_dialect)v->cfg.dialect,
				     .cycle_acc = v->cfg.cycle_acc, .no_ip = true,
				     .pt_skz84 = (v->cfg.pt_errata & RTIT_PT_ERRATUM(RTIT_PT_SKZ84)) != 0,
				     .mem = t, .mem_len = v->tlen };
	struct rtit_pktdec_item it;

	if (rtit_pktdec_init(&pd, &c) < 0)
		return false;
	for (;;) {
		int r = rtit_pktdec_next(&pd, &it);
		if (r <= 0 || it.offset > s)
			return false;
		if (it.offset == s) {
			*out = it.pkt;
			return true;
		}
	}
}

/*
 * Whether the mutant @t at @pos only changes a field's value (D87): the
 * packet holding @pos decodes to the same type and size at the same
 * offset, a TNT of the same size with any bits (D137), an IP packet with
 * the same compression (RTIT 4.2.2/4.2.3, SDM Tables 33-16 to 33-22).
 */
static bool value_mutant(const struct vec *v, const uint8_t *t, size_t pos)
{
	uint32_t s = v->pkt_start[pos];
	struct rtit_packet a, b;

	if (s == UINT32_MAX || !pkt_at(v, v->trace, s, &a) || !pkt_at(v, t, s, &b))
		return false;
	if (a.type != b.type || a.size != b.size)
		return false;
	if (v->pkt_kind[pos] == 1)	/* other bits, or as many more or fewer
					 * as the same size holds (D137) */
		return true;
	if (v->pkt_kind[pos] == 2)
		return a.u.ip.ipc == b.u.ip.ipc && a.u.ip.zext == b.u.ip.zext;
	return true;
}

#ifdef HAVE_LIBIPT
/* libipt's image callback: the vector's image (the bytes its files
 * provide, as rtitsim decode's). */
static int ipt_read(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
		    void *ctx)
{
	(void)asid;
	while (size && rtit_image_read(((const struct vec *)ctx)->img, ip, buf, size) < 0)
		size--;
	return size ? (int)size : -pte_nomap;
}

/* libipt's instruction decoder over @t, configured as its users do: the
 * vector's CPU and the errata pt_cpu_errata gives it, its address filter
 * when known (as tests/libipt/ptflow_check.c), the image by callback. */
static struct pt_insn_decoder *ipt_decoder(const struct vec *v, const uint8_t *t)
{
	struct pt_config c;
	unsigned f, m, st;

	pt_config_init(&c);
	c.begin = (uint8_t *)t;
	c.end = (uint8_t *)t + v->tlen;
	if (rtit_pt_cpu_parse(v->cpu, &f, &m, &st) == 1) {
		c.cpu.vendor = pcv_intel;
		c.cpu.family = (uint16_t)f;
		c.cpu.model = (uint8_t)m;
		c.cpu.stepping = (uint8_t)st;
		(void)pt_cpu_errata(&c.errata, &c.cpu);
	}
	if (v->has_filter) {
		c.addr_filter.config.addr_cfg = (uint32_t)((v->ctl >> 32) & 0xffff);
		c.addr_filter.addr0_a = v->addr_a[0];
		c.addr_filter.addr0_b = v->addr_b[0];
		c.addr_filter.addr1_a = v->addr_a[1];
		c.addr_filter.addr1_b = v->addr_b[1];
		c.addr_filter.addr2_a = v->addr_a[2];
		c.addr_filter.addr2_b = v->addr_b[2];
		c.addr_filter.addr3_a = v->addr_a[3];
		c.addr_filter.addr3_b = v->addr_b[3];
	}
	struct pt_insn_decoder *dec = pt_insn_alloc_decoder(&c);
	if (dec)
		pt_image_set_callback(pt_insn_get_image(dec), ipt_read, (void *)v);
	return dec;
}

/* One step of libipt's instruction decoder from status @s: its pending
 * events taken, then the next instruction into @in.  Its status, or
 * -pte_eos once it has said the trace ended (pts_eos), unless @past_eos:
 * then the instructions it still walks without a packet (it stops with
 * -pte_eos at the first one that needs one), as rtitsim's decoder walks
 * to the run's end after the last packet. */
static int ipt_next(struct pt_insn_decoder *dec, int s, struct pt_insn *in, bool past_eos)
{
	while (s >= 0 && (s & pts_event_pending)) {
		struct pt_event ev;
		s = pt_insn_event(dec, &ev, sizeof(ev));
	}
	if (s < 0)
		return s;
	if ((s & pts_eos) && !past_eos)
		return -pte_eos;
	return pt_insn_next(dec, in, sizeof(*in));
}

/*
 * Whether libipt 2.0.5's instruction-flow decoder (Intel's reference
 * decoder, configured with the vector's CPU, its errata and its address
 * filter as its users configure it) decodes the mutant @t to the same
 * instructions rtitsim's decoder gave (dec_ips) up to and past the first
 * wrong record (@j->div_index, and 8 records more), with no error (after
 * the last packet, both walk on only where no packet is needed).
 * Then the mutant is a well-formed trace of that other flow by an
 * independent reading of the rules, not a fault of rtitsim's (D137).
 */
/* @t with its PEBS blocks (BBP, BIP, BEP, and the FUP a BEP with IP=1
 * announces) turned into PADs, for libipt 2.0.5, which predates them
 * (D142): a packet block is generated within or between instructions and
 * holds no control flow (SDM 33.4.1.1), so the instruction flow is the
 * same without it.  NULL when @t has none.  Up to the first bytes that
 * are no packet. */
static uint8_t *ipt_mask_pebs(const struct vec *v, const uint8_t *t)
{
	static struct rtit_pktdec pd;
	struct rtit_pktdec_cfg c = { .dialect = RTIT_DIALECT_PT, .no_ip = true,
				     .mem = t, .mem_len = v->tlen };
	struct rtit_pktdec_item it;
	uint8_t *m = NULL;
	bool fup = false;

	if (rtit_pktdec_init(&pd, &c) < 0)
		return NULL;
	while (rtit_pktdec_next(&pd, &it) > 0) {
		enum rtit_pkt_type ty = it.pkt.type;
		bool blk = ty == RTIT_PT_BBP || ty == RTIT_PT_BIP || ty == RTIT_PT_BEP;
		if (ty == RTIT_PT_PSB || ty == RTIT_PT_OVF)
			fup = false;
		if (!blk && !(fup && ty == RTIT_PT_FUP))
			continue;
		if (!m) {
			if (!(m = malloc(v->tlen)))
				return NULL;
			memcpy(m, t, v->tlen);
		}
		memset(m + it.offset, rtit_pt_opc_pad, it.pkt.size);	/* PADs (Table 33-39) */
		fup = ty == RTIT_PT_BEP && it.pkt.u.ip_bit;
	}
	return m;
}

static bool ipt_confirms(const struct vec *v, const uint8_t *t, const struct judge *j)
{
	size_t upto = j->div_index + 9 < dec_nrec ? j->div_index + 9 : dec_nrec;
	size_t want = upto < dec_nrec ? dec_at[upto] : dec_nips, k = 0;
	bool same = true;

	if (!want)
		return false;
	uint8_t *m = ipt_mask_pebs(v, t);
	size_t div = j->div_index, ip_end = div + 1 < dec_nrec ? dec_at[div + 1] : dec_nips;
	if (m && (div >= dec_nrec || ip_end == dec_at[div])) {
		/* the first wrong record is no instruction (a PEBS record's):
		 * libipt, without the blocks, cannot vouch for it */
		free(m);
		return false;
	}
	struct pt_insn_decoder *dec = ipt_decoder(v, m ? m : t);
	if (!dec) {
		free(m);
		return false;
	}
	int s = pt_insn_sync_forward(dec);
	struct pt_insn in;
	while (s >= 0 && k < want && same && (s = ipt_next(dec, s, &in, true)) >= 0)
		same = in.ip == dec_ips[k++];
	pt_insn_free_decoder(dec);
	free(m);
	return same && k == want;
}

/* libipt's first error decoding @t (ipt_decoder's configuration):
 * true with its offset (pt_insn_get_offset: where its decoder stood),
 * false when it decodes to the end of the trace with none.  Errors after
 * it said the trace ended (pts_eos: it walks on past the last packet, into
 * code the trace says nothing about) are not counted. */
static int ipt_last_code;

/* libipt's last error: its offset names no packet, only where the
 * decoder synchronised (pt_insn_get_offset gives the sync point when the
 * query decoder failed reading ahead from it, as in pt_insn_sync_forward) */
static bool ipt_last_at_sync;

static bool ipt_first_error(const struct vec *v, const uint8_t *t, uint64_t *off)
{
	bool err = false;
	struct pt_insn_decoder *dec = ipt_decoder(v, t);
	if (!dec)
		return false;
	int s = pt_insn_sync_forward(dec);
	struct pt_insn in;
	for (unsigned k = 0; k < 1u << 20 && s >= 0; k++)
		s = ipt_next(dec, s, &in, false);
	if (s < 0 && s != -pte_eos) {
		err = true;
		ipt_last_code = s;
		uint64_t so;
		if (pt_insn_get_offset(dec, off) < 0)
			*off = 0;
		ipt_last_at_sync = pt_insn_get_sync_offset(dec, &so) < 0 || *off <= so;
	}
	pt_insn_free_decoder(dec);
	return err;
}
#endif

static int load_vector(const char *dir, const char *name, struct vec *v)
{
	char path[1024], *tb = NULL, *fb = NULL;
	size_t tl = 0, fl = 0;
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	struct rtit_session_result *res = calloc(1, sizeof(*res));
	bool external_ctl = false;
	int ret = -1;

	memset(&sc, 0, sizeof(sc));
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s.scn", dir, name);
	if (!res || rtit_scenario_parse_file(path, &sc, &err) < 0) {
		fprintf(stderr, "mutate: %s\n", res ? err.text : "out of memory");
		goto out;
	}
	FILE *tf = open_memstream(&tb, &tl), *ff = open_memstream(&fb, &fl);
	struct pe_rec pe = { 0 };
	struct rtit_session_cfg scfg = { .sc = &sc, .trace = tf, .flow_bin = ff,
					 .on_record = pe_on_record, .opaque = &pe };
	int ss = rtit_session_run(&scfg, res);
	fclose(tf);
	fclose(ff);
	if (ss != RTIT_SESSION_OK) {
		fprintf(stderr, "mutate: %s: %s\n", name, res->msg[0] ? res->msg : res->io_msg);
		goto out;
	}
	FILE *f = fmemopen(fb, fl, "rb");
	if (!f || rtit_flow_read(f, &v->truth, &v->ntruth) < 0) {
		fprintf(stderr, "mutate: %s: cannot read the flow back\n", name);
		if (f)
			fclose(f);
		goto out;
	}
	fclose(f);
	/* one PacketEn a record of the flow, or the check is not made */
	if (pe.failed || pe.n != v->ntruth)
		free(pe.v);
	else
		v->traced = pe.v;
	v->trace = (uint8_t *)tb;
	v->tlen = tl;
	tb = NULL;
	if (rtit_image_new(&v->img) < 0 || rtit_scenario_image(&sc, v->img, &err) < 0) {
		fprintf(stderr, "mutate: %s: %s\n", name, err.text);
		goto out;
	}
	/* as rtitsim decode's load_image */
	for (size_t i = 0; i < sc.nhandlers && v->nh < max_handlers; i++) {
		uint64_t a = sc.handlers[i].ip.value;
		if (sc.handlers[i].ip.label[0] && rtit_image_symbol(v->img, sc.handlers[i].ip.label, &a) < 0)
			continue;
		v->hip[v->nh] = a;
		v->hvec[v->nh++] = (int)sc.handlers[i].vector;
	}
	for (size_t i = 0; i < sc.nevents; i++)
		if (sc.events[i].ev.kind == RTIT_EV_MSR_WRITE_EXTERNAL &&
		    sc.events[i].ev.msr == RTIT_R_MSR_CTL)
			external_ctl = true;
	rtit_flow_cfg_default(&v->cfg);
	rtit_flow_cfg_from_sideband(&v->cfg, &res->sb);
	v->cfg.end_traced = res->sb.has_end && !external_ctl;
	v->cfg.read_mem = read_mem;
	v->cfg.vector_of = vector_of;
	v->cfg.handler_of = handler_of;
	v->cfg.mem_opaque = v;
	v->cfg.on_rec = on_rec;
	v->cfg.on_note = on_note;
	snprintf(v->cpu, sizeof(v->cpu), "%s", res->sb.cpu);
	v->ctl = res->sb.ia32_rtit_ctl;
	memcpy(v->addr_a, res->sb.addr_a, sizeof(v->addr_a));
	memcpy(v->addr_b, res->sb.addr_b, sizeof(v->addr_b));
	v->has_filter = res->sb.pt_errata != 0;	/* as ptflow_check: ranges known */
	ret = map_packets(v);
out:
	free(tb);
	free(fb);
	free(res);
	rtit_scenario_fini(&sc);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *ke = getenv("RTITSIM_MUTATE_K");
	unsigned k = ke ? (unsigned)atoi(ke) : 18;
	bool verbose = false, list_repro = false;
	unsigned show_ipt = 0;	/* --show-libipt N: mutants only libipt rejects */
	unsigned show_later = 0;	/* --show-later N: libipt rejects them earlier */
	uint64_t max_silent = 0;
	/* --max-ipt-later N, --max-ipt-none N: how many mutants libipt
	 * rejects may rtitsim reject later (at a later packet than libipt
	 * names) or not at all; no limit by default */
	uint64_t max_ipt_later = UINT64_MAX, max_ipt_none = UINT64_MAX;
	uint64_t n = 0, repro = 0, errfirst = 0, other = 0, silent = 0, silent_recs = 0;
	uint64_t by_ipt = 0, equiv = 0;
	/* errors at the first wrong record's packet that came only after
	 * more records walked from it (D139) */
	uint64_t late_at_div = 0, late_at_div_recs = 0;
	/* error positions against libipt (issue 17): mutants libipt rejects,
	 * and of those, rtitsim rejects at or before libipt's offset, later,
	 * or not at all */
	uint64_t ipt_err = 0, ipt_same = 0, ipt_later = 0, ipt_none = 0, ipt_sync = 0;
	/* of the later ones: libipt names a packet wholly before the
	 * mutated one, whose bytes are the vector's own (its decoder's
	 * position when it gave up, not a fault: the stream up to the
	 * mutated packet is the unmutated trace's, which both decode) */
	uint64_t ipt_before = 0;
	/* of those: the packet libipt names is the PSB of the PSB+ that
	 * holds the mutated packet, and rtitsim errs inside that PSB+ (libipt
	 * reads a PSB+ whole and names its PSB at a fault in it) */
	uint64_t ipt_psbplus = 0;
	unsigned ipt_vectors = 0;
	unsigned shown = 0, nvec = 0, left_out = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull;	/* fixed seed: deterministic */
	char *names[512];
	int nn = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-k") && i + 1 < argc)
			k = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--max-silent") && i + 1 < argc)
			max_silent = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max-ipt-later") && i + 1 < argc)
			max_ipt_later = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max-ipt-none") && i + 1 < argc)
			max_ipt_none = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--list-reproduced"))
			list_repro = true;
		else if (!strcmp(argv[i], "--show") && i + 1 < argc)
			max_show = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--show-libipt") && i + 1 < argc)
			show_ipt = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--show-later") && i + 1 < argc)
			show_later = (unsigned)atoi(argv[++i]);
		else
			dir = argv[i];
	}
	if (!dir || k < 1 || k > 255) {
		fputs("usage: mutate [-k 1..255] [-v] [--list-reproduced] [--show N] [--show-libipt N] [--show-later N] [--max-silent N]"
		      " [--max-ipt-later N] [--max-ipt-none N] GOLDEN_DIR\n", stderr);
		return 2;
	}
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d) {
		fprintf(stderr, "mutate: %s: cannot open\n", dir);
		return 2;
	}
	while ((e = readdir(d)) && nn < 512) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".scn"))
			names[nn++] = strndup(e->d_name, l - 4);
	}
	closedir(d);
	qsort(names, (size_t)nn, sizeof(*names), cmp_str);

	/* the decoder's and the comparator's tables are allocated per
	 * mutant: keep them on the heap instead of mmap/munmap each time */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int vi = 0; vi < nn; vi++) {
		static struct vec v;
		struct judge j;

		memset(&v, 0, sizeof(v));
		if (load_vector(dir, names[vi], &v) < 0)
			return 2;
		if (judge_run(&v, v.trace, v.tlen, &j) < 0)
			return 2;
		if (j.diverged || j.error_seen) {
			/* E8: the unmutated trace does not decode back */
			if (verbose)
				printf("%s: left out: the trace itself does not decode to the truth (%s)\n",
				       v.name, j.diverged ? j.what : "a decode error");
			left_out++;
			goto next;
		}
		nvec++;
		/* each vector's own draws (FNV-1a of its name): adding a
		 * vector does not change the mutants of the others */
		rng = 0xcbf29ce484222325ull;
		for (const char *c = v.name; *c; c++)
			rng = (rng ^ (uint8_t)*c) * 0x100000001b3ull;
		rng |= 1;
#ifdef HAVE_LIBIPT
		uint64_t o0;
		/* libipt 2.0.5 knows no PEBS blocks or Event Trace packets:
		 * only vectors whose trace it decodes cleanly are compared */
		bool ipt_cmp = v.cfg.dialect == RTIT_DIALECT_PT && !ipt_first_error(&v, v.trace, &o0);
		ipt_vectors += ipt_cmp;
#endif
		uint8_t *t = malloc(v.tlen);
		memcpy(t, v.trace, v.tlen);
		for (size_t pos = 0; pos < v.tlen; pos++) {
			uint8_t seen[256] = { 0 };
			for (unsigned m = 0; m < k; m++) {
				unsigned x;
				if (k == 255) {
					x = m + 1;
				} else {
					do {
						rng ^= rng << 13;
						rng ^= rng >> 7;
						rng ^= rng << 17;
						x = (unsigned)(rng % 255) + 1;
					} while (seen[x]);
					seen[x] = 1;
				}
				uint8_t nb = (uint8_t)(v.trace[pos] ^ x);
				int eq = equiv_find(v.name, pos, v.trace[pos], nb);
				if (eq >= 0)
					equiv_drawn[eq]++;
				t[pos] = nb;
				if (judge_run(&v, t, v.tlen, &j) < 0)
					return 2;
				n++;
#ifdef HAVE_LIBIPT
				uint64_t io;
				if (ipt_cmp && ipt_first_error(&v, t, &io)) {
					ipt_err++;
					if (!j.error_seen) {
						ipt_none++;
						if (show_ipt && ipt_none <= show_ipt)
							printf("libipt only: %s offset 0x%zx %02x -> %02x: libipt %s"
							       " at 0x%" PRIx64 "\n", v.name, pos, v.trace[pos], nb,
							       pt_errstr(pt_errcode(ipt_last_code)), io);
					}
					else if (j.err_off <= io)
						ipt_same++;
					else if (ipt_last_at_sync)
						ipt_sync++;
					else if (io < v.pkt_start[pos] && j.err_off >= v.pkt_start[pos] &&
						 v.psb_of[pos] == io && j.err_off < v.tlen &&
						 v.psb_of[j.err_off] == io)
						ipt_psbplus++;
					else if (io < v.pkt_start[pos] && j.err_off >= v.pkt_start[pos])
						ipt_before++;
					else if (++ipt_later <= show_later)
						printf("libipt earlier: %s offset 0x%zx %02x -> %02x: libipt %s"
						       " at 0x%" PRIx64 ", rtitsim at 0x%" PRIx64 " (its records %s%s"
						       " 0x%" PRIx64 "): %s\n", v.name, pos, v.trace[pos], nb,
						       pt_errstr(pt_errcode(ipt_last_code)), io, (uint64_t)j.err_off,
						       j.diverged ? "differ from the truth from offset" : "agree with the truth",
						       j.diverged ? "" : " up to", j.diverged ? j.div_off : j.err_off,
						       j.err_msg);
				}
#endif
				if (!j.diverged && !j.error_seen) {
					repro++;
					if (list_repro)
						printf("reproduced: %s offset 0x%zx %02x -> %02x\n",
						       v.name, pos, v.trace[pos], nb);
				}
				else if (!j.silent) {
					errfirst++;
					if (j.at_div && j.at_div_recs > 1) {
						late_at_div++;
						late_at_div_recs += j.at_div_recs;
					}
				}
				else if (value_mutant(&v, t, pos) && j.div_off >= v.pkt_start[pos])
					other++;
#ifdef HAVE_LIBIPT
				else if (v.cfg.dialect == RTIT_DIALECT_PT && ipt_confirms(&v, t, &j))
					by_ipt++;
#endif
				else if ((eq = equiv_find(v.name, pos, v.trace[pos], nb)) >= 0 &&
					 !j.error_seen) {
					equiv++;
					equiv_seen[eq]++;
				}
				else {
					silent++;
					silent_recs += j.wrong_recs;
					if (shown++ < max_show)
						printf("silently wrong: %s offset 0x%zx %02x -> %02x: %s"
						       " (trace offset 0x%" PRIx64 ")\n", v.name, pos,
						       v.trace[pos], nb, j.what, j.div_off);
				}
				t[pos] = v.trace[pos];
			}
		}
		free(t);
next:
		free(v.trace);
		free(v.truth);
		free(v.traced);
		free(v.pkt_start);
		free(v.pkt_kind);
		free(v.psb_of);
		rtit_image_free(v.img);
		free(names[vi]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("vectors %u (left out %u: their traces do not decode to the truth)\n", nvec, left_out);
	printf("mutants %" PRIu64 ", reproduced %" PRIu64 ", error before divergence %" PRIu64
	       ", a field's value changed (D87) %" PRIu64 ", decoded alike by libipt (D137) %"
	       PRIu64 ", listed equivalent (D200) %" PRIu64 ", silently wrong %" PRIu64 " (%" PRIu64
	       " records) in %.1f s\n", n, repro, errfirst, other, by_ipt, equiv, silent,
	       silent_recs, s);
	for (unsigned i = 0; i < N_EQUIV; i++) {
		if (equiv_seen[i] && max_show)
			printf("equivalent: %s offset 0x%x %02x -> %02x: %s\n", equivalent[i].vector,
			       equivalent[i].off, equivalent[i].old, equivalent[i].new, equivalent[i].why);
		else if (equiv_drawn[i] && !equiv_seen[i])
			printf("listed as equivalent but decoded otherwise now (an error, the truth or"
			       " another class; the list may drop it): %s offset 0x%x %02x -> %02x\n",
			       equivalent[i].vector, equivalent[i].off, equivalent[i].old,
			       equivalent[i].new);
	}
	printf("of the errors at the first wrong record's packet, %" PRIu64 " came after the walk"
	       " from that packet made more records (%" PRIu64 " in all; D139)\n", late_at_div,
	       late_at_div_recs);
#ifdef HAVE_LIBIPT
	printf("error positions against libipt (%u Intel PT vectors it decodes): it rejects %"
	       PRIu64 " mutants; rtitsim reports an error at or before its offset for %" PRIu64
	       ", later for %" PRIu64 " (and for %" PRIu64 " where libipt names only the PSB it"
	       " synchronised at, no packet; for %" PRIu64 " where it names an unmutated packet"
	       " before the mutated one, at which rtitsim or later errs, %" PRIu64 " of them the PSB"
	       " of the PSB+ it is in, at which rtitsim errs inside that PSB+), none for %" PRIu64 "\n",
	       ipt_vectors, ipt_err, ipt_same, ipt_later, ipt_sync, ipt_before + ipt_psbplus,
	       ipt_psbplus, ipt_none);
#endif
	if (silent > max_silent)
		printf("FAIL: %" PRIu64 " silently wrong mutants, more than the %" PRIu64
		       " allowed (the target is 0)\n", silent, max_silent);
	int rc = silent > max_silent;
#ifdef HAVE_LIBIPT
	if (ipt_later > max_ipt_later || ipt_none > max_ipt_none) {
		printf("FAIL: libipt rejects %" PRIu64 " mutants at an earlier packet (at most %"
		       PRIu64 " allowed) and %" PRIu64 " that rtitsim does not reject (at most %"
		       PRIu64 "): `mutate --show-later N` and `--show-libipt N` list them\n",
		       ipt_later, max_ipt_later, ipt_none, max_ipt_none);
		rc = 1;
	}
#endif
	return rc;
}
