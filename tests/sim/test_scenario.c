/*
 * test_scenario.c - the scenario format: a complete example parsed and
 * run end to end, one-line errors with file and line for bad input,
 * loader errors (malformed ELF, overlap, entry outside).
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "rtit/scenario.h"
#include <unicorn/unicorn.h>

#include "sim_test.h"

#ifndef DOCS_DIR
#define DOCS_DIR "docs"
#endif
#ifndef SCN_DIR
#define SCN_DIR "tests/sim/scenarios"
#endif

Test(sim_scenario, example_parses)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	int r = rtit_scenario_parse_file(SCN_DIR "/example.scn", &sc, &err);
	cr_assert_eq(r, 0, "%s", err.text);
	cr_expect_str_eq(sc.name, "example");
	cr_expect_str_eq(sc.describe, "loop with a call, a page fault and an injected interrupt");
	cr_expect_eq(sc.dialect, RTIT_DIALECT_RTIT);
	cr_expect_str_eq(sc.cpu, "silvermont");
	cr_expect_eq(sc.mode, 64);
	cr_expect_eq(sc.code_kind, RTIT_SCN_CODE_ASM);
	cr_expect_eq(sc.load, 0x401000);
	cr_expect_str_eq(sc.entry.label, "start");
	cr_expect_eq(sc.asm_line, 8);
	cr_assert_eq(sc.nmsrs, 2);
	cr_expect_eq(sc.msrs[0].msr, 0x768);
	cr_expect_eq(sc.msrs[0].value, 0x2005);
	cr_expect_eq(sc.msrs[0].line, 36);
	cr_assert_eq(sc.nparams, 2);
	cr_expect_str_eq(sc.params[1].key, "drain");
	cr_expect_str_eq(sc.params[1].value, "1/4");
	cr_expect_eq(sc.clock.cpi[RTIT_IC_COND], 2);
	cr_expect_eq(sc.clock.cpi[RTIT_IC_RET], 1);
	cr_assert_eq(sc.nevents, 2);
	cr_expect_eq(sc.events[0].ev.kind, RTIT_EV_EXT_INTERRUPT);
	cr_expect_eq(sc.events[0].ev.vector, 0x20);
	cr_expect_eq(sc.events[0].ev.at, 4);
	cr_expect_str_eq(sc.events[1].at.label, "after_pf");
	cr_expect_eq(sc.events[1].ev.value, 2);
	cr_expect_eq(sc.budget, 100000);
	cr_expect_eq(sc.cr3, 0x1000);
	cr_assert_eq(sc.nhandlers, 2);
	cr_assert_eq(sc.nexpect, 16);
	cr_expect_str_eq(sc.expect[1].text, "FUP.PGE 0x401000");
	cr_expect_eq(sc.expect[1].line, 47);
	rtit_scenario_fini(&sc);
}

Test(sim_scenario, example_runs)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	cr_assert_eq(rtit_scenario_parse_file(SCN_DIR "/example.scn", &sc, &err), 0,
		     "%s", err.text);
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&sc, &cfg);
	struct st_run run;
	memset(&run, 0, sizeof(run));
	cfg.consumer.on_batch = st_on_batch;
	cfg.consumer.opaque = &run;
	struct rtit_sim *sim;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_scenario_setup(&sc, sim, &err), 0, "%s", err.text);
	struct rtit_sim_status st;
	int r = rtit_sim_run(sim, &st);
	cr_expect_eq(r, 0, "%s", st.msg);
	cr_expect_eq(st.stop, RTIT_SIM_STOP_HALTED, "%s", st.msg);
	/* mov, 3 x (call, nop, ret, loop) = 13 insns + the #PF handler (3),
	 * the interrupt handler (1), hlt */
	cr_expect_eq(st.insns, 1 + 12 + 3 + 1 + 1, "%" PRIu64, st.insns);
	cr_expect_eq(st.events, 3);
	size_t nint = 0, npf = 0, nfreq = 0;
	for (size_t i = 0; i < run.n; i++) {
		const struct rtit_sim_rec *x = &run.recs[i];
		cr_expect_eq(x->cr3, 0x1000);
		if (x->kind != RTIT_SIM_EVENT)
			continue;
		nint += x->cls == RTIT_EV_EXT_INTERRUPT;
		npf += x->cls == RTIT_EV_EXCEPTION && x->vector == 14;
		nfreq += x->cls == RTIT_EV_FREQ_CHANGE;
	}
	cr_expect_eq(nint + npf + nfreq, 3);
	cr_expect_eq(npf, 1);
	uint64_t rbx;
	rtit_sim_get_reg(sim, UC_X86_REG_RBX, &rbx);
	cr_expect_eq(rbx, 0x1234);
	rtit_sim_free(sim);
	st_free(&run);
	rtit_scenario_fini(&sc);
}

struct bad {
	const char *text;
	const char *error;	/* exact one-line message */
};

#define CODE "code asm load=0x1000\n nop\nend\n"

static const struct bad bad_cases[] = {
	{ "dialect arm\n" CODE, "t.scn:1: dialect: expected rtit or pt" },
	{ CODE "mode 16\n", "t.scn:4: mode: expected 64 or 32" },
	{ CODE "frobnicate 1\n", "t.scn:4: unknown directive 'frobnicate'" },
	{ CODE "msr FOO = 1\n", "t.scn:4: msr: unknown MSR name 'FOO' for dialect rtit" },
	{ CODE "msr RTIT_CTL 1\n", "t.scn:4: msr: expected '= VALUE'" },
	{ CODE "msr RTIT_CTL = 12z\n", "t.scn:4: msr: bad number '12z'" },
	{ "dialect pt\n" CODE "msr RTIT_LIP0 = 1\n",
	  "t.scn:5: msr: unknown MSR name 'RTIT_LIP0' for dialect pt" },
	{ CODE "event at insn x: nmi\n", "t.scn:4: event: bad instruction count 'x'" },
	{ CODE "event at insn 5 nmi\n",
	  "t.scn:4: event: expected 'at insn N: KIND' or 'at ip ADDR: KIND'" },
	{ CODE "event at insn 5: boom\n",
	  "t.scn:4: event: unknown kind 'boom' (interrupt, nmi, smi, vmexit, freq, sleep, msr,"
	  " tsx-abort, init, sipi, uintr)" },
	{ CODE "event at insn 5: sipi\n", "t.scn:4: event sipi: missing vector=N" },
	{ CODE "event at insn 5: init ap=2\n", "t.scn:4: event init: ap must be 0 (BSP) or 1 (AP)" },
	{ CODE "event at insn 5: uintr vector=64\n", "t.scn:4: event uintr: vector 64 > 63" },
	{ CODE "event at insn 5: tsx-abort status=0x100000000\n",
	  "t.scn:4: event tsx-abort: status 0x100000000 is wider than EAX" },
	{ CODE "event at insn 5: tsx-abort code=1\n",
	  "t.scn:4: event tsx-abort: unknown argument 'code'" },
	{ CODE "task 0x28\n", "t.scn:4: task: missing tss=ADDRESS" },
	{ CODE "task 0x28 tss=0x1000 mode=8\n",
	  "t.scn:4: task: unknown or bad argument 'mode=8' (tss=ADDRESS, mode=16|32)" },
	{ CODE "tr\n", "t.scn:4: tr: expected 'tr SELECTOR'" },
	{ CODE "handler 32 = task\n", "t.scn:4: handler: expected 'handler VECTOR = task SELECTOR'" },
	{ CODE "event at insn 5: vmexit reason=0\n",
	  "t.scn:4: event vmexit: basic exit reason 0 needs vector=N" },
	{ CODE "event at insn 5: vmexit reason=48 vector=14\n",
	  "t.scn:4: event vmexit: vector=N is only for basic exit reasons 0 (exception or NMI)"
	  " and 1 (external interrupt)" },
	{ CODE "event at insn 5: vmexit reason=0x100000000\n",
	  "t.scn:4: event vmexit: reason 0x100000000 is wider than the 32-bit exit-reason field" },
	{ CODE "rtm maybe\n", "t.scn:4: rtm: expected on or off, then optionally lines=N" },
	{ "dialect pt\n" CODE "rtm on lines=0\n", "t.scn:5: rtm: lines must be 1..65536" },
	{ "dialect pt\n" CODE "rtm on size=3\n", "t.scn:5: rtm: unknown argument 'size'" },
	{ "dialect pt\n" CODE "rtm on lines\n", "t.scn:5: rtm: expected lines=N, got 'lines'" },
	{ CODE "rtm on\n",
	  "t.scn:4: rtm on: the rtit dialect models Silvermont, which has no TSX (XBEGIN is #UD"
	  " there); use dialect pt" },
	{ CODE "event at insn 5: interrupt\n", "t.scn:4: event interrupt: missing vector=N" },
	{ CODE "event at insn 5: interrupt vector=300\n",
	  "t.scn:4: event interrupt: vector 300 > 255" },
	{ CODE "event at insn 5: freq\n", "t.scn:4: event freq: missing ratio=N" },
	{ CODE "event at insn 5: sleep cstate=1\n", "t.scn:4: event sleep: missing ticks=N" },
	{ CODE "event at ip 0x10: nmi color=3\n", "t.scn:4: event nmi: unknown argument 'color'" },
	{ CODE "clock cpi.bogus=3\n", "t.scn:4: clock: unknown instruction class 'bogus'" },
	{ CODE "clock core_ratio=0\n", "t.scn:4: clock: core_ratio must be 1..255" },
	{ CODE "clock speed=3\n", "t.scn:4: clock: unknown key 'speed'" },
	{ CODE "budget 0\n", "t.scn:4: budget: must be at least 1" },
	{ CODE "budget 5\nbudget 6\n", "t.scn:5: 'budget' given twice (first on line 4)" },
	{ CODE "handler 256 = 0x10\n", "t.scn:4: handler: bad vector '256' (0..255)" },
	{ CODE "handler 3 = 9lives\n",
	  "t.scn:4: handler: '9lives' is neither a number nor a label" },
	{ CODE "reg xmm0 = 1\n", "t.scn:4: reg: unknown register 'xmm0'" },
	{ CODE "cpl 1\n", "t.scn:4: cpl: expected 0 or 3" },
	{ CODE "end\n", "t.scn:4: 'end' without an open code asm or expect block" },
	{ "code asm\n nop\nend\n", "t.scn:1: code asm: missing load=ADDRESS" },
	{ "code asm load=0x1000\n nop\n", "t.scn:1: code asm block is not closed by 'end'" },
	{ "code elf\n", "t.scn:1: code elf: missing path=FILE" },
	{ "code flat path=x.bin\n", "t.scn:1: code flat: needs path=FILE and load=ADDRESS" },
	{ CODE "code elf path=a\n", "t.scn:4: 'code' given twice (first on line 1)" },
	{ "name x\n", "t.scn: no 'code' line: nothing to run" },
	{ CODE "describe no quotes\n", "t.scn:4: describe: expected \"text in quotes\"" },
	{ CODE "expect\n PSB\n", "t.scn:4: expect block is not closed by 'end'" },
	{ CODE "mem 0x1000\n", "t.scn:4: mem: expected 'mem ADDRESS SIZE'" },
	{ CODE "param = 3\n", "t.scn:4: param: expected 'param KEY = VALUE'" },
};

Test(sim_scenario, bad_lines)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct rtit_scenario sc;
		struct rtit_scn_error err;
		int r = rtit_scenario_parse_string(bad_cases[i].text, "t.scn", &sc, &err);
		cr_expect_lt(r, 0, "case %zu accepted: %s", i, bad_cases[i].text);
		cr_expect_str_eq(err.text, bad_cases[i].error, "case %zu", i);
		rtit_scenario_fini(&sc);
	}
}

Test(sim_scenario, crlf_bom_tabs_comments)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	cr_assert_eq(rtit_scenario_parse_string(
		"\xef\xbb\xbfname\tx   # trailing comment\r\n"
		"describe \"a # inside quotes\"\r\n"
		"code asm load=0x1000\r\n nop\r\nend\r\n"
		"\tbudget\t 10\r\n", "t.scn", &sc, &err), 0, "%s", err.text);
	cr_expect_str_eq(sc.name, "x");
	cr_expect_str_eq(sc.describe, "a # inside quotes");
	cr_expect_eq(sc.budget, 10);
	cr_expect_str_eq(sc.asm_text, " nop\n");
	rtit_scenario_fini(&sc);
}

Test(sim_scenario, unknown_params_are_kept)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	cr_assert_eq(rtit_scenario_parse_string(CODE "param whatever.x = a b c\n",
						"t.scn", &sc, &err), 0, "%s", err.text);
	cr_assert_eq(sc.nparams, 1);
	cr_expect_str_eq(sc.params[0].key, "whatever.x");
	cr_expect_str_eq(sc.params[0].value, "a b c");
	cr_expect_eq(sc.params[0].line, 4);
	rtit_scenario_fini(&sc);
}

static int setup_error(const char *text, char *out, size_t size)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	int r = rtit_scenario_parse_string(text, "s.scn", &sc, &err);
	if (r < 0) {
		snprintf(out, size, "parse: %.400s", err.text);
		return r;
	}
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&sc, &cfg);
	struct rtit_sim *sim;
	r = rtit_sim_new(&sim, &cfg);
	if (r == 0) {
		r = rtit_scenario_setup(&sc, sim, &err);
		snprintf(out, size, "%.500s", r < 0 ? err.text : "");
		rtit_sim_free(sim);
	}
	rtit_scenario_fini(&sc);
	return r;
}

Test(sim_scenario, setup_errors)
{
	char e[512];
	/* assembler error mapped to the scenario's line (3) */
	cr_expect_lt(setup_error("name x\ncode asm load=0x1000\n nop\n movz eax, 1\nend\n",
				 e, sizeof(e)), 0);
	cr_expect(!strncmp(e, "s.scn:4: as: ", 13), "%s", e);
	cr_expect_lt(setup_error("code asm load=0x1000\n nop\nend\nhandler 3 = nowhere\n",
				 e, sizeof(e)), 0);
	cr_expect_str_eq(e, "s.scn:4: unknown label 'nowhere'");
	cr_expect_lt(setup_error("code asm load=0x1000\n nop\nend\nmem 0x1000 0x10\n",
				 e, sizeof(e)), 0);
	cr_expect(strstr(e, "s.scn") && strstr(e, "overlaps"), "%s", e);
	cr_expect_lt(setup_error("code elf path=/nonexistent.elf\n", e, sizeof(e)), 0);
	cr_expect_str_eq(e, "s.scn: /nonexistent.elf: No such file or directory");
	cr_expect_lt(setup_error("code asm load=0x1000 entry=0x9000\n nop\nend\n",
				 e, sizeof(e)), 0);
	cr_expect_str_eq(e, "s.scn:1: entry 0x9000 is not mapped");
	cr_expect_lt(setup_error("code asm load=0x1000\n nop\nend\nmsr 0x123 = 5\n",
				 e, sizeof(e)), 0);
	cr_expect_str_eq(e, "s.scn:4: msr 0x123 = 0x5: refused");
}

Test(sim_scenario, loader_errors)
{
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	struct rtit_sim *sim;
	char path[] = "/tmp/rtitsim-bad-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "\177ELF garbage that is not an ELF", 31), 31);
	close(fd);
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_expect_lt(rtit_sim_load_elf(sim, path), 0);
	cr_expect(strstr(rtit_sim_errmsg(sim), "not an ELF") != NULL, "%s",
		  rtit_sim_errmsg(sim));
	rtit_sim_free(sim);
	unlink(path);

	/* flat: entry outside, overlap with the stack */
	static const uint8_t code[] = { 0x90, 0xf4 };
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_expect_lt(rtit_sim_load_flat(sim, code, 2, 0x1000, 0x2000), 0);
	cr_expect_str_eq(rtit_sim_errmsg(sim),
			 "entry 0x2000 is outside the image 0x1000-0x1002");
	cr_expect_lt(rtit_sim_load_flat(sim, code, 2, 0x7fff8000, 0x7fff8000), 0);
	cr_expect(strstr(rtit_sim_errmsg(sim), "overlaps") != NULL, "%s",
		  rtit_sim_errmsg(sim));
	cr_expect_eq(rtit_sim_load_flat(sim, code, 2, 0x1000, 0x1000), 0);
	struct rtit_sim_status st;
	cr_expect_eq(rtit_sim_run(sim, &st), 0, "%s", st.msg);
	cr_expect_eq(st.insns, 2);
	rtit_sim_free(sim);
}

/* docs/scenario.md shows tests/sim/scenarios/example.scn verbatim. */
Test(sim_scenario, docs_example_is_the_tested_file)
{
	FILE *d = fopen(DOCS_DIR "/scenario.md", "r"), *e = fopen(SCN_DIR "/example.scn", "r");
	cr_assert(d && e);
	static char doc[65536], ex[16384];
	size_t nd = fread(doc, 1, sizeof(doc) - 1, d), ne = fread(ex, 1, sizeof(ex) - 1, e);
	doc[nd] = 0;
	ex[ne] = 0;
	fclose(d);
	fclose(e);
	char *start = strstr(doc, "```\n");
	cr_assert(start);
	start += 4;
	char *end = strstr(start, "```\n");
	cr_assert(end);
	*end = 0;
	cr_expect_str_eq(start, ex);
}

Test(sim_scenario, flat_code_and_msr_presets)
{
	char bin[] = "/tmp/rtitsim-flat-XXXXXX";
	int fd = mkstemp(bin);
	cr_assert_geq(fd, 0);
	static const uint8_t code[] = { 0x90, 0xeb, 0x00, 0xf4 };	/* nop; jmp +0; hlt */
	cr_assert_eq(write(fd, code, sizeof(code)), (ssize_t)sizeof(code));
	close(fd);
	char text[512];
	snprintf(text, sizeof(text),
		 "dialect pt\ncode flat path=%s load=0x2000 entry=0x2001\n"
		 "msr RTIT_CTL = 0x2001\nmsr IA32_RTIT_STATUS = 0\n", bin);
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	cr_assert_eq(rtit_scenario_parse_string(text, "f.scn", &sc, &err), 0, "%s", err.text);
	cr_expect_eq(sc.msrs[0].msr, 0x570);
	cr_expect_eq(sc.msrs[1].msr, 0x571);
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&sc, &cfg);
	struct st_run run;
	memset(&run, 0, sizeof(run));
	cfg.consumer.on_batch = st_on_batch;
	cfg.consumer.opaque = &run;
	struct rtit_sim *sim;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_scenario_setup(&sc, sim, &err), 0, "%s", err.text);
	struct rtit_sim_status st;
	cr_expect_eq(rtit_sim_run(sim, &st), 0, "%s", st.msg);
	cr_assert_eq(run.n, 2);
	cr_expect_eq(run.recs[0].ip, 0x2001);
	cr_expect_eq(run.recs[0].cls, RTIT_IC_DIRECT_JMP);
	cr_expect_eq(run.recs[0].next_ip, 0x2003);
	cr_expect_eq(run.recs[1].cls, RTIT_IC_HLT);
	rtit_sim_free(sim);
	st_free(&run);
	rtit_scenario_fini(&sc);
	unlink(bin);
}

#include <dirent.h>

static uint64_t run_scenario(const char *path, struct rtit_sim_status *st)
{
	struct rtit_scenario sc;
	struct rtit_scn_error err;
	cr_assert_eq(rtit_scenario_parse_file(path, &sc, &err), 0, "%s", err.text);
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	rtit_scenario_config(&sc, &cfg);
	struct rtit_flow_writer w;
	cr_assert_eq(rtit_flow_writer_init(&w, NULL, NULL), 0);
	cfg.consumer.on_batch = rtit_flow_writer_on_batch;
	cfg.consumer.opaque = &w;
	struct rtit_sim *sim;
	cr_assert_eq(rtit_sim_new(&sim, &cfg), 0);
	cr_assert_eq(rtit_scenario_setup(&sc, sim, &err), 0, "%s", err.text);
	rtit_sim_run(sim, st);
	uint64_t d;
	cr_assert_eq(rtit_flow_writer_fini(&w, &d), 0);
	rtit_sim_free(sim);
	rtit_scenario_fini(&sc);
	return d;
}

/* Every scenario of tests/sim/scenarios runs to a normal stop, twice with
 * the same digest. */
Test(sim_scenario, all_scenarios_run_deterministically)
{
	DIR *d = opendir(SCN_DIR);
	cr_assert(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".scn"))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", SCN_DIR, e->d_name);
		struct rtit_sim_status s1, s2;
		uint64_t d1 = run_scenario(path, &s1), d2 = run_scenario(path, &s2);
		cr_expect(s1.stop == RTIT_SIM_STOP_HALTED || s1.stop == RTIT_SIM_STOP_END,
			  "%s: %s", e->d_name, s1.msg);
		cr_expect_eq(d1, d2, "%s: digests differ", e->d_name);
		cr_expect_eq(s1.insns, s2.insns);
		n++;
	}
	closedir(d);
	cr_expect_geq(n, 3);
}
