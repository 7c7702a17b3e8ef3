/*
 * bundle.c - self-contained test vectors: the program image files copied
 * next to the trace, and the JSON manifest (rtit/bundle.h,
 * docs/formats.md "Bundles").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rtit/bundle.h"

/* ------------------------------------------------------------- images */

int rtit_bundle_scenario_images(const struct rtit_scenario *sc,
				struct rtit_bundle_scn_images *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof(*out));
	if (sc->code_kind == RTIT_SCN_CODE_ASM) {
		int r = rtit_asm_build_sections(sc->asm_text, sc->load, sc->asm_sections,
						sc->nasm_sections, sc->mode == 32 ? 32 : 64,
						sc->path, sc->asm_line, &out->tmp, err, errsz);
		if (r < 0)
			return r;
		out->has_tmp = true;
		snprintf(out->path, sizeof(out->path), "%s", out->tmp.elf);
		out->img[0] = (struct rtit_bundle_image){ out->path, 0, true };
	} else if (rtit_scenario_code_path(sc, out->path, sizeof(out->path)) == 0) {
		bool elf = sc->code_kind == RTIT_SCN_CODE_ELF;
		out->img[0] = (struct rtit_bundle_image){ out->path, elf ? 0 : sc->load, elf };
	} else {
		snprintf(err, errsz, "%s: no code", sc->path);
		return -RTIT_ERR_INVALID;
	}
	out->n = 1;
	return 0;
}

void rtit_bundle_scenario_images_fini(struct rtit_bundle_scn_images *out)
{
	if (out->has_tmp)
		rtit_asm_cleanup(&out->tmp);
	out->has_tmp = false;
}

/* Copies @from to @to, whole.  0 or -RTIT_ERR_IO with @err. */
static int copy_file(const char *from, const char *to, char *err, size_t errsz)
{
	FILE *in = fopen(from, "rb"), *out = NULL;
	char buf[65536];
	size_t n;
	int r = 0;

	if (!in) {
		snprintf(err, errsz, "%s: cannot read: %s", from, strerror(errno));
		return -RTIT_ERR_IO;
	}
	char part[2100];
	snprintf(part, sizeof(part), "%s.part", to);
	if (!(out = fopen(part, "wb"))) {
		snprintf(err, errsz, "%s: cannot create: %s", to, strerror(errno));
		fclose(in);
		return -RTIT_ERR_IO;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in)) {
		snprintf(err, errsz, "%s: cannot read: %s", from, strerror(errno));
		r = -RTIT_ERR_IO;
	}
	bool bad = ferror(out);
	if ((fclose(out) != 0 || bad) && r == 0) {
		snprintf(err, errsz, "%s: writing failed: %s", to, strerror(errno ? errno : EIO));
		r = -RTIT_ERR_IO;
	}
	fclose(in);
	/* whole under its name, or not there */
	if (r == 0 && rename(part, to) != 0) {
		snprintf(err, errsz, "%s: cannot rename %s to it: %s", to, part, strerror(errno));
		r = -RTIT_ERR_IO;
	}
	if (r < 0)
		unlink(part);
	return r;
}

int rtit_bundle_add_images(const char *dir, const char *stem,
			   const struct rtit_bundle_image *imgs, size_t n,
			   struct rtit_sideband *sb, char *err, size_t errsz)
{
	bool had_elf = false, had_raw = false;

	if (n > RTIT_SIDEBAND_MAX_MAPS) {
		snprintf(err, errsz, "%s: more than %d image files", stem, RTIT_SIDEBAND_MAX_MAPS);
		return -RTIT_ERR_INVALID;
	}
	sb->nmaps = 0;
	for (size_t i = 0; i < n; i++) {
		struct rtit_sideband_map *m = &sb->maps[sb->nmaps];
		const char *ext = imgs[i].elf ? "elf" : "bin";
		bool *had = imgs[i].elf ? &had_elf : &had_raw;
		char to[2048];
		int r;

		if (*had)
			snprintf(m->file, sizeof(m->file), "%s.%zu.%s", stem, i, ext);
		else
			snprintf(m->file, sizeof(m->file), "%s.%s", stem, ext);
		*had = true;
		snprintf(to, sizeof(to), "%s/%s", dir, m->file);
		if ((r = copy_file(imgs[i].path, to, err, errsz)) < 0)
			return r;
		m->addr = imgs[i].addr;
		m->elf = imgs[i].elf;
		sb->nmaps++;
	}
	return 0;
}

/* @base (a file's base name) made path-safe: bytes other than letters,
 * digits, '.', '_', '+', '-' become '_', and a name of dots only is
 * prefixed with '_' (D132). */
static void safe_name(const char *base, char *out, size_t cap)
{
	size_t k = 0;
	bool dots = true;
	for (const char *c = base; *c && k + 2 < cap; c++) {
		bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			  (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '+' ||
			  *c == '-';
		dots &= *c == '.';
		out[k++] = ok ? *c : '_';
	}
	out[k] = 0;
	if (dots || !k) {
		memmove(out + 1, out, k + 1);
		out[0] = '_';
	}
}

/* The bundle name of the file @orig: the one given before when @orig
 * was copied already (*@copy false), else a new one not taken (base
 * name, then NAME.2, NAME.3, ...) in @names[0..*n). */
struct seen {
	char orig[384], rel[384];
};

static const char *bundle_name(const char *stem, const char *orig, struct seen *names, size_t *n,
			       bool *copy)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(names[i].orig, orig)) {
			*copy = false;
			return names[i].rel;
		}
	const char *slash = strrchr(orig, '/');
	char base[200], cand[384];
	safe_name(slash ? slash + 1 : orig, base, sizeof(base));
	snprintf(cand, sizeof(cand), "%s.files/%s", stem, base);
	for (unsigned k = 2;; k++) {
		size_t i = 0;
		while (i < *n && strcmp(names[i].rel, cand))
			i++;
		if (i == *n)
			break;
		snprintf(cand, sizeof(cand), "%s.files/%s.%u", stem, base, k);
	}
	struct seen *s = &names[(*n)++];
	snprintf(s->orig, sizeof(s->orig), "%s", orig);
	snprintf(s->rel, sizeof(s->rel), "%s", cand);
	*copy = true;
	return s->rel;
}

int rtit_bundle_add_mmaps(const char *dir, const char *stem, struct rtit_sideband *sb,
			  char *err, size_t errsz)
{
	struct seen *names = calloc(sb->nmmaps + 1, sizeof(*names));
	size_t n = 0;
	int r = 0;
	char to[2048];
	const char *img = NULL;

	if (!names) {
		snprintf(err, errsz, "%s: out of memory", stem);
		return -RTIT_ERR_NOMEM;
	}
	snprintf(to, sizeof(to), "%s/%s.files", dir, stem);
	if (sb->nmmaps && mkdir(to, 0777) < 0 && errno != EEXIST) {
		snprintf(err, errsz, "%s: cannot create: %s", to, strerror(errno));
		free(names);
		return -RTIT_ERR_IO;
	}
	for (size_t i = 0; i < sb->nmmaps && r == 0; i++) {
		struct rtit_sideband_mmap *m = &sb->mmaps[i];
		bool copy;
		const char *rel = bundle_name(stem, m->path, names, &n, &copy);
		snprintf(to, sizeof(to), "%s/%s", dir, rel);
		if (copy) {
			r = copy_file(m->path, to, err, errsz);
			/* the program (`image`, a real path): its copy */
			char *real = img ? NULL : realpath(m->path, NULL);
			if (real && sb->image[0] && !strcmp(real, sb->image))
				img = rel;
			free(real);
		}
		snprintf(m->path, sizeof(m->path), "%s", rel);
	}
	/* no path outside the bundle */
	snprintf(sb->image, sizeof(sb->image), "%s", img ? img : "");
	free(names);
	return r;
}

/* ----------------------------------------------------------- manifest */

/* A JSON string (docs/formats.md: UTF-8, ", \ and control bytes escaped). */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The size and XXH3-64 (canonical hex) of DIR/FILE; false when it cannot
 * be read. */
static bool digest_file(const char *dir, const char *file, uint64_t *bytes, char hex[17])
{
	char path[2048];
	uint8_t buf[65536];
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *in = fopen(path, "rb");
	if (!in)
		return false;
	XXH3_state_t *st = XXH3_createState();
	if (!st) {
		fclose(in);
		return false;
	}
	XXH3_64bits_reset(st);
	*bytes = 0;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		XXH3_64bits_update(st, buf, n);
		*bytes += n;
	}
	bool ok = !ferror(in);
	fclose(in);
	XXH64_canonical_t c;
	XXH64_canonicalFromHash(&c, XXH3_64bits_digest(st));
	XXH3_freeState(st);
	for (int i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", c.digest[i]);
	return ok;
}

/* "file": FILE, "bytes": N, "xxh3": H of DIR/FILE (the last two when it
 * can be read; returns whether it could). */
static bool file_fields(FILE *f, const char *dir, const char *file)
{
	uint64_t bytes;
	char hex[17];
	fputs("\"file\": ", f);
	jstr(f, file);
	if (!digest_file(dir, file, &bytes, hex))
		return false;
	fprintf(f, ", \"bytes\": %" PRIu64 ", \"xxh3\": \"%s\"", bytes, hex);
	return true;
}

/* "files": every bundle file present, by role. */
static void manifest_files(FILE *f, const char *dir, const char *stem)
{
	static const struct { const char *key, *ext; } roles[] = {
		{ "trace", ".trace" }, { "dump_txt", ".dump.txt" },
		{ "dump_jsonl", ".dump.jsonl" }, { "flow_bin", ".flow" },
		{ "flow_txt", ".flow.txt" }, { "events_txt", ".events.txt" },
	};
	char file[600], hex[17];
	uint64_t bytes;
	/* the sideband by name only: it holds the writer's version */
	snprintf(file, sizeof(file), "%s.sideband", stem);
	fputs("  \"files\": {\n    \"sideband\": {\"file\": ", f);
	jstr(f, file);
	fputc('}', f);
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		snprintf(file, sizeof(file), "%s%s", stem, roles[i].ext);
		if (!digest_file(dir, file, &bytes, hex))
			continue;
		fprintf(f, ",\n    \"%s\": {", roles[i].key);
		file_fields(f, dir, file);
		fputc('}', f);
	}
	fputs("\n  }\n", f);
}

/* A process run's "mmaps" (each mapping, its file relative to the
 * bundle) and "mapped_files" (each file once, its size and digest). */
static void manifest_mmaps(FILE *f, const char *dir, const struct rtit_sideband *sb)
{
	if (!sb->nmmaps)
		return;
	fputs("  \"mmaps\": [", f);
	for (size_t i = 0; i < sb->nmmaps; i++) {
		const struct rtit_sideband_mmap *m = &sb->mmaps[i];
		fprintf(f, "%s\n    {\"address\": \"0x%" PRIx64 "\", \"size\": \"0x%" PRIx64
			"\", \"offset\": \"0x%" PRIx64 "\", \"prot\": \"%c%c%c\", \"at\": %" PRIu64
			", \"build_id\": ", i ? "," : "", m->addr, m->size, m->offset,
			(m->prot & 1) ? 'r' : '-', (m->prot & 2) ? 'w' : '-', (m->prot & 4) ? 'x' : '-',
			m->at);
		if (m->build_id[0])
			jstr(f, m->build_id);
		else
			fputs("null", f);
		fputs(", \"file\": ", f);
		jstr(f, m->path);
		fputc('}', f);
	}
	fputs("\n  ],\n  \"mapped_files\": [", f);
	bool first = true;
	for (size_t i = 0; i < sb->nmmaps; i++) {
		size_t j = 0;
		while (j < i && strcmp(sb->mmaps[j].path, sb->mmaps[i].path))
			j++;
		if (j < i)
			continue;	/* named before */
		fputs(first ? "\n    {" : ",\n    {", f);
		file_fields(f, dir, sb->mmaps[i].path);
		fputc('}', f);
		first = false;
	}
	fputs("\n  ],\n", f);
}

/* The ptxed command line of the bundle (malloc'd; NULL: out of memory; D134):
 * `ptxed --pt TRACE [--cpu F/M/S] [--filter...] --elf FILE[:BIAS] /
 * --raw FILE:ADDR`, and for a process run `--raw FILE:FROM-TO:ADDR` per
 * executable mapping (the file's bytes it holds: ptxed refuses a range
 * past the file's end). */
static char *ptxed_line(const char *dir, const char *stem, const struct rtit_sideband *sb,
			bool cpu)
{
	char *line = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&line, &len);
	if (!o)
		return NULL;
	fprintf(o, "ptxed --pt %s.trace", stem);
	if (cpu)
		fprintf(o, " --cpu %s", sb->cpu);
	/* the filter ranges IA32_RTIT_CTL uses (libipt's SKL014 workaround
	 * needs them: D105), as ptxed's --filter:addrN_cfg/_a/_b */
	for (unsigned n = 0; sb->pt_errata && n < 4; n++) {
		unsigned cfg = (unsigned)(sb->ia32_rtit_ctl >> (32 + 4 * n)) & 0xf;
		if (cfg)
			fprintf(o, " --filter:addr%u_cfg %u --filter:addr%u_a 0x%" PRIx64
				" --filter:addr%u_b 0x%" PRIx64, n, cfg, n, sb->addr_a[n], n,
				sb->addr_b[n]);
	}
	for (size_t i = 0; i < sb->nmaps; i++) {
		const struct rtit_sideband_map *m = &sb->maps[i];
		if (m->elf && !m->addr)
			fprintf(o, " --elf %s", m->file);
		else if (m->elf)
			fprintf(o, " --elf %s:0x%" PRIx64, m->file, m->addr);
		else
			fprintf(o, " --raw %s:0x%" PRIx64, m->file, m->addr);
	}
	for (size_t i = 0; i < sb->nmmaps; i++) {
		const struct rtit_sideband_mmap *m = &sb->mmaps[i];
		char path[2048];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, m->path);
		if (!(m->prot & 4) || stat(path, &st) < 0 || m->offset >= (uint64_t)st.st_size)
			continue;
		uint64_t end = m->offset + m->size;
		if (end > (uint64_t)st.st_size)
			end = (uint64_t)st.st_size;
		fprintf(o, " --raw %s:0x%" PRIx64 "-0x%" PRIx64 ":0x%" PRIx64, m->path, m->offset,
			end, m->addr);
	}
	bool bad = ferror(o);
	if (fclose(o) != 0 || bad) {
		free(line);
		return NULL;
	}
	return line;
}

/* "images" and "libipt": the map, and the same as ptxed options. */
static bool manifest_images(FILE *f, const char *dir, const char *stem,
			    const struct rtit_sideband *sb)
{
	fputs("  \"images\": [", f);
	for (size_t i = 0; i < sb->nmaps; i++) {
		const struct rtit_sideband_map *m = &sb->maps[i];
		fprintf(f, "%s\n    {\"kind\": \"%s\", \"%s\": \"0x%" PRIx64 "\", ",
			i ? "," : "", m->elf ? "elf" : "raw", m->elf ? "bias" : "address", m->addr);
		file_fields(f, dir, m->file);
		fputc('}', f);
	}
	fputs("\n  ],\n", f);
	manifest_mmaps(f, dir, sb);
	/* libipt: `ptxed --pt TRACE [--cpu F/M/S] --elf FILE` / `--raw
	 * FILE:ADDR`; --cpu when the run claims a CPU (its errata, D100),
	 * else none: the model has no CPU's errata (D130) */
	fputs("  \"libipt\": ", f);
	if (sb->dialect != RTIT_DIALECT_PT) {
		fputs("null,\n", f);
		return true;
	}
	unsigned fam, mod, step;
	char c;
	bool cpu = sscanf(sb->cpu, "%u/%i/%u%c", &fam, &mod, &step, &c) == 3;
	char *line = ptxed_line(dir, stem, sb, cpu);
	if (cpu) {
		fputs("{\"cpu\": ", f);
		jstr(f, sb->cpu);
		fputs(", \"ptxed\": ", f);
	} else {
		fputs("{\"cpu\": null, \"ptxed\": ", f);
	}
	if (line)
		jstr(f, line);
	else
		fputs("null", f);	/* out of memory: the caller's ferror */
	fputs("},\n", f);
	bool ok = line != NULL;
	free(line);
	return ok;
}

/* "msrs", "params", "errata", "handlers". */
static void manifest_config(FILE *f, const struct rtit_sideband *sb)
{
	fputs("  \"msrs\": [", f);
	for (size_t i = 0; i < sb->nmsrs; i++) {
		const char *nm = rtit_scenario_msr_name(sb->msrs[i].msr, sb->dialect);
		fprintf(f, "%s\n    {\"msr\": \"0x%" PRIx32 "\", \"name\": ", i ? "," : "",
			sb->msrs[i].msr);
		if (nm)
			jstr(f, nm);
		else
			fputs("null", f);
		fprintf(f, ", \"value\": \"0x%" PRIx64 "\"}", sb->msrs[i].value);
	}
	fputs("\n  ],\n  \"params\": {", f);
	for (size_t i = 0; i < sb->nparams; i++) {
		fputs(i ? ", " : "", f);
		jstr(f, sb->params[i].key);
		fputs(": ", f);
		jstr(f, sb->params[i].value);
	}
	/* the errata switched on are the params e1..e8 (RTIT Appendix E) */
	fputs("},\n  \"errata\": {\"on\": [", f);
	bool comma = false;
	for (size_t i = 0; i < sb->nparams; i++) {
		const char *k = sb->params[i].key, *v = sb->params[i].value;
		if (k[0] == 'e' && k[1] >= '1' && k[1] <= '8' && !k[2] && strcmp(v, "off") &&
		    strcmp(v, "0")) {
			fprintf(f, "%s\"E%c\"", comma ? ", " : "", k[1]);
			comma = true;
		}
	}
	fputs("], \"fired\": {", f);
	comma = false;
	for (int e = 1; e < RTIT_SIDEBAND_NERRATA; e++)
		if (sb->errata_fired[e]) {
			fprintf(f, "%s\"E%d\": %" PRIu64, comma ? ", " : "", e, sb->errata_fired[e]);
			comma = true;
		}
	fputs("}},\n  \"handlers\": [", f);
	for (size_t i = 0; i < sb->nhandlers; i++)
		fprintf(f, "%s{\"vector\": %u, \"ip\": \"0x%" PRIx64 "\"}", i ? ", " : "",
			sb->handlers[i].vector, sb->handlers[i].ip);
	fputs("],\n", f);
}

/* "trace_config": what the stream does not state, per dialect. */
static void manifest_trace_config(FILE *f, const struct rtit_sideband *sb)
{
	if (sb->dialect == RTIT_DIALECT_PT)
		fprintf(f, "  \"trace_config\": {\"ia32_rtit_ctl\": \"0x%" PRIx64 "\", "
			"\"ret_compression\": %s, \"mtc_freq\": %u, \"cyc_thresh\": %u, "
			"\"art_num\": %u, \"art_den\": %u, \"cbr\": %u},\n",
			sb->ia32_rtit_ctl, sb->ret_compression > 0 ? "true" : "false",
			sb->mtc_freq, sb->cyc_thresh, sb->art_num, sb->art_den, sb->cbr);
	else
		fprintf(f, "  \"trace_config\": {\"rtit_ctl\": \"0x%" PRIx64 "\", "
			"\"cycle_accurate\": %s, \"cmprs_ret\": %s, \"mtc_range\": %d},\n",
			sb->rtit_ctl, sb->cycle_acc > 0 ? "true" : "false",
			sb->cmprs_ret > 0 ? "true" : "false", sb->mtc_range < 0 ? 0 : sb->mtc_range);
}

int rtit_bundle_write_manifest(const char *dir, const char *stem,
			       const struct rtit_sideband *sb, const char *describe,
			       char *err, size_t errsz)
{
	char path[2048];
	bool pt = sb->dialect == RTIT_DIALECT_PT;

	char part[2100];
	snprintf(path, sizeof(path), "%s/%s.manifest.json", dir, stem);
	snprintf(part, sizeof(part), "%s.part", path);
	FILE *f = fopen(part, "w");
	if (!f) {
		snprintf(err, errsz, "%s: cannot create: %s", path, strerror(errno));
		return -RTIT_ERR_IO;
	}
	fprintf(f, "{\n  \"format\": \"rtitsim-bundle\",\n  \"format_version\": %d,\n  \"name\": ",
		RTIT_BUNDLE_FORMAT_VERSION);
	jstr(f, stem);
	fputs(",\n  \"describe\": ", f);
	jstr(f, describe ? describe : "");
	fprintf(f, ",\n  \"dialect\": \"%s\",\n  \"cpu\": ", pt ? "pt" : "rtit");
	/* RTIT: the core; Intel PT: the model is no particular CPU (D130) */
	if (pt)
		fputs("{\"name\": \"default\", \"family\": null, \"model\": null, \"stepping\": null},\n", f);
	else {
		fputs("{\"name\": ", f);
		jstr(f, sb->cpu);
		fputs("},\n", f);
	}
	fprintf(f, "  \"mode\": %d,\n  \"external_ctl\": %s,\n", sb->mode ? sb->mode : 64,
		sb->external_ctl ? "true" : "false");
	manifest_trace_config(f, sb);
	manifest_config(f, sb);
	bool whole = manifest_images(f, dir, stem, sb);
	fputs("  \"stop\": ", f);
	jstr(f, sb->stop);
	fprintf(f, ",\n  \"counts\": {\"trace_bytes\": %" PRIu64 ", \"packets\": %" PRIu64
		", \"psbs\": %" PRIu64 ", \"overflows\": %" PRId64 ", \"flow_records\": %" PRIu64
		", \"instructions\": %" PRIu64 ", \"events\": %" PRIu64 "},\n",
		sb->trace_bytes, sb->packets, sb->psbs, sb->overflows < 0 ? 0 : sb->overflows,
		sb->flow_records, sb->instructions, sb->events);
	fprintf(f, "  \"digests\": {\"trace_xxh3\": \"%s\", \"flow_xxh3\": \"%s\"},\n",
		sb->trace_xxh3, sb->flow_xxh3);
	manifest_files(f, dir, stem);
	fputs("}\n", f);
	bool bad = ferror(f) || !whole;
	if (fclose(f) != 0 || bad || rename(part, path) != 0) {
		snprintf(err, errsz, "%s: writing failed: %s", path, strerror(errno ? errno : EIO));
		unlink(part);
		return -RTIT_ERR_IO;
	}
	return 0;
}
