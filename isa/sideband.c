/*
 * sideband.c - the sideband file, written and read (rtit/sideband.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rtit/pt_errata.h"
#include "rtit/sideband.h"

void rtit_sideband_init(struct rtit_sideband *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->dialect = -1;
	sb->cycle_acc = sb->cmprs_ret = sb->mtc_range = -1;
	sb->ret_compression = -1;
	sb->overflows = -1;
	sb->exit_status = -1;
	sb->ctl_fixed = -1;
}

void rtit_sideband_fini(struct rtit_sideband *sb)
{
	free(sb->mmaps);
	rtit_sideband_init(sb);
}

int rtit_sideband_add_mmap(struct rtit_sideband *sb, const struct rtit_sideband_mmap *m)
{
	if (sb->nmmaps == sb->mmaps_cap) {
		size_t cap = sb->mmaps_cap ? 2 * sb->mmaps_cap : 16;
		struct rtit_sideband_mmap *v = realloc(sb->mmaps, cap * sizeof(*v));
		if (!v)
			return -RTIT_ERR_NOMEM;
		sb->mmaps = v;
		sb->mmaps_cap = cap;
	}
	sb->mmaps[sb->nmmaps++] = *m;
	return 0;
}

const char *rtit_sideband_param(const struct rtit_sideband *sb, const char *key)
{
	for (size_t i = 0; i < sb->nparams; i++)
		if (!strcmp(sb->params[i].key, key))
			return sb->params[i].value;
	return NULL;
}

/* ------------------------------------------------------------ writing */

int rtit_sideband_write(FILE *f, const struct rtit_sideband *sb)
{
	bool pt = sb->dialect == RTIT_DIALECT_PT;

	fprintf(f, "%s\nrtitsim_version %s\nscenario %s\nname %s\ndialect %s\ncpu %s\nmode %d\n",
		RTIT_SIDEBAND_HEADER, sb->version, sb->scenario, sb->name, pt ? "pt" : "rtit",
		sb->cpu, sb->mode);
	if (sb->image[0])
		fprintf(f, "image %s\n", sb->image);
	if (pt)
		fprintf(f, "ia32_rtit_ctl 0x%" PRIx64 "\nret_compression %d\nmtc_freq %u\n"
			"cyc_thresh %u\nart_num %u\nart_den %u\ncbr %u\n", sb->ia32_rtit_ctl,
			sb->ret_compression, sb->mtc_freq, sb->cyc_thresh, sb->art_num,
			sb->art_den, sb->cbr);
	else
		fprintf(f, "cycle_accurate %d\ncmprs_ret %d\nmtc_range %d\nrtit_ctl 0x%" PRIx64 "\n",
			sb->cycle_acc, sb->cmprs_ret, sb->mtc_range, sb->rtit_ctl);
	if (pt && sb->pt_errata) {
		char names[128];
		fprintf(f, "pt_errata %s\n", rtit_pt_errata_format(sb->pt_errata, names,
								   sizeof(names)));
		for (int n = 0; n < 4; n++)
			fprintf(f, "ia32_rtit_addr%d_a 0x%" PRIx64 "\nia32_rtit_addr%d_b 0x%" PRIx64 "\n",
				n, sb->addr_a[n], n, sb->addr_b[n]);
	}
	for (size_t i = 0; i < sb->nparams; i++)
		fprintf(f, "param %s = %s\n", sb->params[i].key, sb->params[i].value);
	fprintf(f, "trace_bytes %" PRIu64 "\ntrace_xxh3 %s\nflow_records %" PRIu64
		"\nflow_xxh3 %s\ninstructions %" PRIu64 "\nevents %" PRIu64 "\npackets %" PRIu64
		"\npsbs %" PRIu64 "\noverflows %" PRId64 "\nstop %s\n",
		sb->trace_bytes, sb->trace_xxh3, sb->flow_records, sb->flow_xxh3,
		sb->instructions, sb->events, sb->packets, sb->psbs,
		sb->overflows < 0 ? 0 : sb->overflows, sb->stop);
	for (int e = 1; e < RTIT_SIDEBAND_NERRATA && !pt; e++)
		if (sb->errata_fired[e])
			fprintf(f, "erratum_e%d_fired %" PRIu64 "\n", e, sb->errata_fired[e]);
	for (size_t i = 0; i < sb->nmmaps; i++) {
		const struct rtit_sideband_mmap *m = &sb->mmaps[i];
		fprintf(f, "mmap 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " %c%c%c %" PRIu64 " %s %s\n",
			m->addr, m->size, m->offset, (m->prot & 1) ? 'r' : '-',
			(m->prot & 2) ? 'w' : '-', (m->prot & 4) ? 'x' : '-', m->at,
			m->build_id[0] ? m->build_id : "-", m->path);
	}
	if (sb->mmaps_total)
		fprintf(f, "mmaps_total %" PRIu64 "\n", sb->mmaps_total);
	if (sb->exit_status >= 0)
		fprintf(f, "exit_status %d\n", sb->exit_status);
	if (sb->syscalls)
		fprintf(f, "syscalls %" PRIu64 "\n", sb->syscalls);
	for (size_t i = 0; i < sb->nmsrs; i++)
		fprintf(f, "msr 0x%" PRIx32 " 0x%" PRIx64 "\n", sb->msrs[i].msr, sb->msrs[i].value);
	for (size_t i = 0; i < sb->nmaps; i++)
		fprintf(f, "map %s 0x%" PRIx64 " %s\n", sb->maps[i].elf ? "elf" : "raw",
			sb->maps[i].addr, sb->maps[i].file);
	for (size_t i = 0; i < sb->nhandlers; i++)
		fprintf(f, "handler %u 0x%" PRIx64 "\n", sb->handlers[i].vector, sb->handlers[i].ip);
	if (sb->external_ctl)
		fputs("external_ctl 1\n", f);
	if (sb->ctl_fixed >= 0)
		fprintf(f, "ctl_fixed %d\n", sb->ctl_fixed);
	return ferror(f) ? -RTIT_ERR_IO : 0;
}

/* ------------------------------------------------------------ reading */

struct rd {
	const char *path;
	int line;
	char *err;
	size_t errsz;
};

__attribute__((format(printf, 2, 3)))
static int bad(struct rd *rd, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(rd->err, rd->errsz, "%s:%d: %s", rd->path, rd->line, what);
	return -RTIT_ERR_INVALID;
}

/* An unsigned number in @base (0: C prefixes), the whole value. */
static int num(struct rd *rd, const char *key, const char *v, int base, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, base);
	if (!*v || *v == '-' || *end || errno)
		return bad(rd, "%s: '%s' is not a number", key, v);
	*out = x;
	return 0;
}

static int num_int(struct rd *rd, const char *key, const char *v, int *out)
{
	uint64_t x = 0;
	int r = num(rd, key, v, 10, &x);
	if (r != 0)
		return r;
	if (x > 0x7fffffff)
		return bad(rd, "%s: %s is too large", key, v);
	*out = (int)x;
	return 0;
}

static int num_uns(struct rd *rd, const char *key, const char *v, unsigned *out)
{
	uint64_t x = 0;
	int r = num(rd, key, v, 10, &x);
	if (r != 0)
		return r;
	if (x > 0xffffffffu)
		return bad(rd, "%s: %s is too large", key, v);
	*out = (unsigned)x;
	return 0;
}

static int str(struct rd *rd, const char *key, const char *v, char *out, size_t cap)
{
	if (strlen(v) >= cap)
		return bad(rd, "%s: longer than %zu bytes", key, cap - 1);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

static int hex16(struct rd *rd, const char *key, const char *v, char out[17])
{
	if (strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16)
		return bad(rd, "%s: '%s' is not 16 lower-case hex digits", key, v);
	memcpy(out, v, 17);
	return 0;
}

/* "stop ..." also gives where the run ended (docs/formats.md). */
static void stop_end(struct rtit_sideband *sb);

void rtit_sideband_set_stop(struct rtit_sideband *sb, const char *stop)
{
	snprintf(sb->stop, sizeof(sb->stop), "%s", stop);
	stop_end(sb);
}

static void stop_end(struct rtit_sideband *sb)
{
	unsigned long long v;
	if (sscanf(sb->stop, "reached end address %llx", &v) == 1) {
		sb->has_end = true;
		sb->end_ip = v;
	} else if (sscanf(sb->stop, "halted at %llx", &v) == 1) {
		sb->has_end = sb->end_after = true;
		sb->end_ip = v;
	}
}

static int param(struct rd *rd, struct rtit_sideband *sb, char *v)
{
	char *eq = strstr(v, " = ");
	if (!eq || eq == v || !eq[3])
		return bad(rd, "param: expected 'param KEY = VALUE'");
	if (sb->nparams == RTIT_SIDEBAND_MAX_PARAMS)
		return bad(rd, "param: more than %d", RTIT_SIDEBAND_MAX_PARAMS);
	*eq = 0;
	struct rtit_sideband_param *p = &sb->params[sb->nparams];
	int r = str(rd, "param key", v, p->key, sizeof(p->key));
	if (r == 0)
		r = str(rd, "param value", eq + 3, p->value, sizeof(p->value));
	if (r == 0)
		sb->nparams++;
	return r;
}

/* "mmap ADDR SIZE OFFSET PROT AT BUILDID PATH" (PATH: the rest). */
static int mmap_line(struct rd *rd, struct rtit_sideband *sb, char *v)
{
	struct rtit_sideband_mmap m;
	char prot[4], bid[48];
	int pos = 0;
	memset(&m, 0, sizeof(m));
	if (sscanf(v, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %3s %" SCNu64 " %47s %n", &m.addr,
		   &m.size, &m.offset, prot, &m.at, bid, &pos) != 6 || !pos || !v[pos] ||
	    strlen(prot) != 3)
		return bad(rd, "mmap: expected ADDR SIZE OFFSET PROT AT BUILDID PATH");
	m.prot = (prot[0] == 'r' ? 1u : 0) | (prot[1] == 'w' ? 2u : 0) | (prot[2] == 'x' ? 4u : 0);
	if (strcmp(bid, "-"))
		snprintf(m.build_id, sizeof(m.build_id), "%.40s", bid);
	if (str(rd, "mmap", v + pos, m.path, sizeof(m.path)) < 0)
		return -RTIT_ERR_INVALID;
	if (rtit_sideband_add_mmap(sb, &m) < 0) {
		bad(rd, "mmap: out of memory");
		return -RTIT_ERR_NOMEM;
	}
	return 0;
}

/* "map elf|raw ADDR FILE" (the file last: it may hold blanks). */
static int map(struct rd *rd, struct rtit_sideband *sb, char *v)
{
	char kind[8], addr[32];
	int n = 0;
	if (sscanf(v, "%7s %31s %n", kind, addr, &n) != 2 || !n || !v[n] ||
	    (strcmp(kind, "elf") && strcmp(kind, "raw")))
		return bad(rd, "map: expected 'map elf|raw ADDRESS FILE'");
	if (sb->nmaps == RTIT_SIDEBAND_MAX_MAPS)
		return bad(rd, "map: more than %d", RTIT_SIDEBAND_MAX_MAPS);
	struct rtit_sideband_map *m = &sb->maps[sb->nmaps];
	int r = num(rd, "map address", addr, 0, &m->addr);
	if (r == 0)
		r = str(rd, "map file", v + n, m->file, sizeof(m->file));
	m->elf = !strcmp(kind, "elf");
	if (r == 0)
		sb->nmaps++;
	return r;
}

/* "handler VECTOR IP" and "msr MSR VALUE": two numbers. */
static int pair(struct rd *rd, const char *key, char *v, uint64_t *a, uint64_t *b)
{
	char *sp = strchr(v, ' ');
	if (!sp)
		return bad(rd, "%s: expected two numbers", key);
	*sp = 0;
	int r = num(rd, key, v, 0, a);
	return r ? r : num(rd, key, sp + 1, 0, b);
}

/* The lines that repeat: map, handler, msr.  1 when @key is none. */
static int repeated(struct rd *rd, struct rtit_sideband *sb, const char *key, char *v)
{
	uint64_t a, b;
	int r;
	if (!strcmp(key, "map"))
		return map(rd, sb, v);
	if (!strcmp(key, "handler")) {
		if ((r = pair(rd, key, v, &a, &b)) != 0)
			return r;
		if (a > 255 || sb->nhandlers == RTIT_SIDEBAND_MAX_HANDLERS)
			return bad(rd, "handler: vector %" PRIu64 " is not 0-255, or more than %d",
				   a, RTIT_SIDEBAND_MAX_HANDLERS);
		sb->handlers[sb->nhandlers].vector = (unsigned)a;
		sb->handlers[sb->nhandlers++].ip = b;
		return 0;
	}
	if (!strcmp(key, "msr")) {
		if ((r = pair(rd, key, v, &a, &b)) != 0)
			return r;
		if (a > 0xffffffffu || sb->nmsrs == RTIT_SIDEBAND_MAX_MSRS)
			return bad(rd, "msr: 0x%" PRIx64 " is not a 32-bit MSR, or more than %d",
				   a, RTIT_SIDEBAND_MAX_MSRS);
		sb->msrs[sb->nmsrs].msr = (uint32_t)a;
		sb->msrs[sb->nmsrs++].value = b;
		return 0;
	}
	if (!strcmp(key, "external_ctl")) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			return bad(rd, "external_ctl: '%s' is not 0 or 1", v);
		sb->external_ctl = v[0] == '1';
		return 0;
	}
	if (!strcmp(key, "ctl_fixed")) {
		if (strcmp(v, "0") && strcmp(v, "1"))
			return bad(rd, "ctl_fixed: '%s' is not 0 or 1", v);
		sb->ctl_fixed = v[0] == '1';
		return 0;
	}
	return 1;
}

/* @f as opened: absolute, or relative to @sideband_path's directory. */
static int relative_to(const char *f, const char *sideband_path, char *out, size_t cap)
{
	const char *slash = sideband_path ? strrchr(sideband_path, '/') : NULL;
	int n = f[0] == '/' || !slash ? snprintf(out, cap, "%s", f) :
		snprintf(out, cap, "%.*s/%s", (int)(slash - sideband_path), sideband_path, f);
	return n < 0 || (size_t)n >= cap ? -RTIT_ERR_NOSPACE : 0;
}

int rtit_sideband_map_path(const struct rtit_sideband *sb, size_t i, const char *sideband_path,
			   char *out, size_t cap)
{
	return relative_to(sb->maps[i].file, sideband_path, out, cap);
}

int rtit_sideband_mmap_path(const struct rtit_sideband *sb, size_t i, char *out, size_t cap)
{
	return relative_to(sb->mmaps[i].path, sb->source, out, cap);
}

/* One "KEY VALUE" line. */
static int line(struct rd *rd, struct rtit_sideband *sb, char *key, char *v)
{
	uint64_t x;
	int r = 0;

	if (!strcmp(key, "rtitsim_version"))
		return str(rd, key, v, sb->version, sizeof(sb->version));
	if (!strcmp(key, "scenario"))
		return str(rd, key, v, sb->scenario, sizeof(sb->scenario));
	if (!strcmp(key, "name"))
		return str(rd, key, v, sb->name, sizeof(sb->name));
	if (!strcmp(key, "image"))
		return str(rd, key, v, sb->image, sizeof(sb->image));
	if (!strcmp(key, "cpu"))
		return str(rd, key, v, sb->cpu, sizeof(sb->cpu));
	if (!strcmp(key, "stop")) {
		r = str(rd, key, v, sb->stop, sizeof(sb->stop));
		stop_end(sb);
		return r;
	}
	if (!strcmp(key, "dialect")) {
		if (!strcmp(v, "rtit"))
			sb->dialect = RTIT_DIALECT_RTIT;
		else if (!strcmp(v, "pt"))
			sb->dialect = RTIT_DIALECT_PT;
		else
			return bad(rd, "unknown dialect '%s' (rtit or pt)", v);
		return 0;
	}
	if (!strcmp(key, "mode")) {
		if ((r = num_int(rd, key, v, &sb->mode)) == 0 && sb->mode != 32 &&
		    sb->mode != 64 && sb->mode != 16)
			return bad(rd, "mode: %d is not 16, 32 or 64", sb->mode);
		return r;
	}
	if (!strcmp(key, "param"))
		return param(rd, sb, v);
	if (!strcmp(key, "mmap"))
		return mmap_line(rd, sb, v);
	if (!strcmp(key, "mmaps_total"))
		return num(rd, key, v, 10, &sb->mmaps_total);
	if (!strcmp(key, "syscalls"))
		return num(rd, key, v, 10, &sb->syscalls);
	if (!strcmp(key, "exit_status")) {
		if ((r = num_int(rd, key, v, &sb->exit_status)) == 0 && sb->exit_status > 255)
			return bad(rd, "exit_status: %d is not 0 to 255", sb->exit_status);
		return r;
	}
	if ((r = repeated(rd, sb, key, v)) <= 0)
		return r;
	if (!strcmp(key, "trace_xxh3"))
		return hex16(rd, key, v, sb->trace_xxh3);
	if (!strcmp(key, "flow_xxh3"))
		return hex16(rd, key, v, sb->flow_xxh3);
	if (!strcmp(key, "cycle_accurate"))
		return num_int(rd, key, v, &sb->cycle_acc);
	if (!strcmp(key, "cmprs_ret"))
		return num_int(rd, key, v, &sb->cmprs_ret);
	if (!strcmp(key, "mtc_range"))
		return num_int(rd, key, v, &sb->mtc_range);
	if (!strcmp(key, "ret_compression"))
		return num_int(rd, key, v, &sb->ret_compression);
	if (!strcmp(key, "mtc_freq"))
		return num_uns(rd, key, v, &sb->mtc_freq);
	if (!strcmp(key, "cyc_thresh"))
		return num_uns(rd, key, v, &sb->cyc_thresh);
	if (!strcmp(key, "art_num"))
		return num_uns(rd, key, v, &sb->art_num);
	if (!strcmp(key, "art_den"))
		return num_uns(rd, key, v, &sb->art_den);
	if (!strcmp(key, "cbr"))
		return num_uns(rd, key, v, &sb->cbr);
	if (!strcmp(key, "rtit_ctl")) {
		sb->has_rtit_ctl = true;
		return num(rd, key, v, 0, &sb->rtit_ctl);
	}
	if (!strcmp(key, "ia32_rtit_ctl")) {
		sb->has_ia32_rtit_ctl = true;
		return num(rd, key, v, 0, &sb->ia32_rtit_ctl);
	}
	if (!strcmp(key, "pt_errata")) {
		if (rtit_pt_errata_parse(v, &sb->pt_errata) < 0)
			return bad(rd, "pt_errata: '%s' is not a list of erratum names", v);
		return 0;
	}
	if (!strncmp(key, "ia32_rtit_addr", 14) && key[14] >= '0' && key[14] <= '3' &&
	    key[15] == '_' && (key[16] == 'a' || key[16] == 'b') && !key[17])
		return num(rd, key, v, 0, key[16] == 'a' ? &sb->addr_a[key[14] - '0'] :
			   &sb->addr_b[key[14] - '0']);
	if (!strcmp(key, "overflows")) {
		if ((r = num(rd, key, v, 10, &x)) == 0)
			sb->overflows = (int64_t)(x > INT64_MAX ? INT64_MAX : x);
		return r;
	}
	static const struct { const char *key; size_t off; } counts[] = {
		{ "trace_bytes", offsetof(struct rtit_sideband, trace_bytes) },
		{ "flow_records", offsetof(struct rtit_sideband, flow_records) },
		{ "instructions", offsetof(struct rtit_sideband, instructions) },
		{ "events", offsetof(struct rtit_sideband, events) },
		{ "packets", offsetof(struct rtit_sideband, packets) },
		{ "psbs", offsetof(struct rtit_sideband, psbs) },
	};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (!strcmp(key, counts[i].key))
			return num(rd, key, v, 10, (uint64_t *)((char *)sb + counts[i].off));
	int e;
	char tail[8];
	if (sscanf(key, "erratum_e%d_%7s", &e, tail) == 2 && !strcmp(tail, "fired") &&
	    e >= 1 && e < RTIT_SIDEBAND_NERRATA)
		return num(rd, key, v, 10, &sb->errata_fired[e]);
	return 0;	/* a key of a later version */
}

int rtit_sideband_read(const char *path, struct rtit_sideband *sb, char *err, size_t errsz)
{
	struct rd rd = { path, 0, err, errsz };
	char buf[2048];
	int r = 0;

	rtit_sideband_init(sb);
	snprintf(sb->source, sizeof(sb->source), "%s", path);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errsz, "%s: cannot read: %s", path, strerror(errno));
		return -RTIT_ERR_IO;
	}
	while (r == 0 && fgets(buf, sizeof(buf), f)) {
		rd.line++;
		size_t n = strlen(buf);
		if (n && buf[n - 1] == '\n')
			buf[--n] = 0;
		else if (!feof(f)) {
			r = bad(&rd, "a line longer than %zu bytes", sizeof(buf) - 2);
			break;
		}
		if (rd.line == 1) {
			if (strcmp(buf, RTIT_SIDEBAND_HEADER))
				r = bad(&rd, "not an rtitsim sideband (the first line is not \"%s\")",
					RTIT_SIDEBAND_HEADER);
			continue;
		}
		if (!n || buf[0] == '#')
			continue;
		char *sp = strchr(buf, ' ');
		if (!sp)
			r = bad(&rd, "'%s': expected 'KEY VALUE'", buf);
		else {
			*sp = 0;
			r = line(&rd, sb, buf, sp + 1);
		}
	}
	if (r == 0 && ferror(f)) {
		snprintf(err, errsz, "%s: cannot read: %s", path, strerror(errno));
		r = -RTIT_ERR_IO;
	}
	if (r == 0 && rd.line == 0)
		r = bad(&rd, "empty: not an rtitsim sideband");
	fclose(f);
	if (r < 0)
		rtit_sideband_fini(sb);
	return r;
}
