/*
 * cmd_run.c - `rtitsim run [SCENARIO|PROGRAM] [options]`: the simulator
 * and an encoder model together.  Writes the trace (the bytes as they land
 * in the output region, unwrapped, in order), a sideband file (the
 * configuration and digests), the ground-truth flow, and optionally a dump
 * that says what produced each packet.  With no file it runs a built-in
 * demo and prints that account.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "cli.h"
#include "util.h"
#include "run.h"
#include "bundle.h"
#include "outfile.h"
#include "demo_scenario.h"
#include "rtit/bundle.h"
#include "rtit/msr_rtit.h"
#include "rtit/print.h"
#include "rtit/encoder.h"
#include "rtit/session.h"
#include "rtit/msr_pt.h"
#include "rtit/scenario.h"
#include "rtit/sideband.h"
#include "rtit/version.h"

struct run {
	struct rtit_scenario sc;
	int dialect;
	FILE *trace, *account;
	struct rtit_session_result res;
	uint64_t off, listed, dropped;	/* the account's packets */
	bool progress, progress_shown;
	double t0, last;
	int write_errno;	/* the session's failed write's errno (D138) */
	/* the outputs: NULL when not written */
	FILE *sideband, *flow_bin, *flow_txt;
	const char *out, *stem;
	char prefix[512], bundle_out[1400];
	char stage[1100];	/* --bundle: the staging directory (outfile.h) */
};

static void run_usage(FILE *out)
{
	fputs("usage: rtitsim run [options] [SCENARIO.scn | PROGRAM [ARGS...]]\n"
	      "\n"
	      "Runs the program under the simulator and the encoder model of the scenario's\n"
	      "dialect (RTIT, or Intel PT with `dialect pt`).  SCENARIO is a scenario file\n"
	      "(docs/scenario.md; its options may also follow it).  PROGRAM is a Linux\n"
	      "x86-64 executable (static, static-pie or dynamic) run as a process with ARGS,\n"
	      "traced at CPL 3 only as `perf record -e intel_pt//u` (docs/linux.md); its\n"
	      "options come before it (`--` ends them), its stdout and stderr are rtitsim's\n"
	      "and rtitsim's own lines go to stderr.  With neither, a built-in demo runs end\n"
	      "to end: its packets are printed with what produced each, then the trace is\n"
	      "decoded again and checked against the simulator's flow (the verdict ends the\n"
	      "output).\n"
	      "\n"
	      "  PROGRAM only:\n"
	      "  --dialect rtit|pt  the encoder (default rtit)\n"
	      "  --env NAME=VALUE   adds to the default environment (PATH, HOME, LC_ALL, TERM)\n"
	      "  --seed N           AT_RANDOM's and getrandom's bytes (default 0)\n"
	      "  --writable DIR     the one directory the program may write under\n"
	      "  --stdin FILE       the program's standard input (default empty)\n"
	      "  --syscall-cycles N core cycles per system call (default 1000)\n"
	      "  --budget N         the instruction budget (default 100000000)\n"
	      "  --bare             a freestanding ELF: CPL 0 from its entry, all traced, ends at HLT\n"
	      "\n"
	      "  -o, --out PREFIX   write PREFIX.trace, PREFIX.sideband, PREFIX.flow and\n"
	      "                     PREFIX.flow.txt (default: the scenario's name; the demo\n"
	      "                     writes no files unless asked)\n"
	      "  --flow both|bin|txt|none  which ground-truth files to write (default both:\n"
	      "                     --verify and decode --check read PREFIX.flow, the golden\n"
	      "                     corpus compares PREFIX.flow.txt; `rtitsim flow\n"
	      "                     PREFIX.flow` prints the text of a binary one; the text\n"
	      "                     is ~100 bytes an instruction, the binary 1-2)\n"
	      "  --flow-version 1|2 PREFIX.flow's format (docs/formats.md): 2, the default,\n"
	      "                     codes each record in a few bytes; 1 holds each in its\n"
	      "                     64 canonical bytes (a bundle's default); both have\n"
	      "                     the same digest and every reader takes both\n"
	      "  --bundle DIR       write a self-contained vector into DIR (created if\n"
	      "                     missing): NAME.trace, .sideband, .flow, .flow.txt, the\n"
	      "                     program image (NAME.elf / NAME.bin), NAME.dump.txt,\n"
	      "                     .dump.jsonl, .events.txt and NAME.manifest.json, every\n"
	      "                     path relative to DIR (docs/formats.md \"Bundles\");\n"
	      "                     NAME is the scenario's name; --out and --flow are ignored.\n"
	      "                     A PROGRAM's bundle (NAME: its file name) holds every\n"
	      "                     file the process mapped, in DIR/NAME.files/ (D132).  The\n"
	      "                     bundle is written whole: staged in DIR/.NAME.part and\n"
	      "                     moved in at the end; interrupted or failed, DIR keeps\n"
	      "                     what it held (D135)\n"
	      "  --perf-data DIR    Intel PT: also write DIR/perf.data (and image.elf) as\n"
	      "                     `rtitsim perf-data PREFIX DIR` does (needs --out)\n"
	      "  --dump             print every packet: trace offset, bytes, the packet with\n"
	      "                     its full IP, its cause; packets lost in an overflow as\n"
	      "                     'dropped'\n"
	      "  --param KEY=VALUE  an encoder parameter (as a scenario's param line)\n"
	      "  --msr NAME=VALUE   an MSR preset (as a scenario's msr line)\n"
	      "  --verify           decode the trace again (rtitsim decode) and check that\n"
	      "                     the flow comes back whole (RTIT)\n"
	      "  -q, --quiet        print only errors and the digests (no progress)\n"
	      "  --progress         progress on stderr (instructions and events, packets,\n"
	      "                     bytes, rate) twice a second; the default when stderr\n"
	      "                     is a terminal and -q is not given\n"
	      "  --deliver insn|block|batch  how records reach the encoder (default batch;\n"
	      "                     the bytes must not depend on it)\n"
	      "\n"
	      "A scenario's expect block is compared with the packets produced.  Output\n"
	      "files are written under temporary names (NAME.part) and renamed when whole:\n"
	      "an interrupted or failed run leaves complete files or none.\n"
	      "\n"
	      "Exit status: 0 ok (a program exited, whatever its status: the sideband's\n"
	      "exit_status), 1 usage, 2 I/O, 4 bad scenario or program, 5 the packets differ\n"
	      "from the expect block, 6 the guest did not end normally (fault with no\n"
	      "handler, a signal, fork/exec, instruction budget exhausted).\n", out);
}

/* @msg, one line; "SOURCE:LINE: what" about a line the command line
 * appended says "rtitsim run: OPTION: what" (the option, not a line past
 * the end of the file). */
static void print_msg(const struct rtit_run_opts *o, const char *msg)
{
	size_t n = strlen(o->source);
	if (o->noptions && !strncmp(msg, o->source, n) && msg[n] == ':') {
		char *end;
		long line = strtol(msg + n + 1, &end, 10);
		long i = line - o->first_option_line;
		if (end != msg + n + 1 && *end == ':' && i >= 0 && i < o->noptions) {
			fprintf(stderr, "rtitsim run: %s:%s\n", o->options[i], end + 1);
			return;
		}
	}
	fprintf(stderr, "%s\n", msg);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Progress on stderr, on one line rewritten: at the first report (every
 * 2^20 records, session/run.c), then at most twice a second; so a run
 * of more than 2^20 records shows it however fast it is. */
static void on_progress(void *opaque, const struct rtit_session_progress *p)
{
	struct run *r = opaque;
	double t = now_s();
	if (!r->progress || (r->progress_shown && t - r->last < 0.5))
		return;
	r->last = t;
	r->progress_shown = true;
	fprintf(stderr, "\rrtitsim run: %.1f M instructions and events, %.1f M packets, %.1f MB,"
		" %.1f M records/s ", (double)p->records / 1e6, (double)p->packets / 1e6,
		(double)p->trace_bytes / 1e6, t > r->t0 ? (double)p->records / (t - r->t0) / 1e6 : 0.0);
}

/* The readable account: each packet, its bytes and why it was sent.
 * Columns: trace offset (or "dropped": the rules called for the packet,
 * the internal buffer did not take it, RTIT 4.2.5, SDM 33.3.8), up to 8
 * raw bytes (a longer packet: its first 6 and how many more), the packet
 * in the short form of the expect blocks (full IPs; at most 30
 * characters: a Long TNT's first bits and how many more), the rule and the
 * instruction or event that produced it.  The offsets are the packets'
 * order of acceptance, which is the trace's but under erratum E8. */
static void on_note(void *opaque, const struct rtit_enc_note *nt)
{
	struct run *r = opaque;
	char ip[64] = "", what[64], raw[40], off[16];
	uint64_t at = r->off;

	if (nt->dropped)
		r->dropped++;
	else
		r->listed++, r->off += nt->len;
	if (!r->account)
		return;
	if (nt->rec)
		snprintf(ip, sizeof(ip), "; %s at 0x%" PRIx64,
			 nt->rec->kind == RTIT_SIM_EVENT ? rtit_sim_event_name(nt->rec->cls) :
							   rtit_insn_class_name(nt->rec->cls),
			 nt->rec->ip);
	struct rtit_pktdec_item it = { .pkt = *nt->pkt, .ip = nt->ip };
	/* Intel PT: IPBytes 000b, the IP suppressed (SDM Table 33-18) */
	if (r->dialect == RTIT_DIALECT_PT && rtit_pkt_has_ip(nt->pkt->type) &&
	    nt->pkt->u.ip.ipc == 0)
		it.ip_status = 1;
	rtit_print_short(what, sizeof(what), (enum rtit_dialect)r->dialect, &it);
	size_t wl = strlen(what);
	if (wl > 30)	/* a Long TNT's bits: the first ones, "+N" more */
		snprintf(what + 26, sizeof(what) - 26, "+%zu", wl - 26);
	size_t n = nt->dropped ? 0 : nt->len, k = 0, show = n > 8 ? 6 : n;
	raw[0] = 0;
	for (size_t i = 0; i < show; i++)
		k += (size_t)snprintf(raw + k, sizeof(raw) - k, "%s%02x", i ? " " : "", nt->bytes[i]);
	if (show < n)
		snprintf(raw + k, sizeof(raw) - k, " +%zu", n - show);
	if (nt->dropped)
		snprintf(off, sizeof(off), "dropped");
	else
		snprintf(off, sizeof(off), "%08" PRIx64, at);
	fprintf(r->account, "  %-8s  %-23s  %-30s %s%s\n", off, nt->dropped ? "-" : raw, what,
		nt->why, ip);
}

/* An expect line's 'bytes' list (hex, blank-separated) against the
 * packet's SIZE bytes at trace offset OFF; names the first difference. */
static int expect_bytes(const char *where, int line, const char *list,
			const uint8_t *pkt, size_t size, uint64_t off)
{
	size_t i = 0;

	for (;;) {
		char *end;
		unsigned long v;

		while (*list == ' ' || *list == '\t')
			list++;
		if (!*list)
			break;
		v = strtoul(list, &end, 16);
		if (end == list || v > 0xff || (*end && *end != ' ' && *end != '\t')) {
			fprintf(stderr, "%s:%d: 'bytes' wants two-digit hex bytes, not '%s'\n",
				where, line, list);
			return -1;
		}
		list = end;
		if (i >= size || pkt[i] != v) {
			if (i >= size)
				fprintf(stderr, "%s:%d: the packet at trace offset %" PRIu64 " has %zu bytes, the expect line more\n",
					where, line, off, size);
			else
				fprintf(stderr, "%s:%d: byte %zu of the packet at trace offset %" PRIu64 " is %02x, expected %02lx\n",
					where, line, i, off, pkt[i], v);
			return -1;
		}
		i++;
	}
	if (i != size) {
		fprintf(stderr, "%s:%d: the packet at trace offset %" PRIu64 " has %zu bytes, the expect line %zu\n",
			where, line, off, size, i);
		return -1;
	}
	return 0;
}

/* Compares the trace with the scenario's expect block, in the short form
 * of rtit_print_short; a line with only a name matches any fields.
 * Returns 0 when they agree. */
static int check_expect(struct run *r, const uint8_t *trace, size_t len, bool cycle_acc)
{
	static struct rtit_pktdec d;
	struct rtit_pktdec_cfg cfg = { .dialect = (enum rtit_dialect)r->dialect,
				       .cycle_acc = cycle_acc && r->dialect == RTIT_DIALECT_RTIT,
				       .mem = trace, .mem_len = len };
	struct rtit_pktdec_item it;
	size_t k = 0;
	char got[96];
	const char *where = r->sc.path;

	rtit_pktdec_init(&d, &cfg);
	for (;;) {
		int ret = rtit_pktdec_next(&d, &it);
		if (ret < 0) {
			fprintf(stderr, "%s: the trace does not decode at offset %" PRIu64 ": %s\n",
				where, d.err.offset, d.err.why ? d.err.why : rtit_errstr(ret));
			return -1;
		}
		if (ret == 0)
			break;
		rtit_print_short(got, sizeof(got), (enum rtit_dialect)r->dialect, &it);
		if (k == r->sc.nexpect) {
			fprintf(stderr, "%s: packet %zu at trace offset %" PRIu64 " is '%s'; the expect block ends at line %d\n",
				where, k + 1, it.offset, got,
				k ? r->sc.expect[k - 1].line + 1 : 0);
			return -1;
		}
		/* The line without its comment (docs/scenario.md: '#' after
		 * whitespace starts one) and trailing blanks. */
		char want[160];
		snprintf(want, sizeof(want), "%s", r->sc.expect[k].text);
		for (char *c = want; *c; c++)
			if (*c == '#' && (c == want || c[-1] == ' ' || c[-1] == '\t')) {
				*c = 0;
				break;
			}
		/* '... bytes HEX HEX ...': the packet's bytes, exactly. */
		char *bytes = strstr(want, " bytes ");
		if (bytes) {
			*bytes = 0;
			bytes += strlen(" bytes ");
		}
		size_t wn = strlen(want);
		while (wn && (want[wn - 1] == ' ' || want[wn - 1] == '\t'))
			want[--wn] = 0;
		bool ok = strchr(want, ' ') ? !strcmp(want, got) :
			  !strncmp(want, got, wn) && (got[wn] == ' ' || !got[wn]);
		if (ok && bytes && expect_bytes(where, r->sc.expect[k].line, bytes,
						trace + it.offset, it.pkt.size, it.offset) < 0)
			return -1;
		if (!ok) {
			fprintf(stderr, "%s:%d: expected '%s', the trace has '%s' (packet %zu, offset %" PRIu64 ")\n",
				where, r->sc.expect[k].line, want, got, k + 1, it.offset);
			return -1;
		}
		k++;
	}
	if (k < r->sc.nexpect) {
		fprintf(stderr, "%s:%d: expected '%s', the trace ends after %zu packets\n", where,
			r->sc.expect[k].line, r->sc.expect[k].text, k);
		return -1;
	}
	return 0;
}

/* The run's summary line: the packets as the expect block and `rtitsim
 * dump` count them (a cycle count packet is one: RTIT 4.2.14), and with
 * the account the ones dropped in overflows (D120). */
static void print_summary(const struct run *r, const char *name, FILE *out, const char *pfx)
{
	const struct rtit_sim_status *st = &r->res.st;
	uint64_t pk = r->account ? r->listed : r->res.stats.packets + r->res.stats.ccps;

	fprintf(out, "%s%s: %s; %" PRIu64 " instructions, %" PRIu64 " events -> %" PRIu64
		" packets, %" PRIu64 " bytes", pfx, name, st->msg, st->insns, st->events, pk,
		r->res.trace_bytes);
	if (r->account)
		fprintf(out, "; %" PRIu64 " packets dropped in overflows", r->dropped);
	fputc('\n', out);
}

/* PREFIX.EXT under its temporary name until the run is whole (outfile.h). */
static FILE *open_out(const char *prefix, const char *ext, char *path, size_t cap)
{
	snprintf(path, cap, "%s%s", prefix, ext);
	return rtit_out_open("rtitsim run", path);
}

/* A run that fails before the simulation starts leaves no files behind:
 * closes the outputs opened so far and removes them. */
static void discard_outputs(const char *prefix, FILE **fs)
{
	(void)prefix;
	for (unsigned i = 0; i < 4; i++) {
		if (fs[i])
			fclose(fs[i]);
		fs[i] = NULL;
	}
	rtit_out_discard();
}

static bool is_scenario(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && !strcmp(path + n - 4, ".scn");
}

/* The index of @v among @names (an option's choices), or -1 after a line
 * naming the option and its choices. */
static int choice(const char *opt, const char *v, const char *const *names, int n)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(v, names[k]))
			return k;
	fprintf(stderr, "rtitsim run: %s takes", opt);
	for (int k = 0; k < n; k++)
		fprintf(stderr, "%s %s", k ? (k == n - 1 ? " or" : ",") : "", names[k]);
	fprintf(stderr, ", not '%s'\n", v);
	return -1;
}

int rtit_cli_prog_option(struct rtit_cli_prog *pg, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	const char *cmd = pg->cmd ? pg->cmd : "rtitsim run";
	const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	static const char *const valued[] = { "--dialect", "--env", "--seed", "--writable",
					      "--stdin", "--syscall-cycles", "--budget" };
	if (!strcmp(a, "--bare")) {
		pg->bare = true;
		return 1;
	}
	size_t k;
	for (k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
		if (!strcmp(a, valued[k]))
			break;
	if (k == sizeof(valued) / sizeof(valued[0]))
		return 0;
	if (!v || !*v || strchr(v, '\n')) {
		fprintf(stderr, "%s: %s needs a value\n", cmd, a);
		return -1;
	}
	++*i;
	switch (k) {
	case 0:
		if (strcmp(v, "rtit") && strcmp(v, "pt")) {
			fprintf(stderr, "%s: --dialect takes rtit or pt, not '%s'\n", cmd, v);
			return -1;
		}
		pg->dialect = v;
		break;
	case 1:
		if (!strchr(v, '=') || v[0] == '=' || pg->nenv == 64) {
			fprintf(stderr, "%s: --env %s: expected NAME=VALUE (at most 64)\n", cmd, v);
			return -1;
		}
		pg->env[pg->nenv++] = v;
		break;
	case 2: pg->seed = v; break;
	case 3: pg->writable = v; break;
	case 4: pg->stdin_path = v; break;
	case 5: pg->cycles = v; break;
	case 6: pg->budget = v; break;
	}
	return 1;
}

/* The default environment of a program run, which --env adds to (D89). */
static const char *const prog_env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/",
					"LC_ALL=C", "TERM=dumb" };

/* (run.h) Intel PT: TraceEn, User, BranchEn, TSCEn, MTCEn, MTCFreq 3,
 * PSBFreq 3, perf's defaults; RTIT: Trace_En, User. */
void rtit_cli_prog_scenario(FILE *mem, const char *input, const struct rtit_cli_prog *pg)
{
	bool pt = pg->dialect && !strcmp(pg->dialect, "pt");
	const char *base = strrchr(input, '/');
	fprintf(mem, "name %s\ndialect %s\n", base ? base + 1 : input, pt ? "pt" : "rtit");
	if (pg->budget)
		fprintf(mem, "budget %s\n", pg->budget);
	if (pg->bare) {
		fprintf(mem, "code elf path=%s\n", input);
		fputs(pt ? "msr IA32_RTIT_CTL = 0x200d\n" :
			   "msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x200d\n", mem);
		return;
	}
	fprintf(mem, "code process path=%s\n", input);
	for (int i = 0; i < pg->nargs; i++)
		fprintf(mem, "arg %s\n", pg->args[i]);
	/* the default set, each name overridden by an --env of that name */
	for (size_t i = 0; pg->nenv && i < sizeof(prog_env) / sizeof(prog_env[0]); i++) {
		size_t n = strcspn(prog_env[i], "=") + 1;
		bool over = false;
		for (int k = 0; k < pg->nenv; k++)
			over = over || !strncmp(pg->env[k], prog_env[i], n);
		if (!over)
			fprintf(mem, "env %s\n", prog_env[i]);
	}
	for (int i = 0; i < pg->nenv; i++)
		fprintf(mem, "env %s\n", pg->env[i]);
	if (pg->seed)
		fprintf(mem, "seed %s\n", pg->seed);
	if (pg->writable)
		fprintf(mem, "writable %s\n", pg->writable);
	if (pg->stdin_path)
		fprintf(mem, "stdin %s\n", pg->stdin_path);
	if (pg->cycles)
		fprintf(mem, "syscall-cycles %s\n", pg->cycles);
	fputs(pt ? "msr IA32_RTIT_CTL = 0x0300e609\n" :
		   "msr RTIT_EVENTS = 0x37\nmsr RTIT_CTL = 0x2009\n", mem);
}

/* Appends the --param and --msr options to the scenario text as param
 * and msr lines, and keeps in @names which option each line came from (a
 * message about the line names the option).  Returns their number, or -1
 * after a line naming the bad one. */
static int append_options(FILE *mem, const char *const *params, int nparams,
			  const char *const *msrs, int nmsrs, const char **names)
{
	static char opt_text[64][300];
	int n = 0;
	for (int k = 0; k < 2; k++) {
		const char *const *v = k ? msrs : params;
		const char *opt = k ? "--msr" : "--param";
		for (int i = 0; i < (k ? nmsrs : nparams) && n < 64; i++) {
			const char *eq = strchr(v[i], '=');
			if (!eq) {
				fprintf(stderr, "rtitsim run: %s %s: expected %s=VALUE\n", opt, v[i],
					k ? "NAME" : "KEY");
				return -1;
			}
			fprintf(mem, "%s %.*s = %s\n", k ? "msr" : "param", (int)(eq - v[i]), v[i],
				eq + 1);
			snprintf(opt_text[n], sizeof(opt_text[0]), "%s %s", opt, v[i]);
			names[n] = opt_text[n];
			n++;
		}
	}
	return n;
}

/* @status, or RTIT_EXIT_IO after a line when writing the standard output
 * failed. */
static int stdout_status(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	fprintf(stderr, "rtitsim run: writing the standard output failed: %s\n",
		strerror(errno ? errno : EIO));
	return status == RTIT_EXIT_OK ? RTIT_EXIT_IO : status;
}

/* --verify's temporary directory and the files in it, removed. */
static void remove_verify_dir(const char *dir, const char *pfx)
{
	static const char *const ext[] = { ".trace", ".sideband", ".flow", ".flow.txt" };
	char f[128];
	for (unsigned i = 0; i < 4; i++) {
		snprintf(f, sizeof(f), "%s%s", pfx, ext[i]);
		unlink(f);
	}
	rmdir(dir);
}

/* The scenario text of the run: the file, a program's process (or --bare)
 * scenario, or the built-in demo; then the --param/--msr lines, whose
 * first line number goes to *first_line (messages name the option).
 * Returns the option lines' number, or -1 after a line (*status set). */
static int scenario_text(const char *input, const struct rtit_cli_prog *pg, const char *const *params,
			 int nparams, const char *const *msrs, int nmsrs, char **textp,
			 int *first_line, const char **opt_names, int *status)
{
	char *text = NULL;
	size_t tlen = 0;
	*textp = NULL;
	*status = RTIT_EXIT_IO;
	FILE *mem = open_memstream(&text, &tlen);
	if (!mem)
		return -1;
	if (!input) {
		fputs(demo_scenario, mem);
	} else if (is_scenario(input)) {
		size_t n;
		uint8_t *b = rtit_cli_slurp(input, &n);
		if (!b) {
			fprintf(stderr, "rtitsim run: %s: cannot read: %s\n", input, strerror(errno));
			fclose(mem);
			free(text);
			return -1;
		}
		fwrite(b, 1, n, mem);
		free(b);
	} else {
		rtit_cli_prog_scenario(mem, input, pg);
	}
	fputc('\n', mem);
	fflush(mem);
	*first_line = 1;
	for (size_t k = 0; k < tlen; k++)
		*first_line += text[k] == '\n';
	int nopts = append_options(mem, params, nparams, msrs, nmsrs, opt_names);
	fclose(mem);
	if (nopts < 0) {
		free(text);
		*status = RTIT_EXIT_USAGE;
		return -1;
	}
	*textp = text;
	return nopts;
}

int rtit_cmd_run(int argc, char **argv)
{
	const char *input = NULL, *out = NULL, *bundle = NULL, *perf_data = NULL;
	struct rtit_cli_prog pg = { 0 };
	bool dump = false, quiet = false, verify = false;
	int progress = -1;
	int deliver = RTIT_SIM_PER_BATCH, flow = RTIT_RUN_FLOW_BOTH, flow_version = 0;
	const char *extra_params[32], *extra_msrs[32];
	int nparams = 0, nmsrs = 0;
	int status;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			run_usage(stdout);
			return RTIT_EXIT_OK;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--out")) && i + 1 < argc) {
			out = argv[++i];
			if (!*out) {
				fprintf(stderr, "rtitsim run: %s: an empty prefix names no file\n", a);
				return RTIT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--perf-data") && i + 1 < argc) {
			perf_data = argv[++i];
		} else if (!strcmp(a, "--bundle") && i + 1 < argc) {
			bundle = argv[++i];
			if (!*bundle) {
				fprintf(stderr, "rtitsim run: --bundle: an empty directory name\n");
				return RTIT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--dump")) {
			dump = true;
		} else if (!strcmp(a, "--deliver") && i + 1 < argc) {
			static const char *const names[] = { "insn", "block", "batch" };
			static const int modes[] = { RTIT_SIM_PER_INSN, RTIT_SIM_PER_BLOCK, RTIT_SIM_PER_BATCH };
			int k = choice(a, argv[++i], names, 3);
			if (k < 0)
				return RTIT_EXIT_USAGE;
			deliver = modes[k];
		} else if (!strcmp(a, "--flow") && i + 1 < argc) {
			/* in the order of RTIT_RUN_FLOW_* */
			static const char *const names[] = { "both", "bin", "txt", "none" };
			if ((flow = choice(a, argv[++i], names, 4)) < 0)
				return RTIT_EXIT_USAGE;
		} else if (!strcmp(a, "--flow-version") && i + 1 < argc) {
			static const char *const names[] = { "1", "2" };
			int k = choice(a, argv[++i], names, 2);
			if (k < 0)
				return RTIT_EXIT_USAGE;
			flow_version = k + 1;
		} else if (!strcmp(a, "--verify")) {
			verify = true;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = true;
			progress = 0;
		} else if (!strcmp(a, "--progress")) {
			progress = 1;
		} else if (!strcmp(a, "--param") && i + 1 < argc && nparams < 32) {
			extra_params[nparams++] = argv[++i];
		} else if (!strcmp(a, "--msr") && i + 1 < argc && nmsrs < 32) {
			extra_msrs[nmsrs++] = argv[++i];
		} else if ((status = rtit_cli_prog_option(&pg, argc, argv, &i)) != 0) {
			if (status < 0)
				return RTIT_EXIT_USAGE;
		} else if (!strcmp(a, "--") && i + 1 < argc) {
			input = argv[++i];
			pg.args = argv + i + 1;
			pg.nargs = argc - i - 1;
			break;
		} else if (a[0] == '-') {
			fprintf(stderr, "rtitsim run: unknown or incomplete option '%s' (try --help)\n", a);
			return RTIT_EXIT_USAGE;
		} else if (is_scenario(a) && !input) {
			input = a;	/* a scenario's options may follow it */
		} else if (input) {
			fprintf(stderr, "rtitsim run: a scenario takes no arguments ('%s' after %s)\n",
				a, input);
			return RTIT_EXIT_USAGE;
		} else {
			/* PROGRAM and its arguments: the options come before it */
			input = a;
			pg.args = argv + i + 1;
			pg.nargs = argc - i - 1;
			break;
		}
	}
	if ((pg.dialect || pg.bare || pg.nenv || pg.seed || pg.writable || pg.stdin_path ||
	     pg.cycles || pg.budget) && (!input || is_scenario(input))) {
		fprintf(stderr, "rtitsim run: --dialect, --bare, --env, --seed, --writable, --stdin,"
			" --syscall-cycles and --budget are for a PROGRAM (a scenario says them"
			" in its own lines)\n");
		return RTIT_EXIT_USAGE;
	}

	char *text;
	int first_option_line;
	static const char *opt_names[64];
	int nopts = scenario_text(input, &pg, extra_params, nparams, extra_msrs, nmsrs, &text,
				  &first_option_line, opt_names, &status);
	if (nopts < 0)
		return status;
	const char *name = input ? input : "demo";
	struct rtit_run_opts o = {
		.text = text,
		.source = input && is_scenario(input) ? input : (input ? "<program>" : "<demo>"),
		.name = name,
		.out = out,
		.default_out = input != NULL,
		.account = (dump || !input) && !quiet ? stdout : NULL,
		.deliver = deliver,
		.quiet = quiet,
		/* The demo runs end to end: simulate, encode, decode, verify. */
		.verify = verify || !input,
		.image = input ? input : "demo",
		.flow = flow,
		.flow_version = flow_version,
		.program = input && !is_scenario(input),
		.perf_data = perf_data,
		.bundle = bundle,
		.progress = quiet ? 0 : progress,
		.first_option_line = first_option_line,
		.noptions = nopts,
		.options = opt_names,
		/* a program's bundle is named after its file */
		.stem = input && !is_scenario(input) ?
			(strrchr(input, '/') ? strrchr(input, '/') + 1 : input) : NULL,
	};
	if (o.verify && !bundle && (flow == RTIT_RUN_FLOW_TXT || flow == RTIT_RUN_FLOW_NONE)) {
		fprintf(stderr, "rtitsim run: --verify reads the binary flow: --flow both or bin\n");
		free(text);
		return RTIT_EXIT_USAGE;
	}
	char tmpl[] = "/tmp/rtitsim-verify-XXXXXX", pfx[64];
	char *tmp = NULL;
	if (o.verify && !out && !bundle) {
		/* The decoder reads the files: keep them in a temporary place. */
		if (!(tmp = mkdtemp(tmpl))) {
			fprintf(stderr, "rtitsim run: cannot make a temporary directory: %s\n", strerror(errno));
			free(text);
			return RTIT_EXIT_IO;
		}
		snprintf(pfx, sizeof(pfx), "%s/run", tmp);
		o.out = pfx;
	}
	status = stdout_status(rtit_run(&o, NULL));
	if (tmp)
		remove_verify_dir(tmp, pfx);
	free(text);
	return status;
}

/*
 * Unicorn 2.0.1 calls abort() ("tcg fatal error") when it translates some
 * invalid encodings (FF /3 and FF /5 with a register operand), before any
 * hook can turn them into #UD (docs/sim.md, "Limits"); the library cannot
 * return from that and installs no handler (rtit_sim_run, rtit/sim.h).
 * Rather than dying with SIGABRT, the run ends with one line naming the
 * instruction and the process exits with status 6 (the guest did not end
 * normally); what stdio had buffered is flushed, but records and packets
 * not yet handed to the files are lost.
 */
static struct rtit_sim *volatile sim_running;

static void on_unicorn_abort(int sig)
{
	struct rtit_sim *sim = sim_running;
	char what[320], line[384];
	int n;

	(void)sig;
	if (!sim) {
		signal(SIGABRT, SIG_DFL);
		raise(SIGABRT);
		return;
	}
	rtit_sim_unicorn_abort_msg(sim, what, sizeof(what));
	fflush(stdout);
	rtit_out_discard();
	n = snprintf(line, sizeof(line), "rtitsim: the guest did not end normally: %s; "
		     "its output files were incomplete and are removed\n", what);
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	_exit(RTIT_EXIT_RUN);
}

/* rtit_sim_run under the guard above. */
static int run_guarded(struct rtit_sim *sim, struct rtit_sim_status *st)
{
	struct sigaction sa, old_sa;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_unicorn_abort;
	sigemptyset(&sa.sa_mask);
	sim_running = sim;
	sigaction(SIGABRT, &sa, &old_sa);
	ret = rtit_sim_run(sim, st);
	sigaction(SIGABRT, &old_sa, NULL);
	sim_running = NULL;
	return ret;
}

/* --perf-data DIR: the run as `perf record -e intel_pt//` would have
 * written it (`rtitsim perf-data PREFIX DIR`, session/perfdata.c), DIR
 * made when missing.  RTIT_EXIT_*. */
static int perf_data_out(const char *dir, const char *prefix, int dialect)
{
	if (dialect != RTIT_DIALECT_PT) {
		fprintf(stderr, "rtitsim run: --perf-data: perf.data holds Intel PT only (this run"
			" is RTIT)\n");
		return RTIT_EXIT_INPUT;
	}
	if (!prefix) {
		fprintf(stderr, "rtitsim run: --perf-data needs the run's files (--out)\n");
		return RTIT_EXIT_USAGE;
	}
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "rtitsim run: --perf-data %s: %s\n", dir, strerror(errno));
		return RTIT_EXIT_IO;
	}
	char *av[] = { "perf-data", (char *)prefix, (char *)dir, NULL };
	return rtit_cmd_perfdata(3, av);
}

/* What a process did: its system calls and what it missed. */
static void process_summary(const struct rtit_sim_process_info *pi, bool quiet)
{
	if (!quiet)
		fprintf(stderr, "rtitsim: %" PRIu64 " system calls, %" PRIu64
			" cycles charged to the kernel, %.3f ms in the system-call layer%s\n",
			pi->syscalls, pi->syscall_cycles, (double)pi->syscall_ns / 1e6,
			pi->exited ? "" : "; the program did not exit");
	if (pi->unsupported[0])
		fprintf(stderr, "rtitsim: system calls answered ENOSYS (not modelled): %s\n",
			pi->unsupported);
}

/* A bundle's image files (copied in, the sideband's map or, for a
 * process, mmap lines set to them) before the sideband is written.
 * RTIT_EXIT_*. */
static int bundle_images(const struct rtit_run_opts *o, const char *stem, struct run *r)
{
	struct rtit_bundle_scn_images im;
	char err[1024];
	int ret;
	if (r->res.process) {	/* every file it mapped (D132) */
		ret = rtit_bundle_add_mmaps(r->stage, stem, &r->res.sb, err, sizeof(err));
	} else {
		ret = rtit_bundle_scenario_images(&r->sc, &im, err, sizeof(err));
		if (ret == 0)
			ret = rtit_bundle_add_images(r->stage, stem, im.img, im.n, &r->res.sb, err,
						     sizeof(err));
		rtit_bundle_scenario_images_fini(&im);
	}
	if (ret < 0) {
		fprintf(stderr, "rtitsim run: --bundle %s: %s\n", o->bundle, err);
		return ret == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	return RTIT_EXIT_OK;
}

/* The rest of a bundle after the run's files are complete: the dumps, the
 * events and the manifest.  RTIT_EXIT_*. */
static int bundle_finish(const struct rtit_run_opts *o, const char *stem, const char *prefix,
			 struct run *r)
{
	char err[1024];
	int st = rtit_cli_bundle_outputs(prefix, r->dialect, r->res.cycle_acc);
	if (st != RTIT_EXIT_OK)
		return st;
	if (rtit_bundle_write_manifest(r->stage, stem, &r->res.sb, r->sc.describe, err,
				       sizeof(err)) < 0) {
		fprintf(stderr, "rtitsim run: %s\n", err);
		return RTIT_EXIT_IO;
	}
	/* whole: into DIR at once (D135); the run's files are there now */
	if (rtit_out_stage_commit("rtitsim run") < 0)
		return RTIT_EXIT_IO;
	snprintf(r->prefix, sizeof(r->prefix), "%s/%s", o->bundle, stem);
	return RTIT_EXIT_OK;
}

/* The outputs under their temporary names (outfile.h), in r's fields;
 * the bundle's directory made.  RTIT_EXIT_OK or the status. */
static int open_outputs(const struct rtit_run_opts *o, struct run *r)
{
	bool want_bin = o->flow == RTIT_RUN_FLOW_BOTH || o->flow == RTIT_RUN_FLOW_BIN || o->bundle;
	bool want_txt = o->flow == RTIT_RUN_FLOW_BOTH || o->flow == RTIT_RUN_FLOW_TXT || o->bundle;
	char path[1024];

	r->out = o->out;
	r->stem = o->stem ? o->stem : r->sc.name[0] ? r->sc.name : "rtitsim";
	if (o->bundle) {
		if (mkdir(o->bundle, 0777) < 0 && errno != EEXIST) {
			fprintf(stderr, "rtitsim run: --bundle %s: cannot create: %s\n", o->bundle,
				strerror(errno));
			return RTIT_EXIT_IO;
		}
		/* written whole or not at all: staged (D135) */
		if (rtit_out_stage("rtitsim run", o->bundle, r->stem, r->stage, sizeof(r->stage)) < 0)
			return RTIT_EXIT_IO;
		snprintf(r->bundle_out, sizeof(r->bundle_out), "%s/%s", r->stage, r->stem);
		r->out = r->bundle_out;
	}
	if (!r->out && o->default_out)
		r->out = r->sc.name[0] ? r->sc.name : "rtitsim";
	if (!r->out)
		return RTIT_EXIT_OK;
	if (strlen(r->out) >= sizeof(r->prefix)) {
		fprintf(stderr, "rtitsim run: %s: the output prefix is too long (at most %zu bytes)\n",
			r->out, sizeof(r->prefix) - 1);
		return RTIT_EXIT_USAGE;
	}
	memcpy(r->prefix, r->out, strlen(r->out) + 1);
	if (!(r->trace = open_out(r->prefix, ".trace", path, sizeof(path))) ||
	    !(r->sideband = open_out(r->prefix, ".sideband", path, sizeof(path))) ||
	    (want_bin && !(r->flow_bin = open_out(r->prefix, ".flow", path, sizeof(path)))) ||
	    (want_txt && !(r->flow_txt = open_out(r->prefix, ".flow.txt", path, sizeof(path))))) {
		FILE *fs[4] = { r->trace, r->sideband, r->flow_bin, r->flow_txt };
		discard_outputs(r->prefix, fs);
		return RTIT_EXIT_IO;
	}
	return RTIT_EXIT_OK;
}

/* Closes the outputs; each whole under its name, or none and a line
 * naming the one that failed.  Returns @status or RTIT_EXIT_IO. */
static int close_outputs(struct run *r, int status)
{
	FILE *fs[] = { r->trace, r->sideband, r->flow_bin, r->flow_txt };
	static const char *const ext[] = { ".trace", ".sideband", ".flow", ".flow.txt" };
	for (int i = 0; i < 4; i++) {
		if (!fs[i])
			continue;
		bool bad = ferror(fs[i]);
		errno = 0;
		int c = fclose(fs[i]);
		if (c != 0 || bad) {
			int e = c != 0 && errno ? errno : r->write_errno ? r->write_errno : EIO;
			fprintf(stderr, "rtitsim run: %s%s: writing failed: %s\n", r->prefix, ext[i],
				strerror(e));
			if (status == RTIT_EXIT_OK)
				status = RTIT_EXIT_IO;
		}
	}
	/* all whole under their names, or none (outfile.h) */
	if (r->out && status == RTIT_EXIT_IO) {
		rtit_out_discard();
		fprintf(stderr, "rtitsim run: no output file was written (%s.*)\n", r->prefix);
	} else if (r->out && rtit_out_commit("rtitsim run") < 0) {
		status = RTIT_EXIT_IO;
	}
	return status;
}

int rtit_run(const struct rtit_run_opts *o, struct rtit_run_result *res)
{
	static struct run r;
	const char *name = o->name;
	bool quiet = o->quiet || o->silent;
	int deliver = o->deliver;
	struct rtit_scn_error err;
	int status = RTIT_EXIT_OK, ret;
	char path[1024];
	bool bundle_done = false;

	memset(&r, 0, sizeof(r));
	ret = rtit_scenario_parse_string(o->text, o->source, &r.sc, &err);
	if (ret < 0) {
		print_msg(o, err.text);
		rtit_scenario_fini(&r.sc);
		return ret == -RTIT_ERR_IO ? RTIT_EXIT_IO : RTIT_EXIT_INPUT;
	}
	r.dialect = r.sc.dialect;

	if ((status = open_outputs(o, &r)) != RTIT_EXIT_OK) {
		rtit_out_stage_discard();
		rtit_scenario_fini(&r.sc);
		return status;
	}
	const char *out = r.out, *stem = r.stem, *prefix = r.prefix;
	r.account = o->account;
	if (r.account)
		printf("== %s: %s\n  %-8s  %-23s  %-30s %s\n", r.sc.name[0] ? r.sc.name : name,
		       r.sc.describe, "offset", "bytes", "packet", "why");

	/* The session: simulator -> encoder -> the trace and the flow. */
	struct rtit_session_cfg scfg = {
		.sc = &r.sc, .deliver = deliver,
		.trace = r.trace, .flow_bin = r.flow_bin, .flow_txt = r.flow_txt,
		.flow_version = o->flow_version ? o->flow_version :
				o->bundle ? RTIT_FLOW_V1 : RTIT_FLOW_V2,
		.on_packet = on_note, .opaque = &r,
		.run = run_guarded, .image = o->image, .progress = on_progress,
	};
	r.progress = o->progress > 0 || (o->progress < 0 && !quiet && isatty(2));
	r.t0 = r.last = now_s();
	struct rtit_session_result *res_ = &r.res;
	int ss = rtit_session_run(&scfg, res_);
	r.write_errno = res_->io_errno;	/* a failed write's (D138) */
	if (r.progress_shown)
		fputs("\n", stderr);
	if (!res_->ran) {
		/* nothing ran: no files are left behind */
		print_msg(o, res_->msg[0] ? res_->msg : res_->io_msg);
		FILE *fs[4] = { r.trace, r.sideband, r.flow_bin, r.flow_txt };
		if (out)
			discard_outputs(prefix, fs);
		rtit_out_stage_discard();
		rtit_session_result_fini(&r.res);
		rtit_scenario_fini(&r.sc);
		return ss == RTIT_SESSION_INPUT ? RTIT_EXIT_INPUT : RTIT_EXIT_IO;
	}
	if (res_->msg[0]) {	/* RUN, possibly with IO after it */
		fprintf(stderr, "%s\n", res_->msg);
		status = RTIT_EXIT_RUN;
	}
	if (ss == RTIT_SESSION_IO) {
		fprintf(stderr, "%s\n", res_->io_msg);
		status = RTIT_EXIT_IO;
	}
	bool ca = res_->cycle_acc;
	/* a run that never traced exits 0, with a warning naming why */
	const char *nt = rtit_encoder_not_traced_why(res_->stats.not_traced);
	if (nt)
		fprintf(stderr, "%s: warning: no packet was ever enabled: %s\n", r.sc.path, nt);
	if (o->bundle && status == RTIT_EXIT_OK)
		status = bundle_images(o, stem, &r);
	if (r.sideband)
		rtit_sideband_write(r.sideband, &res_->sb);
	/* a program owns stdout: rtitsim's lines go to stderr */
	FILE *msg = o->program ? stderr : stdout;
	const char *mp = o->program ? "rtitsim: " : "";
	if (!quiet)
		print_summary(&r, r.sc.name[0] ? r.sc.name : name, msg, mp);
	if (res_->process && !o->silent)
		process_summary(&res_->proc, quiet);
	if (!o->silent)
		fprintf(msg, "%strace %s  flow %s\n", mp, res_->sb.trace_xxh3, res_->sb.flow_xxh3);

	status = close_outputs(&r, status);

	/* The expect block, checked against the trace as written. */
	if (r.sc.has_expect && status == RTIT_EXIT_OK) {
		size_t n = 0;
		uint8_t *t = NULL;
		if (out) {
			snprintf(path, sizeof(path), "%s.trace", prefix);
			t = rtit_cli_slurp(path, &n);
		}
		if (!t) {
			fprintf(stderr, "%s: the expect block needs the trace file (use --out)\n", r.sc.path);
			status = RTIT_EXIT_IO;
		} else if (check_expect(&r, t, n, ca) < 0) {
			status = RTIT_EXIT_MISMATCH;
		} else if (!quiet) {
			printf("%s: the %zu packets match the expect block\n", r.sc.name, r.sc.nexpect);
		}
		free(t);
	}
	if (o->bundle && status == RTIT_EXIT_OK) {
		status = bundle_finish(o, stem, prefix, &r);
		bundle_done = status == RTIT_EXIT_OK;
	}
	if (o->perf_data && status == RTIT_EXIT_OK)
		status = perf_data_out(o->perf_data, out ? prefix : NULL, r.dialect);
	/* --verify: the flow decoder must give the ground truth back. */
	if (o->verify && status == RTIT_EXIT_OK && out) {
		{
			char tp[1100], fp[1100];
			snprintf(tp, sizeof(tp), "%s.trace", prefix);
			snprintf(fp, sizeof(fp), "%s.flow", prefix);
			char *av[] = { "decode", tp, "--image", (char *)o->image, "--check", fp, "-q", NULL };
			/* a process: the decoder finds the code in the sideband's maps */
			char *avp[] = { "decode", tp, "--check", fp, "-q", NULL };
			int d = res_->process ? rtit_cmd_decode(5, avp) : rtit_cmd_decode(7, av);
			if (d != RTIT_EXIT_OK)
				status = d == RTIT_EXIT_MISMATCH ? RTIT_EXIT_MISMATCH : d;
			else if (!o->silent)
				fprintf(msg, "%s%s: verified: decoding the trace gives the flow back\n",
					mp, r.sc.name[0] ? r.sc.name : name);
		}
	}
	if (res) {
		res->status = status;
		res->dialect = r.dialect;
		res->cycle_acc = ca;
		res->trace_digest = res_->trace_digest;
		res->flow_digest = res_->flow_digest;
		res->trace_bytes = res_->trace_bytes;
		snprintf(res->name, sizeof(res->name), "%s", r.sc.name);
		snprintf(res->describe, sizeof(res->describe), "%s", r.sc.describe);
	}
	if (o->bundle && r.stage[0] && status != RTIT_EXIT_OK && !bundle_done) {
		rtit_out_stage_discard();	/* a bundle is whole or absent */
		fprintf(stderr, "rtitsim run: --bundle %s: no bundle was written (the run failed:"
			" exit %d)\n", o->bundle, status);
	}
	rtit_session_result_fini(&r.res);
	rtit_scenario_fini(&r.sc);
	return status;
}
