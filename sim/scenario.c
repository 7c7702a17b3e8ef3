/*
 * scenario.c - the scenario file parser and its application to a
 * simulator (docs/scenario.md).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicorn/unicorn.h>

#include "rtit/scenario.h"
#include "rtit/asm.h"
#include "rtit/image.h"

struct msr_name {
	const char *name;
	uint32_t msr;
	int dialect;		/* -1: both */
};

/* RTIT MSRs: RTIT 3.3; Intel PT: SDM 33.2.8 (addresses from SDM Vol. 4). */
static const struct msr_name msr_names[] = {
	{ "RTIT_LIP0", 0x760, RTIT_DIALECT_RTIT },
	{ "RTIT_LIP1", 0x761, RTIT_DIALECT_RTIT },
	{ "RTIT_LIP2", 0x762, RTIT_DIALECT_RTIT },
	{ "RTIT_LIP3", 0x763, RTIT_DIALECT_RTIT },
	{ "RTIT_CTL", 0x768, RTIT_DIALECT_RTIT },
	{ "RTIT_STATUS", 0x769, RTIT_DIALECT_RTIT },
	{ "RTIT_CNTP", 0x76B, RTIT_DIALECT_RTIT },
	{ "RTIT_EVENTS", 0x76C, RTIT_DIALECT_RTIT },
	{ "RTIT_LAST_LIP", 0x76E, RTIT_DIALECT_RTIT },
	{ "RTIT_LAST_CALL_NLIP", 0x76F, RTIT_DIALECT_RTIT },
	{ "RTIT_BASE_ADDR", 0x770, RTIT_DIALECT_RTIT },
	{ "RTIT_LIMIT_MASK", 0x771, RTIT_DIALECT_RTIT },
	{ "RTIT_OFFSET", 0x772, RTIT_DIALECT_RTIT },
	{ "RTIT_CR3_MATCH", 0x777, RTIT_DIALECT_RTIT },
	{ "RTIT_PKT_CNT", 0x77C, RTIT_DIALECT_RTIT },
	{ "RTIT_TNT_BUFF", 0x77D, RTIT_DIALECT_RTIT },
	{ "IA32_RTIT_OUTPUT_BASE", 0x560, RTIT_DIALECT_PT },
	{ "IA32_RTIT_OUTPUT_MASK_PTRS", 0x561, RTIT_DIALECT_PT },
	{ "IA32_RTIT_CTL", 0x570, RTIT_DIALECT_PT },
	{ "IA32_RTIT_STATUS", 0x571, RTIT_DIALECT_PT },
	{ "IA32_RTIT_CR3_MATCH", 0x572, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR0_A", 0x580, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR0_B", 0x581, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR1_A", 0x582, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR1_B", 0x583, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR2_A", 0x584, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR2_B", 0x585, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR3_A", 0x586, RTIT_DIALECT_PT },
	{ "IA32_RTIT_ADDR3_B", 0x587, RTIT_DIALECT_PT },
	/* performance monitoring, PEBS output to Intel PT (SDM Vol. 3 20.2,
	 * 20.5.5.2, 20.9.2; sim/pmu.c): Intel PT CPUs only (D53) */
	{ "IA32_PMC0", 0xC1, RTIT_DIALECT_PT },
	{ "IA32_A_PMC0", 0x4C1, RTIT_DIALECT_PT },
	{ "MSR_RELOAD_PMC0", 0x14C1, RTIT_DIALECT_PT },
	{ "IA32_PERFEVTSEL0", 0x186, RTIT_DIALECT_PT },
	{ "IA32_PERF_GLOBAL_CTRL", 0x38F, RTIT_DIALECT_PT },
	{ "IA32_PEBS_ENABLE", 0x3F1, RTIT_DIALECT_PT },
	{ "IA32_PEBS_DATA_CFG", 0x3F2, RTIT_DIALECT_PT },
	/* architectural LBRs (sim/pmu.c, D63) */
	{ "IA32_LBR_CTL", 0x14CE, RTIT_DIALECT_PT },
	{ "IA32_LBR_DEPTH", 0x14CF, RTIT_DIALECT_PT },
	{ "IA32_TSC", 0x10, -1 },
	{ "IA32_SYSENTER_CS", 0x174, -1 },
	{ "IA32_SYSENTER_ESP", 0x175, -1 },
	{ "IA32_SYSENTER_EIP", 0x176, -1 },
	{ "IA32_STAR", 0xC0000081, -1 },
	{ "IA32_LSTAR", 0xC0000082, -1 },
	{ "IA32_CSTAR", 0xC0000083, -1 },
	{ "IA32_FMASK", 0xC0000084, -1 },
	{ "IA32_UINTR_RR", RTIT_SIM_MSR_UINTR_RR, -1 },
	{ "IA32_UINTR_HANDLER", RTIT_SIM_MSR_UINTR_HANDLER, -1 },
	{ "IA32_UINTR_STACKADJUST", RTIT_SIM_MSR_UINTR_STACKADJUST, -1 },
	{ "IA32_UINTR_MISC", RTIT_SIM_MSR_UINTR_MISC, -1 },
	{ "IA32_UINTR_PD", RTIT_SIM_MSR_UINTR_PD, -1 },
	{ "IA32_UINTR_TT", RTIT_SIM_MSR_UINTR_TT, -1 },
};

const char *rtit_scenario_msr_name(uint32_t msr, int dialect)
{
	for (size_t i = 0; i < sizeof(msr_names) / sizeof(msr_names[0]); i++)
		if (msr_names[i].msr == msr && (msr_names[i].dialect < 0 ||
						 msr_names[i].dialect == dialect))
			return msr_names[i].name;
	/* written by the simulator's clock (frequency changes), not by a
	 * scenario line */
	if (msr == RTIT_SIM_MSR_PERF_STATUS)
		return "IA32_PERF_STATUS";
	return NULL;
}

int rtit_scenario_msr_by_name(const char *name, int dialect, uint32_t *msr)
{
	size_t n = sizeof(msr_names) / sizeof(msr_names[0]);
	for (size_t i = 0; i < n; i++) {
		const struct msr_name *m = &msr_names[i];
		if (m->dialect >= 0 && m->dialect != dialect)
			continue;
		/* in the pt dialect, RTIT_CTL means IA32_RTIT_CTL */
		if (!strcasecmp(name, m->name) ||
		    (m->dialect == RTIT_DIALECT_PT && !strncmp(m->name, "IA32_", 5) &&
		     !strcasecmp(name, m->name + 5))) {
			*msr = m->msr;
			return 0;
		}
	}
	return -RTIT_ERR_INVALID;
}

static const struct {
	const char *name;
	int id;
} reg_names[] = {
	{ "rax", UC_X86_REG_RAX }, { "rbx", UC_X86_REG_RBX },
	{ "rcx", UC_X86_REG_RCX }, { "rdx", UC_X86_REG_RDX },
	{ "rsi", UC_X86_REG_RSI }, { "rdi", UC_X86_REG_RDI },
	{ "rbp", UC_X86_REG_RBP }, { "rsp", UC_X86_REG_RSP },
	{ "r8", UC_X86_REG_R8 }, { "r9", UC_X86_REG_R9 },
	{ "r10", UC_X86_REG_R10 }, { "r11", UC_X86_REG_R11 },
	{ "r12", UC_X86_REG_R12 }, { "r13", UC_X86_REG_R13 },
	{ "r14", UC_X86_REG_R14 }, { "r15", UC_X86_REG_R15 },
	{ "eax", UC_X86_REG_EAX }, { "ebx", UC_X86_REG_EBX },
	{ "ecx", UC_X86_REG_ECX }, { "edx", UC_X86_REG_EDX },
	{ "esi", UC_X86_REG_ESI }, { "edi", UC_X86_REG_EDI },
	{ "ebp", UC_X86_REG_EBP }, { "esp", UC_X86_REG_ESP },
	{ "rflags", UC_X86_REG_EFLAGS }, { "eflags", UC_X86_REG_EFLAGS },
};

/* ------------------------------------------------------------- parsing */

struct parser {
	struct rtit_scenario *sc;
	struct rtit_scn_error *err;
	const char *file;
	int line;
	/* lines of single-valued directives, to report duplicates */
	int seen[16];
};

static int perr(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int perr(struct parser *p, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err) {
		p->err->line = p->line;
		snprintf(p->err->text, sizeof(p->err->text), "%.100s:%d: %s",
			 p->file, p->line, msg);
	}
	return -RTIT_ERR_BAD_CONFIG;
}

static char *skip_ws(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static void rtrim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
}

/* Splits the next whitespace-delimited word off *s. */
static char *word(char **s)
{
	char *w = skip_ws(*s);
	if (!*w)
		return NULL;
	char *e = w;
	while (*e && *e != ' ' && *e != '\t')
		e++;
	if (*e)
		*e++ = 0;
	*s = e;
	return w;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	return 0;
}

static bool is_label(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_' || *s == '.'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '$'))
			return false;
	return true;
}

static int parse_addr(struct parser *p, const char *s, struct rtit_scn_addr *a,
		      const char *what)
{
	memset(a, 0, sizeof(*a));
	if (parse_u64(s, &a->value) == 0)
		return 0;
	if (s && is_label(s) && strlen(s) < sizeof(a->label)) {
		snprintf(a->label, sizeof(a->label), "%s", s);
		return 0;
	}
	return perr(p, "%s: '%s' is neither a number nor a label", what,
		    s ? s : "");
}

/* key=value into k, v; returns -1 if not of that form */
static int kv(char *w, char **k, char **v)
{
	char *eq = strchr(w, '=');
	if (!eq || eq == w)
		return -1;
	*eq = 0;
	*k = w;
	*v = eq + 1;
	return 0;
}

#define GROW(arr, n) \
	do { \
		void *np_ = realloc((arr), ((n) + 1) * sizeof(*(arr))); \
		if (!np_) \
			return -RTIT_ERR_NOMEM; \
		(arr) = np_; \
		memset(&(arr)[(n)], 0, sizeof(*(arr))); \
	} while (0)

enum { SEEN_NAME, SEEN_DESCRIBE, SEEN_DIALECT, SEEN_CPU, SEEN_MODE, SEEN_CODE,
       SEEN_CPL, SEEN_CR3, SEEN_BUDGET, SEEN_END, SEEN_EXPECT, SEEN_RSP0,
       SEEN_RTM, SEEN_CR0, SEEN_VMENTRY, SEEN_COUNT };

static int once(struct parser *p, int which, const char *dir)
{
	if (p->seen[which])
		return perr(p, "'%s' given twice (first on line %d)", dir,
			    p->seen[which]);
	p->seen[which] = p->line;
	return 0;
}

/* "= VALUE" after a name: returns the value word */
static int after_eq(struct parser *p, char **rest, uint64_t *v, const char *dir)
{
	char *eq = word(rest);
	char *val = eq && !strcmp(eq, "=") ? word(rest) : NULL;
	if (!val)
		return perr(p, "%s: expected '= VALUE'", dir);
	if (parse_u64(val, v) < 0)
		return perr(p, "%s: bad number '%s'", dir, val);
	if (word(rest))
		return perr(p, "%s: unexpected text after the value", dir);
	return 0;
}

static int parse_msr_ref(struct parser *p, const char *w, uint32_t *msr,
			 const char *dir)
{
	uint64_t v;
	if (parse_u64(w, &v) == 0) {
		if (v > 0xffffffffull)
			return perr(p, "%s: MSR number 0x%" PRIx64 " too large", dir, v);
		*msr = (uint32_t)v;
		return 0;
	}
	if (rtit_scenario_msr_by_name(w, p->sc->dialect, msr) < 0)
		return perr(p, "%s: unknown MSR name '%s' for dialect %s", dir, w,
			    p->sc->dialect == RTIT_DIALECT_PT ? "pt" : "rtit");
	return 0;
}

/* enclave base=ADDR size=N tcs=ADDR oentry=N [nssa=N] [debug=0|1]
 * (SGX, docs/scenario.md; D50) */
static int parse_enclave(struct parser *p, char *rest)
{
	struct rtit_scenario *sc = p->sc;
	struct rtit_scn_enclave e;
	unsigned have = 0;
	char *w;
	int r;

	memset(&e, 0, sizeof(e));
	e.nssa = 1;
	e.line = p->line;
	while ((w = word(&rest)) != NULL) {
		char *key, *val;
		uint64_t n = 0;
		if (kv(w, &key, &val) < 0)
			return perr(p, "enclave: expected KEY=VALUE, got '%s'", w);
		if (!strcmp(key, "base") || !strcmp(key, "tcs")) {
			bool base = key[0] == 'b';
			if ((r = parse_addr(p, val, base ? &e.base : &e.tcs,
					    base ? "enclave base" : "enclave tcs")) < 0)
				return r;
			have |= base ? 1u : 2u;
			continue;
		}
		if (parse_u64(val, &n) < 0)
			return perr(p, "enclave %s: bad number '%s'", key, val);
		if (!strcmp(key, "size")) {
			e.size = n;
			have |= 4;
		} else if (!strcmp(key, "oentry")) {
			e.oentry = n;
			have |= 8;
		} else if (!strcmp(key, "nssa")) {
			if (!n || n > RTIT_SIM_SGX_MAX_SSA)
				return perr(p, "enclave nssa: must be 1..%d", RTIT_SIM_SGX_MAX_SSA);
			e.nssa = (uint32_t)n;
		} else if (!strcmp(key, "debug")) {
			if (n > 1)
				return perr(p, "enclave debug: must be 0 (opt-out) or 1 (debug)");
			e.debug = n;
		} else {
			return perr(p, "enclave: unknown field '%s' (base, size, tcs, oentry,"
				    " nssa, debug)", key);
		}
	}
	if (have != 15)
		return perr(p, "enclave: missing %s", !(have & 1) ? "base=ADDR" :
			    !(have & 4) ? "size=N" : !(have & 2) ? "tcs=ADDR" : "oentry=N");
	if (!e.size || (e.size & 0xfff))
		return perr(p, "enclave size: 0x%" PRIx64 " is not a positive multiple of 4 KiB",
			    e.size);
	if (e.oentry >= e.size)
		return perr(p, "enclave oentry: 0x%" PRIx64 " is not below size 0x%" PRIx64,
			    e.oentry, e.size);
	if (sc->nenclaves == RTIT_SIM_SGX_MAX_ENCLAVES)
		return perr(p, "enclave: more than %d enclaves", RTIT_SIM_SGX_MAX_ENCLAVES);
	GROW(sc->enclaves, sc->nenclaves);
	sc->enclaves[sc->nenclaves++] = e;
	return 0;
}

static int parse_clock(struct parser *p, char *rest)
{
	struct rtit_sim_clock *c = &p->sc->clock;
	char *w;
	while ((w = word(&rest)) != NULL) {
		char *k, *v;
		uint64_t n;
		if (kv(w, &k, &v) < 0)
			return perr(p, "clock: expected key=value, got '%s'", w);
		if (parse_u64(v, &n) < 0)
			return perr(p, "clock: %s: bad number '%s'", k, v);
		if (!strncmp(k, "cpi.", 4)) {
			const char *cls = k + 4;
			if (n > 255)
				return perr(p, "clock: %s: at most 255 cycles", k);
			if (!strcmp(cls, "default")) {
				for (int i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
					c->cpi[i] = (uint32_t)n;
				continue;
			}
			if (!strcmp(cls, "branch")) {
				for (int i = 1; i < RTIT_SIM_NUM_CLASSES; i++)
					c->cpi[i] = (uint32_t)n;
				continue;
			}
			int i;
			for (i = 0; i < RTIT_SIM_NUM_CLASSES; i++)
				if (!strcmp(cls, rtit_insn_class_name(i)))
					break;
			if (i == RTIT_SIM_NUM_CLASSES)
				return perr(p, "clock: unknown instruction class '%s'", cls);
			c->cpi[i] = (uint32_t)n;
		} else if (!strcmp(k, "tsc_ratio")) {
			if (!n || n > 0xffffffffull)
				return perr(p, "clock: tsc_ratio must be 1..2^32-1");
			c->tsc_ratio = (uint32_t)n;
		} else if (!strcmp(k, "core_ratio") || !strcmp(k, "core_bus_ratio")) {
			if (!n || n > 255)
				return perr(p, "clock: %s must be 1..255", k);
			c->core_ratio = (uint32_t)n;
		} else if (!strcmp(k, "art_num")) {
			if (!n || n > 0xffffffffull)
				return perr(p, "clock: art_num must be 1..2^32-1");
			c->art_num = (uint32_t)n;
		} else if (!strcmp(k, "art_den")) {
			if (!n || n > 0xffffffffull)
				return perr(p, "clock: art_den must be 1..2^32-1");
			c->art_den = (uint32_t)n;
		} else if (!strcmp(k, "tsc_start")) {
			c->tsc_start = n;
		} else {
			return perr(p, "clock: unknown key '%s'", k);
		}
	}
	return 0;
}

static const struct {
	const char *name;
	int kind;
} event_names[] = {
	{ "interrupt", RTIT_EV_EXT_INTERRUPT }, { "nmi", RTIT_EV_NMI },
	{ "smi", RTIT_EV_SMI }, { "vmexit", RTIT_EV_VMEXIT },
	{ "freq", RTIT_EV_FREQ_CHANGE }, { "sleep", RTIT_EV_SLEEP },
	{ "msr", RTIT_EV_MSR_WRITE_EXTERNAL }, { "tsx-abort", RTIT_EV_TSX_ABORT },
	{ "init", RTIT_EV_INIT }, { "sipi", RTIT_EV_SIPI }, { "uintr", RTIT_EV_UINTR },
};

/* event at insn N: KIND args | event at ip ADDR: KIND args */
static int parse_event(struct parser *p, char *rest)
{
	struct rtit_scenario *sc = p->sc;
	char *colon = strchr(rest, ':');
	if (!colon)
		return perr(p, "event: expected 'at insn N: KIND' or 'at ip ADDR: KIND'");
	*colon = 0;
	char *args = colon + 1;
	char *at = word(&rest), *how = word(&rest), *where = word(&rest);
	if (!at || strcmp(at, "at") || !how || !where || word(&rest))
		return perr(p, "event: expected 'at insn N:' or 'at ip ADDR:'");
	GROW(sc->events, sc->nevents);
	struct rtit_scn_event *e = &sc->events[sc->nevents];
	e->line = p->line;
	if (!strcmp(how, "insn")) {
		e->ev.trigger = RTIT_SIM_AT_INSN;
		if (parse_u64(where, &e->ev.at) < 0)
			return perr(p, "event: bad instruction count '%s'", where);
	} else if (!strcmp(how, "ip")) {
		e->ev.trigger = RTIT_SIM_AT_IP;
		int r = parse_addr(p, where, &e->at, "event");
		if (r < 0)
			return r;
		e->ev.at = e->at.value;
	} else {
		return perr(p, "event: trigger '%s' is not 'insn' or 'ip'", how);
	}
	char *kw = word(&args);
	if (!kw)
		return perr(p, "event: missing kind");
	size_t nk = sizeof(event_names) / sizeof(event_names[0]), k;
	for (k = 0; k < nk; k++)
		if (!strcmp(kw, event_names[k].name))
			break;
	if (k == nk)
		return perr(p, "event: unknown kind '%s' (interrupt, nmi, smi, "
			    "vmexit, freq, sleep, msr, tsx-abort, init, sipi, uintr)", kw);
	e->ev.kind = (uint8_t)event_names[k].kind;
	if (e->ev.kind == RTIT_EV_TSX_ABORT)	/* another agent's conflicting access */
		e->ev.value = RTIT_RTM_ABORT_CONFLICT | RTIT_RTM_ABORT_RETRY;
	if (e->ev.kind == RTIT_EV_MSR_WRITE_EXTERNAL) {
		char *mw = word(&args);
		if (!mw)
			return perr(p, "event msr: expected 'msr NAME = VALUE'");
		int r = parse_msr_ref(p, mw, &e->ev.msr, "event msr");
		if (r < 0)
			return r;
		r = after_eq(p, &args, &e->ev.value, "event msr");
		if (r < 0)
			return r;
		sc->nevents++;
		return 0;
	}
	bool need_vec = e->ev.kind == RTIT_EV_EXT_INTERRUPT || e->ev.kind == RTIT_EV_SIPI ||
			e->ev.kind == RTIT_EV_UINTR;
	bool need_ratio = e->ev.kind == RTIT_EV_FREQ_CHANGE;
	bool need_ticks = e->ev.kind == RTIT_EV_SLEEP;
	bool has_vec = false;
	if (e->ev.kind == RTIT_EV_VMEXIT)	/* VMX-preemption timer expired (D48) */
		e->ev.msr = RTIT_VMX_EXIT_PREEMPTION_TIMER;
	char *w;
	while ((w = word(&args)) != NULL) {
		char *key, *val;
		uint64_t n;
		if (kv(w, &key, &val) < 0 || parse_u64(val, &n) < 0)
			return perr(p, "event %s: expected key=NUMBER, got '%s'", kw, w);
		if (!strcmp(key, "vector") && (e->ev.kind == RTIT_EV_EXT_INTERRUPT ||
						e->ev.kind == RTIT_EV_VMEXIT)) {
			if (n > 255)
				return perr(p, "event %s: vector %" PRIu64 " > 255", kw, n);
			e->ev.vector = (uint8_t)n;
			need_vec = false;
			has_vec = true;
		} else if (!strcmp(key, "reason") && e->ev.kind == RTIT_EV_VMEXIT) {
			if (n > 0xffffffffull)
				return perr(p, "event vmexit: reason 0x%" PRIx64 " is wider than"
					    " the 32-bit exit-reason field", n);
			e->ev.msr = (uint32_t)n;
		} else if (!strcmp(key, "qual") && e->ev.kind == RTIT_EV_VMEXIT) {
			e->ev.value = n;
		} else if (!strcmp(key, "vector") && e->ev.kind == RTIT_EV_SIPI) {
			/* SDM Vol. 3 9.4.4: the SIPI vector VV starts the AP
			 * at VV000H */
			if (n > 255)
				return perr(p, "event sipi: vector %" PRIu64 " > 255", n);
			e->ev.vector = (uint8_t)n;
			need_vec = false;
		} else if (!strcmp(key, "vector") && e->ev.kind == RTIT_EV_UINTR) {
			/* a user-interrupt vector: a bit of UIRR */
			if (n > 63)
				return perr(p, "event uintr: vector %" PRIu64 " > 63", n);
			e->ev.vector = (uint8_t)n;
			need_vec = false;
		} else if (!strcmp(key, "ap") && e->ev.kind == RTIT_EV_INIT) {
			/* ap=1: an application processor, which waits for a SIPI */
			if (n > 1)
				return perr(p, "event init: ap must be 0 (BSP) or 1 (AP)");
			e->ev.vector = (uint8_t)n;
		} else if (!strcmp(key, "cycles") && (e->ev.kind == RTIT_EV_SMI ||
						      e->ev.kind == RTIT_EV_VMEXIT)) {
			e->ev.duration = n;
		} else if (!strcmp(key, "ratio") && e->ev.kind == RTIT_EV_FREQ_CHANGE) {
			if (!n || n > 255)
				return perr(p, "event freq: ratio must be 1..255");
			e->ev.value = n;
			need_ratio = false;
		} else if (!strcmp(key, "ticks") && e->ev.kind == RTIT_EV_SLEEP) {
			e->ev.value = n;
			need_ticks = false;
		} else if (!strcmp(key, "status") && e->ev.kind == RTIT_EV_TSX_ABORT) {
			if (n > 0xffffffffull)
				return perr(p, "event tsx-abort: status 0x%" PRIx64 " is wider"
					    " than EAX", n);
			e->ev.value = n;
		} else if (!strcmp(key, "cstate") && e->ev.kind == RTIT_EV_SLEEP) {
			if (n > 15)
				return perr(p, "event sleep: cstate %" PRIu64 " > 15", n);
			e->ev.vector = (uint8_t)n;
		} else {
			return perr(p, "event %s: unknown argument '%s'", kw, key);
		}
	}
	if (need_vec)
		return perr(p, "event %s: missing vector=N", kw);
	if (e->ev.kind == RTIT_EV_VMEXIT && rtit_vmx_exit_has_vector(e->ev.msr) != has_vec)
		return perr(p, has_vec ? "event vmexit: vector=N is only for basic exit reasons"
				       " 0 (exception or NMI) and 1 (external interrupt)" :
				       "event vmexit: basic exit reason %u needs vector=N",
			    e->ev.msr & 0xffffu);
	if (need_ratio)
		return perr(p, "event freq: missing ratio=N");
	if (need_ticks)
		return perr(p, "event sleep: missing ticks=N");
	sc->nevents++;
	return 0;
}

/* `code asm ... .NAME=ADDR`: section .NAME of the source linked at ADDR. */
static int code_section(struct parser *p, const char *k, const char *v)
{
	struct rtit_scenario *sc = p->sc;
	size_t n = strlen(k);
	if (n < 2 || n >= sizeof(sc->asm_sections[0].name) ||
	    strspn(k + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != n - 1)
		return perr(p, "code asm: bad section name '%s' (.NAME, letters, digits, _ and ., "
			    "at most %zu characters)", k, sizeof(sc->asm_sections[0].name) - 1);
	if (sc->nasm_sections == RTIT_ASM_MAX_SECTIONS)
		return perr(p, "code asm: more than %d sections placed", RTIT_ASM_MAX_SECTIONS);
	struct rtit_asm_section *s = &sc->asm_sections[sc->nasm_sections];
	if (parse_u64(v, &s->addr) < 0)
		return perr(p, "code asm: bad address '%s' for section %s", v, k);
	snprintf(s->name, sizeof(s->name), "%s", k);
	sc->nasm_sections++;
	return 0;
}

static int parse_code(struct parser *p, char *rest, bool *in_asm)
{
	struct rtit_scenario *sc = p->sc;
	int r = once(p, SEEN_CODE, "code");
	if (r < 0)
		return r;
	char *kind = word(&rest);
	if (!kind)
		return perr(p, "code: expected asm, elf, flat or process");
	if (!strcmp(kind, "asm"))
		sc->code_kind = RTIT_SCN_CODE_ASM;
	else if (!strcmp(kind, "elf"))
		sc->code_kind = RTIT_SCN_CODE_ELF;
	else if (!strcmp(kind, "flat"))
		sc->code_kind = RTIT_SCN_CODE_FLAT;
	else if (!strcmp(kind, "process"))
		sc->code_kind = RTIT_SCN_CODE_PROCESS;
	else
		return perr(p, "code: unknown kind '%s' (asm, elf, flat, process)", kind);
	bool has_load = false, has_path = false;
	char *w;
	while ((w = word(&rest)) != NULL) {
		char *k, *v;
		if (kv(w, &k, &v) < 0)
			return perr(p, "code: expected key=value, got '%s'", w);
		if (!strcmp(k, "load")) {
			if (parse_u64(v, &sc->load) < 0)
				return perr(p, "code: bad load address '%s'", v);
			has_load = true;
		} else if (!strcmp(k, "entry")) {
			r = parse_addr(p, v, &sc->entry, "code entry");
			if (r < 0)
				return r;
			sc->has_entry = true;
		} else if (k[0] == '.' && sc->code_kind == RTIT_SCN_CODE_ASM) {
			r = code_section(p, k, v);
			if (r < 0)
				return r;
		} else if (!strcmp(k, "path") && sc->code_kind != RTIT_SCN_CODE_ASM) {
			snprintf(sc->code_path, sizeof(sc->code_path), "%s", v);
			has_path = true;
		} else {
			return perr(p, "code %s: unknown key '%s'", kind, k);
		}
	}
	switch (sc->code_kind) {
	case RTIT_SCN_CODE_ASM:
		if (!has_load)
			return perr(p, "code asm: missing load=ADDRESS");
		sc->asm_line = p->line;
		*in_asm = true;
		sc->asm_text = calloc(1, 1);
		if (!sc->asm_text)
			return -RTIT_ERR_NOMEM;
		break;
	case RTIT_SCN_CODE_ELF:
		if (!has_path)
			return perr(p, "code elf: missing path=FILE");
		if (has_load || sc->has_entry)
			return perr(p, "code elf: load and entry come from the ELF");
		break;
	case RTIT_SCN_CODE_FLAT:
		if (!has_path || !has_load)
			return perr(p, "code flat: needs path=FILE and load=ADDRESS");
		break;
	case RTIT_SCN_CODE_PROCESS:
		if (!has_path)
			return perr(p, "code process: missing path=FILE");
		if (has_load || sc->has_entry)
			return perr(p, "code process: load and entry come from the ELF");
		/* a Linux process runs at CPL 3 in 64-bit mode */
		sc->cpl = 3;
		break;
	default:
		break;
	}
	return 0;
}

/* A process's `arg VALUE` and `env NAME=VALUE` lines (the rest of the
 * line, blanks inside kept), `seed N`, `writable DIR`, `stdin FILE`,
 * `syscall-cycles N`. */
static int dir_process(struct parser *p, const char *dir, char *rest, bool *in_asm,
		       bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	char *v = skip_ws(rest);
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
		v[--n] = 0;
	if (!strcmp(dir, "arg") || !strcmp(dir, "env")) {
		bool arg = dir[0] == 'a';
		size_t *cnt = arg ? &sc->nargs : &sc->nenvs;
		if (*cnt == RTIT_SCN_MAX_ARGS)
			return perr(p, "%s: more than %d lines", dir, RTIT_SCN_MAX_ARGS);
		if (!arg && (!strchr(v, '=') || v[0] == '='))
			return perr(p, "env: expected NAME=VALUE");
		char *c = strdup(v);
		if (!c)
			return -RTIT_ERR_NOMEM;
		(arg ? sc->args : sc->envs)[(*cnt)++] = c;
		return 0;
	}
	if (!*v)
		return perr(p, "%s: expected a value", dir);
	if (!strcmp(dir, "writable") || !strcmp(dir, "stdin")) {
		char *dst = dir[0] == 'w' ? sc->writable : sc->stdin_path;
		if (n >= sizeof(sc->writable))
			return perr(p, "%s: the path is too long", dir);
		memcpy(dst, v, n + 1);
		return 0;
	}
	uint64_t x;
	if (parse_u64(v, &x) < 0)
		return perr(p, "%s: expected one number", dir);
	if (!strcmp(dir, "seed"))
		sc->seed = x;
	else if (!x || x > 1000000000ull)
		return perr(p, "syscall-cycles: expected 1 to 10^9");
	else
		sc->syscall_cycles = (uint32_t)x;
	return 0;
}

/* Cuts a trailing comment: '#' after whitespace, outside quotes. */
static void cut_comment(char *s)
{
	bool q = false;
	for (char *c = s; *c; c++) {
		if (*c == '"')
			q = !q;
		else if (*c == '#' && !q && (c == s || c[-1] == ' ' || c[-1] == '\t')) {
			*c = 0;
			break;
		}
	}
	rtrim(s);
}

/* One function per directive (docs/scenario.md), found by name in
 * directives[]; @rest is the line after the directive's word. */
static int dir_name(struct parser *p, const char *dir, char *rest,
		    bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_NAME, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (!w || word(&rest))
		return perr(p, "name: expected one word");
	snprintf(sc->name, sizeof(sc->name), "%s", w);
	return 0;
}

static int dir_describe(struct parser *p, const char *dir, char *rest,
			bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_DESCRIBE, dir)) < 0)
		return r;
	rest = skip_ws(rest);
	size_t n = strlen(rest);
	if (n < 2 || rest[0] != '"' || rest[n - 1] != '"')
		return perr(p, "describe: expected \"text in quotes\"");
	rest[n - 1] = 0;
	snprintf(sc->describe, sizeof(sc->describe), "%s", rest + 1);
	return 0;
}

static int dir_dialect(struct parser *p, const char *dir, char *rest,
		       bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_DIALECT, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (w && !strcmp(w, "rtit"))
		sc->dialect = RTIT_DIALECT_RTIT;
	else if (w && !strcmp(w, "pt"))
		sc->dialect = RTIT_DIALECT_PT;
	else
		return perr(p, "dialect: expected rtit or pt");
	if (sc->nmsrs || sc->nevents)
		return perr(p, "dialect: must come before msr and event lines");
	return 0;
}

static int dir_cpu(struct parser *p, const char *dir, char *rest,
		   bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_CPU, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (!w || word(&rest))
		return perr(p, "cpu: expected one word");
	snprintf(sc->cpu, sizeof(sc->cpu), "%s", w);
	return 0;
}

static int dir_mode(struct parser *p, const char *dir, char *rest,
		    bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_MODE, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (!w || (strcmp(w, "64") && strcmp(w, "32")))
		return perr(p, "mode: expected 64 or 32");
	sc->mode = atoi(w);
	return 0;
}

static int dir_code(struct parser *p, const char *dir, char *rest,
		    bool *in_asm, bool *in_expect)
{
	return parse_code(p, rest, in_asm);
}

static int dir_msr(struct parser *p, const char *dir, char *rest,
		   bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	char *w = word(&rest);
	if (!w)
		return perr(p, "msr: expected 'msr NAME = VALUE'");
	GROW(sc->msrs, sc->nmsrs);
	struct rtit_scn_msr *m = &sc->msrs[sc->nmsrs];
	m->line = p->line;
	snprintf(m->name, sizeof(m->name), "%s", w);
	if ((r = parse_msr_ref(p, w, &m->msr, "msr")) < 0)
		return r;
	if ((r = after_eq(p, &rest, &m->value, "msr")) < 0)
		return r;
	sc->nmsrs++;
	return 0;
}

static int dir_param(struct parser *p, const char *dir, char *rest,
		     bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;

	char *k = word(&rest), *eq = word(&rest);
	rest = skip_ws(rest);
	if (!k || !eq || strcmp(eq, "=") || !*rest)
		return perr(p, "param: expected 'param KEY = VALUE'");
	GROW(sc->params, sc->nparams);
	struct rtit_scn_kv *kvp = &sc->params[sc->nparams];
	if (strlen(k) >= sizeof(kvp->key) || strlen(rest) >= sizeof(kvp->value))
		return perr(p, "param: key or value too long");
	snprintf(kvp->key, sizeof(kvp->key), "%s", k);
	snprintf(kvp->value, sizeof(kvp->value), "%s", rest);
	kvp->line = p->line;
	sc->nparams++;
	return 0;
}

static int dir_clock(struct parser *p, const char *dir, char *rest,
		     bool *in_asm, bool *in_expect)
{
	return parse_clock(p, rest);
}

static int dir_event(struct parser *p, const char *dir, char *rest,
		     bool *in_asm, bool *in_expect)
{
	return parse_event(p, rest);
}

static int dir_handler(struct parser *p, const char *dir, char *rest,
		       bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	char *vw = word(&rest), *eq = word(&rest), *aw = word(&rest);
	uint64_t vec;
	if (!vw || !eq || strcmp(eq, "=") || !aw)
		return perr(p, "handler: expected 'handler VECTOR = ADDRESS|LABEL'");
	if (parse_u64(vw, &vec) < 0 || vec > 255)
		return perr(p, "handler: bad vector '%s' (0..255)", vw);
	GROW(sc->handlers, sc->nhandlers);
	struct rtit_scn_handler *h = &sc->handlers[sc->nhandlers];
	memset(h, 0, sizeof(*h));
	h->vector = (unsigned)vec;
	h->line = p->line;
	if (!strcmp(aw, "task")) {
		/* handler N = task SEL: a task gate (SDM 6.12.2) */
		char *sw = word(&rest);
		uint64_t sel;
		if (!sw || word(&rest) || parse_u64(sw, &sel) < 0 || !sel || sel > 0xffff)
			return perr(p, "handler: expected 'handler VECTOR = task SELECTOR'");
		h->task = (uint16_t)sel;
	} else {
		if (word(&rest))
			return perr(p, "handler: expected 'handler VECTOR = ADDRESS|LABEL'");
		if ((r = parse_addr(p, aw, &h->ip, "handler")) < 0)
			return r;
	}
	sc->nhandlers++;
	return 0;
}

static int dir_task(struct parser *p, const char *dir, char *rest,
		    bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;

	bool is_tr = dir[1] == 'r';
	char *sw = word(&rest), *w;
	uint64_t sel, n;
	if (!sw || parse_u64(sw, &sel) < 0 || !sel || sel > 0xffff)
		return perr(p, is_tr ? "tr: expected 'tr SELECTOR'" :
			    "task: expected 'task SELECTOR tss=ADDRESS [mode=16|32]'");
	GROW(sc->tasks, sc->ntasks);
	struct rtit_scn_task *t = &sc->tasks[sc->ntasks];
	memset(t, 0, sizeof(*t));
	t->sel = (uint16_t)sel;
	t->mode = 32;
	t->tr = is_tr;
	t->line = p->line;
	bool has_tss = false;
	while (!is_tr && (w = word(&rest)) != NULL) {
		char *key, *val;
		if (kv(w, &key, &val) < 0 || parse_u64(val, &n) < 0)
			return perr(p, "task: expected key=NUMBER, got '%s'", w);
		if (!strcmp(key, "tss")) {
			t->tss = n;
			has_tss = true;
		} else if (!strcmp(key, "mode") && (n == 16 || n == 32)) {
			t->mode = (int)n;
		} else {
			return perr(p, "task: unknown or bad argument '%s=%s' (tss=ADDRESS,"
				    " mode=16|32)", key, val);
		}
	}
	if (is_tr && word(&rest))
		return perr(p, "tr: expected 'tr SELECTOR'");
	if (!is_tr && !has_tss)
		return perr(p, "task: missing tss=ADDRESS");
	sc->ntasks++;
	return 0;
}

static int dir_mem(struct parser *p, const char *dir, char *rest,
		   bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;

	char *aw = word(&rest), *sw = word(&rest);
	uint64_t a, n;
	if (!aw || !sw || word(&rest) || parse_u64(aw, &a) < 0 ||
	    parse_u64(sw, &n) < 0 || !n)
		return perr(p, "mem: expected 'mem ADDRESS SIZE'");
	GROW(sc->mems, sc->nmems);
	sc->mems[sc->nmems].addr = a;
	sc->mems[sc->nmems].size = n;
	sc->mems[sc->nmems].line = p->line;
	sc->nmems++;
	return 0;
}

static int dir_reg(struct parser *p, const char *dir, char *rest,
		   bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	char *nw = word(&rest);
	if (!nw)
		return perr(p, "reg: expected 'reg NAME = VALUE'");
	size_t nr = sizeof(reg_names) / sizeof(reg_names[0]), i;
	for (i = 0; i < nr; i++)
		if (!strcasecmp(nw, reg_names[i].name))
			break;
	if (i == nr)
		return perr(p, "reg: unknown register '%s'", nw);
	GROW(sc->regs, sc->nregs);
	struct rtit_scn_reg *rg = &sc->regs[sc->nregs];
	rg->uc_reg = reg_names[i].id;
	snprintf(rg->name, sizeof(rg->name), "%s", reg_names[i].name);
	rg->line = p->line;
	if ((r = after_eq(p, &rest, &rg->value, "reg")) < 0)
		return r;
	sc->nregs++;
	return 0;
}

static int dir_rtm(struct parser *p, const char *dir, char *rest,
		   bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_RTM, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (!w || (strcmp(w, "on") && strcmp(w, "off")))
		return perr(p, "rtm: expected on or off, then optionally lines=N");
	sc->rtm = !strcmp(w, "on");
	sc->rtm_line = p->line;
	while ((w = word(&rest)) != NULL) {
		char *key, *val;
		uint64_t n;
		if (kv(w, &key, &val) < 0 || parse_u64(val, &n) < 0)
			return perr(p, "rtm: expected lines=N, got '%s'", w);
		if (strcmp(key, "lines"))
			return perr(p, "rtm: unknown argument '%s'", key);
		if (!n || n > 65536)
			return perr(p, "rtm: lines must be 1..65536");
		sc->rtm_lines = (uint32_t)n;
	}
	return 0;
}

static int dir_enclave(struct parser *p, const char *dir, char *rest,
		       bool *in_asm, bool *in_expect)
{
	return parse_enclave(p, rest);
}

/* vmentry guest=ADDR|LABEL [cr3=N]: the VMCS guest state a VMLAUNCH or
 * VMRESUME enters (docs/scenario.md; D147) */
static int dir_vmentry(struct parser *p, const char *dir, char *rest,
		       bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	char *w, *key, *val;
	int r;

	if ((r = once(p, SEEN_VMENTRY, dir)) < 0)
		return r;
	while ((w = word(&rest)) != NULL) {
		if (kv(w, &key, &val) < 0)
			return perr(p, "vmentry: expected KEY=VALUE, got '%s'", w);
		if (!strcmp(key, "guest")) {
			if ((r = parse_addr(p, val, &sc->vm_guest, "vmentry guest")) < 0)
				return r;
			sc->has_vmentry = true;
		} else if (!strcmp(key, "cr3")) {
			if (parse_u64(val, &sc->vm_cr3) < 0)
				return perr(p, "vmentry cr3: bad number '%s'", val);
			sc->vm_has_cr3 = true;
		} else {
			return perr(p, "vmentry: unknown field '%s' (guest, cr3)", key);
		}
	}
	if (!sc->has_vmentry)
		return perr(p, "vmentry: missing guest=ADDR|LABEL");
	sc->vm_line = p->line;
	return 0;
}

static int dir_cpl(struct parser *p, const char *dir, char *rest,
		   bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_CPL, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (!w || (strcmp(w, "0") && strcmp(w, "3")) || word(&rest))
		return perr(p, "cpl: expected 0 or 3");
	sc->cpl = atoi(w);
	return 0;
}

static int dir_number(struct parser *p, const char *dir, char *rest,
		      bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;
	uint64_t v;

	int which = !strcmp(dir, "cr0") ? SEEN_CR0 : dir[0] == 'c' ? SEEN_CR3 :
		    dir[0] == 'r' ? SEEN_RSP0 : SEEN_BUDGET;
	if ((r = once(p, which, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (!w || parse_u64(w, &v) < 0 || word(&rest))
		return perr(p, "%s: expected one number", dir);
	if (which == SEEN_CR3)
		sc->cr3 = v;
	else if (which == SEEN_CR0) {
		sc->cr0 = v;
		sc->has_cr0 = true;
		sc->cr0_line = p->line;
	}
	else if (which == SEEN_RSP0)
		sc->rsp0 = v;
	else if (!v)
		return perr(p, "budget: must be at least 1");
	else
		sc->budget = v;
	return 0;
}

static int dir_end_at(struct parser *p, const char *dir, char *rest,
		      bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_END, dir)) < 0)
		return r;
	char *w = word(&rest);
	if (!w || word(&rest))
		return perr(p, "end-at: expected ADDRESS|LABEL");
	if ((r = parse_addr(p, w, &sc->end, "end-at")) < 0)
		return r;
	sc->has_end = true;
	return 0;
}

static int dir_expect(struct parser *p, const char *dir, char *rest,
		      bool *in_asm, bool *in_expect)
{
	struct rtit_scenario *sc = p->sc;
	int r;

	if ((r = once(p, SEEN_EXPECT, dir)) < 0)
		return r;
	if (word(&rest))
		return perr(p, "expect: nothing may follow on the line");
	sc->has_expect = true;
	*in_expect = true;
	return 0;
}

static int dir_end(struct parser *p, const char *dir, char *rest,
		   bool *in_asm, bool *in_expect)
{
	return perr(p, "'end' without an open code asm or expect block");
}

static const struct directive {
	const char *name;
	int (*parse)(struct parser *p, const char *dir, char *rest, bool *in_asm,
		     bool *in_expect);
} directives[] = {
	{ "name", dir_name },
	{ "describe", dir_describe },
	{ "dialect", dir_dialect },
	{ "cpu", dir_cpu },
	{ "mode", dir_mode },
	{ "code", dir_code },
	{ "msr", dir_msr },
	{ "param", dir_param },
	{ "clock", dir_clock },
	{ "event", dir_event },
	{ "handler", dir_handler },
	{ "task", dir_task },
	{ "tr", dir_task },
	{ "mem", dir_mem },
	{ "reg", dir_reg },
	{ "rtm", dir_rtm },
	{ "enclave", dir_enclave },
	{ "vmentry", dir_vmentry },
	{ "cpl", dir_cpl },
	{ "cr3", dir_number },
	{ "cr0", dir_number },
	{ "rsp0", dir_number },
	{ "budget", dir_number },
	{ "end-at", dir_end_at },
	{ "expect", dir_expect },
	{ "end", dir_end },
	{ "arg", dir_process },
	{ "env", dir_process },
	{ "seed", dir_process },
	{ "writable", dir_process },
	{ "stdin", dir_process },
	{ "syscall-cycles", dir_process },
};

static int parse_line(struct parser *p, char *s, bool *in_asm, bool *in_expect)
{
	cut_comment(s);
	char *rest = s;
	char *dir = word(&rest);
	if (!dir || dir[0] == '#')
		return 0;
	for (size_t i = 0; i < sizeof(directives) / sizeof(directives[0]); i++)
		if (!strcmp(dir, directives[i].name))
			return directives[i].parse(p, dir, rest, in_asm, in_expect);
	return perr(p, "unknown directive '%s'", dir);
}

static int append_asm(struct rtit_scenario *sc, const char *line)
{
	size_t a = strlen(sc->asm_text), b = strlen(line);
	char *n = realloc(sc->asm_text, a + b + 2);
	if (!n)
		return -RTIT_ERR_NOMEM;
	memcpy(n + a, line, b);
	n[a + b] = '\n';
	n[a + b + 1] = 0;
	sc->asm_text = n;
	return 0;
}

static void defaults(struct rtit_scenario *sc)
{
	struct rtit_sim_config cfg;
	memset(sc, 0, sizeof(*sc));
	rtit_sim_config_default(&cfg);
	sc->clock = cfg.clock;
	sc->mode = 64;
	sc->dialect = RTIT_DIALECT_RTIT;
	sc->rtm = -1;
}

int rtit_scenario_parse_string(const char *text, const char *name,
			       struct rtit_scenario *sc,
			       struct rtit_scn_error *err)
{
	if (!text || !sc)
		return -RTIT_ERR_INVALID;
	defaults(sc);
	if (err)
		memset(err, 0, sizeof(*err));
	if (!name)
		name = "<scenario>";
	snprintf(sc->path, sizeof(sc->path), "%s", name);
	struct parser p = { .sc = sc, .err = err, .file = name };
	bool in_asm = false, in_expect = false;
	int open_line = 0;
	const char *s = text;
	int r = 0;
	if (!strncmp(s, "\xef\xbb\xbf", 3))
		s += 3;	/* a UTF-8 byte order mark */
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		char *line = malloc(n + 1);
		if (!line)
			return -RTIT_ERR_NOMEM;
		memcpy(line, s, n);
		line[n] = 0;
		p.line++;
		s += n + (e ? 1 : 0);
		rtrim(line);
		char *t = skip_ws(line);
		if ((in_asm || in_expect) && !strcmp(t, "end")) {
			in_asm = in_expect = false;
		} else if (in_asm) {
			r = append_asm(sc, line);
		} else if (in_expect) {
			if (*t && *t != '#') {
				GROW(sc->expect, sc->nexpect);
				sc->expect[sc->nexpect].line = p.line;
				sc->expect[sc->nexpect].text = strdup(t);
				if (!sc->expect[sc->nexpect++].text)
					r = -RTIT_ERR_NOMEM;
			}
		} else {
			r = parse_line(&p, line, &in_asm, &in_expect);
			if (in_asm || in_expect)
				open_line = p.line;
		}
		free(line);
		if (r < 0)
			return r;
	}
	if (in_asm || in_expect) {
		p.line = open_line;
		return perr(&p, "%s block is not closed by 'end'",
			    in_asm ? "code asm" : "expect");
	}
	if (sc->rtm == 1 && sc->dialect == RTIT_DIALECT_RTIT) {
		p.line = sc->rtm_line;
		return perr(&p, "rtm on: the rtit dialect models Silvermont, which has no TSX"
			    " (XBEGIN is #UD there); use dialect pt");
	}
	for (size_t i = 0; i < sc->nevents && sc->dialect == RTIT_DIALECT_RTIT; i++) {
		if (sc->events[i].ev.kind != RTIT_EV_UINTR)
			continue;
		p.line = sc->events[i].line;
		return perr(&p, "event uintr: the rtit dialect models Silvermont, which has no"
			    " user interrupts; use dialect pt");
	}
	if (sc->has_vmentry && sc->dialect == RTIT_DIALECT_RTIT) {
		p.line = sc->vm_line;
		return perr(&p, "vmentry: VM entries into a guest are modelled for dialect pt only"
			    " (D147)");
	}
	if (sc->nenclaves && sc->dialect == RTIT_DIALECT_RTIT) {
		p.line = sc->enclaves[0].line;
		return perr(&p, "enclave: the rtit dialect models Silvermont, which has no SGX"
			    " (ENCLU is #UD there); use dialect pt");
	}
	/* 64-bit mode runs with paging on (SDM Vol. 3 9.8.5: IA-32e mode
	 * needs CR0.PG = 1); CR0.PE: protected mode, the only one run */
	if (sc->has_cr0 && (!(sc->cr0 & 1) || (sc->mode == 64 && !(sc->cr0 >> 31 & 1)))) {
		p.line = sc->cr0_line;
		return perr(&p, "cr0: needs PE (bit 0)%s", sc->mode == 64 ?
			    " and, in mode 64, PG (bit 31)" : "");
	}
	if (sc->code_kind == RTIT_SCN_CODE_NONE) {
		p.line = 0;
		if (err)
			snprintf(err->text, sizeof(err->text),
				 "%.200s: no 'code' line: nothing to run", name);
		return -RTIT_ERR_BAD_CONFIG;
	}
	return 0;
}

int rtit_scenario_parse_file(const char *path, struct rtit_scenario *sc,
			     struct rtit_scn_error *err)
{
	if (!path || !sc)
		return -RTIT_ERR_INVALID;
	FILE *f = fopen(path, "rb");
	if (!f) {
		defaults(sc);
		if (err) {
			err->line = 0;
			snprintf(err->text, sizeof(err->text), "%.200s: %s", path,
				 strerror(errno));
		}
		return -RTIT_ERR_IO;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -RTIT_ERR_NOMEM;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, 4096, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = 0;
	if (memchr(buf, 0, n)) {
		free(buf);
		defaults(sc);
		if (err)
			snprintf(err->text, sizeof(err->text),
				 "%.200s: binary data in a scenario file", path);
		return -RTIT_ERR_BAD_CONFIG;
	}
	int r = rtit_scenario_parse_string(buf, path, sc, err);
	free(buf);
	return r;
}

void rtit_scenario_fini(struct rtit_scenario *sc)
{
	if (!sc)
		return;
	free(sc->asm_text);
	free(sc->msrs);
	free(sc->params);
	free(sc->events);
	free(sc->handlers);
	free(sc->tasks);
	free(sc->mems);
	free(sc->regs);
	free(sc->enclaves);
	for (size_t i = 0; i < sc->nargs; i++)
		free(sc->args[i]);
	for (size_t i = 0; i < sc->nenvs; i++)
		free(sc->envs[i]);
	for (size_t i = 0; i < sc->nexpect; i++)
		free(sc->expect[i].text);
	free(sc->expect);
	memset(sc, 0, sizeof(*sc));
}

/* ------------------------------------------------------------ applying */

void rtit_scenario_config(const struct rtit_scenario *sc,
			  struct rtit_sim_config *cfg)
{
	cfg->mode = sc->mode;
	cfg->cpl = sc->cpl;
	cfg->cr3 = sc->cr3;
	if (sc->has_cr0)
		cfg->cr0 = sc->cr0;
	cfg->rsp0 = sc->rsp0;
	if (sc->budget)
		cfg->budget = sc->budget;
	cfg->clock = sc->clock;
	/* RTM: Intel PT CPUs have it, Silvermont (RTIT) does not (D42) */
	cfg->rtm = sc->rtm < 0 ? sc->dialect == RTIT_DIALECT_PT : sc->rtm == 1;
	cfg->rtm_lines = sc->rtm_lines;
	/* PEBS output to Intel PT: not on Silvermont (RTIT), D53 */
	cfg->pmu = sc->dialect == RTIT_DIALECT_PT;
	/* user interrupts: Intel PT CPUs (Sapphire Rapids on), not Silvermont */
	cfg->uintr = sc->dialect == RTIT_DIALECT_PT;
	/* SGX: as RTM, Silvermont (RTIT) has none (D50) */
	cfg->sgx = sc->dialect == RTIT_DIALECT_PT;
	if (sc->code_kind == RTIT_SCN_CODE_PROCESS)
		rtit_sim_process_config(cfg);
}

/* The environment of a process with no `env` line (docs/linux.md, D89). */
static const char *const default_env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/",
					   "LC_ALL=C", "TERM=dumb" };

static int setup_process(const struct rtit_scenario *sc, struct rtit_sim *sim,
			 const char *path, struct rtit_scn_error *err);

static int serr(struct rtit_scn_error *err, const struct rtit_scenario *sc,
		int line, int rc, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int serr(struct rtit_scn_error *err, const struct rtit_scenario *sc,
		int line, int rc, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err) {
		err->line = line;
		if (line)
			snprintf(err->text, sizeof(err->text), "%.100s:%d: %s",
				 sc->path, line, msg);
		else
			snprintf(err->text, sizeof(err->text), "%.100s: %s",
				 sc->path, msg);
	}
	return rc < 0 ? rc : -RTIT_ERR_BAD_CONFIG;
}

static int resolve(const struct rtit_scenario *sc, struct rtit_sim *sim,
		   const struct rtit_scn_addr *a, int line, uint64_t *out,
		   struct rtit_scn_error *err)
{
	if (!a->label[0]) {
		*out = a->value;
		return 0;
	}
	if (rtit_sim_symbol(sim, a->label, out) < 0)
		return serr(err, sc, line, 0, "unknown label '%s'", a->label);
	return 0;
}

/* a path relative to the scenario file's directory */
static void rel_path(const struct rtit_scenario *sc, char *out, size_t size)
{
	const char *slash = strrchr(sc->path, '/');
	if (sc->code_path[0] == '/' || !slash)
		snprintf(out, size, "%s", sc->code_path);
	else
		snprintf(out, size, "%.*s/%s", (int)(slash - sc->path), sc->path,
			 sc->code_path);
}

int rtit_scenario_code_path(const struct rtit_scenario *sc, char *out, size_t size)
{
	if (!sc || (sc->code_kind != RTIT_SCN_CODE_ELF && sc->code_kind != RTIT_SCN_CODE_FLAT))
		return -RTIT_ERR_INVALID;
	rel_path(sc, out, size);
	return 0;
}

int rtit_scenario_image(const struct rtit_scenario *sc, struct rtit_image *img,
			struct rtit_scn_error *err)
{
	if (!sc || !img)
		return -RTIT_ERR_INVALID;
	char path[1024];
	int r;
	switch (sc->code_kind) {
	case RTIT_SCN_CODE_ASM: {
		struct rtit_asm a;
		char msg[256];
		r = rtit_asm_build_sections(sc->asm_text, sc->load, sc->asm_sections,
					    sc->nasm_sections, sc->mode == 32 ? 32 : 64, sc->path,
					    sc->asm_line, &a, msg, sizeof(msg));
		if (r < 0) {
			if (err)
				snprintf(err->text, sizeof(err->text), "%s", msg);
			return r;
		}
		r = rtit_image_add_elf(img, a.elf, 0);
		rtit_asm_cleanup(&a);
		break;
	}
	case RTIT_SCN_CODE_ELF:
		rel_path(sc, path, sizeof(path));
		r = rtit_image_add_elf(img, path, 0);
		break;
	case RTIT_SCN_CODE_FLAT:
		rel_path(sc, path, sizeof(path));
		r = rtit_image_add_file(img, path, sc->load);
		break;
	case RTIT_SCN_CODE_PROCESS:
		return serr(err, sc, 0, 0, "a process's code is known only after it ran: "
			    "decode with the run's sideband (its mmap lines)");
	default:
		return serr(err, sc, 0, 0, "no code");
	}
	if (r < 0)
		return serr(err, sc, 0, r, "%s", rtit_image_errmsg(img));
	return 0;
}

int rtit_scenario_setup(const struct rtit_scenario *sc, struct rtit_sim *sim,
			struct rtit_scn_error *err)
{
	if (!sc || !sim)
		return -RTIT_ERR_INVALID;
	char path[1024];
	int r = 0;
	switch (sc->code_kind) {
	case RTIT_SCN_CODE_ASM:
		r = rtit_sim_load_asm_sections(sim, sc->asm_text, sc->load, sc->asm_sections,
					       sc->nasm_sections, sc->path, sc->asm_line);
		if (r < 0) {
			if (err)
				snprintf(err->text, sizeof(err->text), "%s",
					 rtit_sim_errmsg(sim));
			return r;
		}
		break;
	case RTIT_SCN_CODE_ELF:
		rel_path(sc, path, sizeof(path));
		r = rtit_sim_load_elf(sim, path);
		if (r < 0)
			return serr(err, sc, 0, r, "%s", rtit_sim_errmsg(sim));
		break;
	case RTIT_SCN_CODE_FLAT: {
		rel_path(sc, path, sizeof(path));
		uint64_t entry = sc->load;
		if (sc->has_entry && !sc->entry.label[0])
			entry = sc->entry.value;
		r = rtit_sim_load_flat_file(sim, path, sc->load, entry);
		if (r < 0)
			return serr(err, sc, 0, r, "%s", rtit_sim_errmsg(sim));
		break;
	}
	case RTIT_SCN_CODE_PROCESS:
		rel_path(sc, path, sizeof(path));
		if ((r = setup_process(sc, sim, path, err)) < 0)
			return r;
		break;
	default:
		return serr(err, sc, 0, 0, "no code");
	}
	for (size_t i = 0; i < sc->nmems; i++) {
		r = rtit_sim_map(sim, sc->mems[i].addr, sc->mems[i].size);
		if (r < 0)
			return serr(err, sc, sc->mems[i].line, r, "mem: %s",
				    rtit_sim_errmsg(sim));
	}
	if (sc->has_entry && sc->code_kind == RTIT_SCN_CODE_ASM) {
		uint64_t e;
		if ((r = resolve(sc, sim, &sc->entry, sc->asm_line, &e, err)) < 0)
			return r;
		if ((r = rtit_sim_set_entry(sim, e)) < 0)
			return serr(err, sc, sc->asm_line, r, "%s", rtit_sim_errmsg(sim));
	}
	for (int pass = 0; pass < 2; pass++) {	/* the tasks, then TR */
		for (size_t i = 0; i < sc->ntasks; i++) {
			const struct rtit_scn_task *t = &sc->tasks[i];
			if (t->tr != (pass == 1))
				continue;
			r = t->tr ? rtit_sim_set_tr(sim, t->sel) :
				    rtit_sim_add_task(sim, t->sel, t->tss, t->mode);
			if (r < 0)
				return serr(err, sc, t->line, r, "%s: %s", t->tr ? "tr" : "task",
					    rtit_sim_errmsg(sim));
		}
	}
	for (size_t i = 0; i < sc->nhandlers; i++) {
		uint64_t a;
		if (sc->handlers[i].task) {
			if ((r = rtit_sim_set_task_gate(sim, sc->handlers[i].vector,
							sc->handlers[i].task)) < 0)
				return serr(err, sc, sc->handlers[i].line, r, "handler: %s",
					    rtit_sim_errmsg(sim));
			continue;
		}
		if ((r = resolve(sc, sim, &sc->handlers[i].ip, sc->handlers[i].line,
				 &a, err)) < 0)
			return r;
		rtit_sim_set_handler(sim, sc->handlers[i].vector, a);
	}
	for (size_t i = 0; i < sc->nenclaves; i++) {
		const struct rtit_scn_enclave *se = &sc->enclaves[i];
		struct rtit_sim_enclave e = { .size = se->size, .oentry = se->oentry,
					      .nssa = se->nssa, .debug = se->debug };
		if ((r = resolve(sc, sim, &se->base, se->line, &e.base, err)) < 0 ||
		    (r = resolve(sc, sim, &se->tcs, se->line, &e.tcs, err)) < 0)
			return r;
		r = rtit_sim_add_enclave(sim, &e);
		if (r < 0)
			return serr(err, sc, se->line, r, "%s", rtit_sim_errmsg(sim));
	}
	if (sc->has_vmentry) {
		uint64_t g;
		if ((r = resolve(sc, sim, &sc->vm_guest, sc->vm_line, &g, err)) < 0)
			return r;
		(void)rtit_sim_set_vmentry(sim, g, sc->vm_has_cr3 ? sc->vm_cr3 : sc->cr3);
	}
	for (size_t i = 0; i < sc->nregs; i++) {
		if (rtit_sim_set_reg(sim, sc->regs[i].uc_reg, sc->regs[i].value) < 0)
			return serr(err, sc, sc->regs[i].line, 0,
				    "reg %s: not settable in this mode",
				    sc->regs[i].name);
	}
	if (sc->has_end) {
		uint64_t a;
		if ((r = resolve(sc, sim, &sc->end, 0, &a, err)) < 0)
			return r;
		rtit_sim_set_end(sim, a);
	}
	for (size_t i = 0; i < sc->nevents; i++) {
		struct rtit_sim_inject ev = sc->events[i].ev;
		if (ev.trigger == RTIT_SIM_AT_IP &&
		    (r = resolve(sc, sim, &sc->events[i].at, sc->events[i].line,
				 &ev.at, err)) < 0)
			return r;
		r = rtit_sim_inject(sim, &ev);
		if (r == -RTIT_ERR_NOSPACE)
			return serr(err, sc, sc->events[i].line, r,
				    "event: more than %d injected events",
				    RTIT_SIM_MAX_INJECT);
		if (r < 0)
			return serr(err, sc, sc->events[i].line, r,
				    "event: %s", rtit_errstr(r));
	}
	/* the clock's core:bus ratio first: the trace block's STS/CBR (D79) */
	(void)rtit_sim_report_clock(sim);
	for (size_t i = 0; i < sc->nmsrs; i++) {
		r = rtit_sim_msr_preset(sim, sc->msrs[i].msr, sc->msrs[i].value);
		if (r < 0)
			return serr(err, sc, sc->msrs[i].line, r,
				    "msr %s = 0x%" PRIx64 ": refused", sc->msrs[i].name,
				    sc->msrs[i].value);
	}
	return 0;
}

/* code process: argv[0] is the path as written, then the `arg` lines. */
static int setup_process(const struct rtit_scenario *sc, struct rtit_sim *sim,
			 const char *path, struct rtit_scn_error *err)
{
	const char *argv[RTIT_SCN_MAX_ARGS + 1];
	argv[0] = sc->code_path;
	for (size_t i = 0; i < sc->nargs; i++)
		argv[i + 1] = sc->args[i];
	struct rtit_sim_process p = {
		.path = path, .argv = argv, .argc = (int)sc->nargs + 1,
		.envp = sc->nenvs ? (const char *const *)sc->envs : default_env,
		.envc = sc->nenvs ? (int)sc->nenvs : (int)(sizeof(default_env) / sizeof(default_env[0])),
		.seed = sc->seed,
		.writable = sc->writable[0] ? sc->writable : NULL,
		.stdin_path = sc->stdin_path[0] ? sc->stdin_path : NULL,
		.out = stdout, .err = stderr,
		.syscall_cycles = sc->syscall_cycles,
	};
	int r = rtit_sim_load_process(sim, &p);
	if (r < 0)
		return serr(err, sc, 0, r, "%s", rtit_sim_errmsg(sim));
	return 0;
}
