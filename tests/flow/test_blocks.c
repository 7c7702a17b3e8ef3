/*
 * test_blocks.c - the flow decoder's block mode (cfg.on_block, issue 20):
 *
 *   - on the golden vectors named below, each traced from its first
 *     instruction to its last with nothing lost (no overflow, no filter,
 *     no stop), the blocks are the ground truth's records (the
 *     simulator's .flow) folded by flow.h's rule (tests/common/flow_fold.h),
 *     block by block: first and last IP, the edge's end, the instruction
 *     count, the kind and class;
 *   - on every golden vector, block mode gives the flow record mode gives,
 *     folded, with the same notes (kind, offset, count, code) and the
 *     same error count: block mode is never less strict;
 *   - loops (the golden vectors mostly run their code once, so the runs
 *     of plain instructions the walk takes in one step, D97, need code
 *     that runs again): in both dialects, record mode against the truth
 *     (rtit_flow_verify) and block mode against the truth folded.
 *
 * Usage: test_blocks GOLDEN_DIR
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/flow.h"
#include "rtit/scenario.h"
#include "flow_fold.h"
#include "flow_loop.h"
#include "session_mem.h"

/* Traced whole: the truth's every record is in the trace. */
static const char *const whole[] = {
	"pt_branches", "pt_cyc_standalone", "pt_erratum_bdm64", "pt_erratum_bdm64_off",
	"pt_init_bsp", "pt_init_sipi", "pt_ip_compression", "pt_ip_full", "pt_ip_update48",
	"pt_long_tnt", "pt_mov_cr3", "pt_pebs", "pt_pebs_lbr", "pt_pebs_lbr_blocks", "pt_psb",
	"pt_ptwrite", "pt_ret_compression", "pt_table55_near", "pt_task_switch", "pt_timing",
	"pt_vmx", "pt_vmx_event_trace", "rtit_cycle_accurate", "rtit_e1_far_fup",
	"rtit_e3_psb_late", "rtit_e6_cycle_minus_one", "rtit_e7_first_mtc",
	"rtit_lip_compression", "rtit_mtc", "rtit_mwait", "rtit_pcc",
	"rtit_psb_mid_instruction", "rtit_psb_pkt_cnt", "rtit_ret_compression",
	"rtit_table19_branches"
};
static bool all;	/* --all: every vector against the truth (to list them) */

static void on_rec(void *opaque, const struct rtit_sim_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		flow_fold_rec(opaque, &r[i]);
}

static void on_block(void *opaque, const struct rtit_flow_block *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		flow_fold_block(opaque, &b[i]);
}

static void on_note(void *opaque, const struct rtit_flow_note *n)
{
	flow_fold_note(opaque, n);
}

/* Decodes @m's trace in record (blocks false) or block mode into @f;
 * returns the error count. */
static int decode(const struct session_mem *m, bool blocks, struct flow_fold *f)
{
	struct rtit_flow_cfg c;
	struct rtit_flow_dec *d;
	session_mem_flow_cfg(m, &c);
	c.mem = m->trace;
	c.mem_len = m->tlen;
	c.on_note = on_note;
	c.opaque = f;
	if (blocks)
		c.on_block = on_block;
	else
		c.on_rec = on_rec;
	if (rtit_flow_dec_new(&d, &c) < 0)
		return -1;
	int r = rtit_flow_dec_run(d);
	rtit_flow_dec_free(d);
	return r;
}

static bool is_whole(const char *name)
{
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		if (whole[i] && !strcmp(whole[i], name))
			return true;
	return false;
}

/* One vector: 0 when it passes, else 1 after a line. */
static int check(const char *dir, const char *file, int *nwhole)
{
	char path[1024], e[1200], name[256];
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	struct session_mem m;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 4), file);
	if (rtit_scenario_parse_file(path, &sc, &err) < 0) {
		printf("FAIL %s: %s\n", name, err.text);
		return 1;
	}
	if (session_mem_run(&sc, &m, true, e, sizeof(e)) < 0) {
		printf("FAIL %s: %s\n", name, e);
		rtit_scenario_fini(&sc);
		return 1;
	}
	struct flow_fold recs, blks, truth, dec;
	flow_fold_init(&recs);
	flow_fold_init(&blks);
	int rr = decode(&m, false, &recs), rb = decode(&m, true, &blks);
	int bad = 0;
	if (rr != rb || recs.hash != blks.hash || recs.blocks != blks.blocks ||
	    recs.insns != blks.insns) {
		printf("FAIL %s: block mode: %" PRIu64 " blocks, %" PRIu64 " instructions, %d errors;"
		       " records folded: %" PRIu64 ", %" PRIu64 ", %d (or other notes)\n", name,
		       blks.blocks, blks.insns, rb, recs.blocks, recs.insns, rr);
		bad = 1;
	}
	if (!bad && (all || is_whole(name))) {
		flow_fold_init(&truth);
		flow_fold_init(&dec);
		truth.no_notes = dec.no_notes = true;
		for (size_t i = 0; i < m.nrecs; i++)
			flow_fold_rec(&truth, &m.recs[i]);
		flow_fold_close(&truth);
		decode(&m, true, &dec);
		flow_fold_close(&dec);
		if (truth.hash != dec.hash || truth.blocks != dec.blocks || truth.insns != dec.insns) {
			printf("FAIL %s: %" PRIu64 " blocks, %" PRIu64 " instructions; the truth folded:"
			       " %" PRIu64 ", %" PRIu64 "\n", name, dec.blocks, dec.insns, truth.blocks,
			       truth.insns);
			bad = 1;
		} else {
			printf("ok %s: %" PRIu64 " blocks, %" PRIu64 " instructions, as the truth\n", name,
			       dec.blocks, dec.insns);
			++*nwhole;
		}
	}
	session_mem_free(&m);
	rtit_scenario_fini(&sc);
	return bad;
}

/* Loops, traced whole: short blocks and branches of every kind (the
 * benchmark's loop), and long runs of plain instructions. */
static const char loops[] =
	"name blocks_loops\n"
	FLOW_LOOP_HEAD("300")
	"    mov r13d, 3\n"
	"long:\n"
	"    add r8, 1\n    add r9, 2\n    xor r10, r8\n    lea r11, [r9 + r8]\n"
	"    add r8, 1\n    add r9, 2\n    xor r10, r8\n    lea r11, [r9 + r8]\n"
	"    add r8, 1\n    add r9, 2\n    xor r10, r8\n    lea r11, [r9 + r8]\n"
	"    add r8, 1\n    add r9, 2\n    xor r10, r8\n    lea r11, [r9 + r8]\n"
	"    dec r13d\n"
	"    jnz long\n"
	FLOW_LOOP_TAIL;

/* The loops in one dialect: 0 when they pass, else 1 after a line. */
static int check_loops(const char *setup, const char *what)
{
	char text[sizeof(loops) + 256], e[1200];
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	struct session_mem m;
	snprintf(text, sizeof(text), "%s%s", loops, setup);
	if (rtit_scenario_parse_string(text, "blocks_loops", &sc, &err) < 0 ||
	    session_mem_run(&sc, &m, true, e, sizeof(e)) < 0) {
		printf("FAIL loops (%s): cannot run: %s%s\n", what, err.text, e);
		return 1;
	}
	struct rtit_flow_cfg c;
	struct rtit_flow_verify_result res;
	session_mem_flow_cfg(&m, &c);
	int ok = rtit_flow_verify(m.trace, m.tlen, &c, m.recs, m.nrecs, &res);
	struct flow_fold truth, dec;
	flow_fold_init(&truth);
	flow_fold_init(&dec);
	truth.no_notes = dec.no_notes = true;
	/* RTIT: the partial TNT is never written at the end, so the last
	 * instructions after the last packet are not in the trace (fewer
	 * than a loop's iteration: a bound, not an expectation) */
	size_t upto = m.nrecs - (res.cmp.trailing < 64 ? res.cmp.trailing : 0);
	for (size_t i = 0; i < upto; i++)
		flow_fold_rec(&truth, &m.recs[i]);
	flow_fold_close(&truth);
	int rb = decode(&m, true, &dec);
	flow_fold_close(&dec);
	int bad = 0;
	if (ok != 1 || res.cmp.compared != upto || res.cmp.compared < m.nrecs / 2) {
		printf("FAIL loops (%s): records: %s %s (%" PRIu64 " of %zu compared)\n", what,
		       res.cmp.mm.what, res.first_error, res.cmp.compared, m.nrecs);
		bad = 1;
	}
	if (rb != 0 || truth.hash != dec.hash || truth.blocks != dec.blocks ||
	    truth.insns != dec.insns) {
		printf("FAIL loops (%s): %" PRIu64 " blocks, %" PRIu64 " instructions, %d errors;"
		       " the truth folded: %" PRIu64 ", %" PRIu64 "\n", what, dec.blocks, dec.insns,
		       rb, truth.blocks, truth.insns);
		bad = 1;
	}
	if (!bad)
		printf("ok loops (%s): %zu records; %" PRIu64 " blocks, %" PRIu64 " instructions,"
		       " as the truth\n", what, m.nrecs, dec.blocks, dec.insns);
	session_mem_free(&m);
	rtit_scenario_fini(&sc);
	return bad;
}

/*
 * A walk that no packet ends (hand-made, both dialects): the image at
 * 0x401000 is 20 NOPs (90) and JMP rel8 -22 (eb ea) back to the first,
 * a loop that sends no packet (RTIT Table 19, SDM Table 33-1: a direct
 * JMP sends none); the trace enables tracing there and then has a TNT
 * that no instruction of the loop can use, so the walk runs into
 * max_walk (here 4096, batch_cap 1024) and fails: the error names the
 * packet the walk started from (the enable; its message names the TNT in
 * view), which sent the walk into every instruction it made.
 *   RTIT: PSB (4.2.1: C0 00 x8), FUP.PGE 0x401000 (85 00 10 40 00:
 *   CNT=01 Zext=1, Table 18), TNT with one bit (0x06: 4.2.2).
 *   Intel PT: PSB (02 82 x8), PSBEND (02 23), MODE.Exec CS.L=1 (99 01),
 *   TIP.PGE 0x401000 (71: IPBytes=011b, six bytes, Table 33-18), TNT-8
 *   with one bit (0x06, Table 33-15).
 * The instructions walked are provisional until a packet confirms them;
 * D98: once max_hold of them are provisional and the walk goes on, they
 * are taken as certain.  With max_hold 1024: 3 x 1024 = 3072 instructions
 * are handed out (taken as certain at the 1025th, 2049th and 3073rd), the
 * last 1024 are dropped with the error, in record mode and in block mode
 * alike (block mode keeps a run of 20 in one record: it once counted
 * records there, and handed out none).  With the default max_hold (D199:
 * 65536, more than max_walk) none is handed out: the error drops all 4096.
 */
static const uint8_t lw_img[22] = {
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xeb, 0xea,
};
static const uint8_t lw_rtit[] = {
	0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0x85, 0x00, 0x10, 0x40, 0x00, 0x06,
};
static const uint8_t lw_pt[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x23, 0x99, 0x01,
	0x71, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x06,
};

static int lw_read(void *opaque, uint64_t addr, uint8_t *buf, size_t n)
{
	(void)opaque;
	if (addr < 0x401000 || addr - 0x401000 > sizeof(lw_img) ||
	    n > sizeof(lw_img) - (addr - 0x401000))
		return -1;
	memcpy(buf, lw_img + (addr - 0x401000), n);
	return 0;
}

static uint64_t lw_err;	/* the last error's offset */

static void lw_note(void *opaque, const struct rtit_flow_note *n)
{
	struct flow_fold *f = opaque;
	if (n->kind == RTIT_FLOW_N_ERROR)
		lw_err = n->offset;
	flow_fold_note(f, n);
}

static int check_long_walk(int dialect, const uint8_t *t, size_t tn, size_t err_off,
			   uint32_t hold, uint64_t want, const char *what)
{
	struct flow_fold f[2];
	int errs[2];
	uint64_t err_at[2];
	for (int blocks = 0; blocks < 2; blocks++) {
		struct rtit_flow_cfg c;
		struct rtit_flow_dec *d;
		rtit_flow_cfg_default(&c);
		c.dialect = dialect;
		c.mem = t;
		c.mem_len = tn;
		c.read_mem = lw_read;
		c.max_walk = 4096;
		c.batch_cap = 1024;
		c.max_hold = hold;	/* 0: the default */
		c.on_note = lw_note;
		c.opaque = &f[blocks];
		if (blocks)
			c.on_block = on_block;
		else
			c.on_rec = on_rec;
		flow_fold_init(&f[blocks]);
		lw_err = 0;
		if (rtit_flow_dec_new(&d, &c) < 0)
			return printf("FAIL long walk (%s): no decoder\n", what), 1;
		errs[blocks] = rtit_flow_dec_run(d);
		err_at[blocks] = lw_err;
		flow_fold_close(&f[blocks]);
		rtit_flow_dec_free(d);
	}
	/* one error, at the enable; the instructions as D98 says; block mode
	 * the same flow and notes */
	if (errs[0] != 1 || errs[1] != 1 || f[0].insns != want || f[1].insns != want ||
	    err_at[0] != err_off || err_at[1] != err_off ||
	    f[0].hash != f[1].hash || f[0].blocks != f[1].blocks) {
		printf("FAIL long walk (%s, max_hold %u): record mode %" PRIu64 " instructions, %d errors"
		       " (at %" PRIu64 "); block mode %" PRIu64 ", %d (at %" PRIu64 "); want %" PRIu64
		       " and 1 error at %zu in both, the same blocks and notes\n", what, hold, f[0].insns,
		       errs[0], err_at[0], f[1].insns, errs[1], err_at[1], want, err_off);
		return 1;
	}
	printf("ok long walk (%s, max_hold %u): %" PRIu64 " instructions and the error, in both modes\n",
	       what, hold, want);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	all = argc == 3 && !strcmp(argv[2], "--all");
	if (argc != 2 && !all) {
		fprintf(stderr, "usage: test_blocks GOLDEN_DIR\n");
		return 2;
	}
	DIR *dir = opendir(argv[1]);
	if (!dir) {
		fprintf(stderr, "test_blocks: cannot open %s\n", argv[1]);
		return 2;
	}
	char *names[512];
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dir)) && n < 512) {
		size_t l = strlen(de->d_name);
		if (l > 4 && !strcmp(de->d_name + l - 4, ".scn"))
			names[n++] = strdup(de->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(names[0]), cmp_names);
	int fails = 0, nwhole = 0;
	for (size_t i = 0; i < n; i++) {
		fails += check(argv[1], names[i], &nwhole);
		free(names[i]);
	}
	fails += check_loops("dialect rtit\nmsr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x280d\n",
			     "RTIT, Cmprs_Ret");
	fails += check_loops("dialect rtit\nmsr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x200d\n",
			     "RTIT");
	fails += check_loops("dialect pt\nmsr IA32_RTIT_CTL = 0x200d\n", "Intel PT");
	fails += check_long_walk(RTIT_DIALECT_RTIT, lw_rtit, sizeof(lw_rtit), 9, 1024, 3072, "RTIT");
	fails += check_long_walk(RTIT_DIALECT_PT, lw_pt, sizeof(lw_pt), 20, 1024, 3072, "Intel PT");
	fails += check_long_walk(RTIT_DIALECT_RTIT, lw_rtit, sizeof(lw_rtit), 9, 0, 0, "RTIT");
	fails += check_long_walk(RTIT_DIALECT_PT, lw_pt, sizeof(lw_pt), 20, 0, 0, "Intel PT");
	size_t want = 0;
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		want += whole[i] != NULL;
	printf("%zu vectors: %d failed; %d of %zu checked against the truth\n", n, fails, nwhole,
	       want);
	return fails || (size_t)nwhole != want ? 1 : 0;
}
