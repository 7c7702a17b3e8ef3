/*
 * ptxed_lines.c - a small decoder on libipt (Intel's reference decoder,
 * independent of rtitsim) that writes what ptxed writes: one line per
 * instruction, "IP  BYTES", and '[...]' lines for what libipt reports
 * besides (enable, disable, overflow, resync, errors).  It takes ptxed's
 * options for the trace and the image, so a bundle manifest's `ptxed`
 * line runs with this program in ptxed's place:
 *
 *   ptxed_lines --pt TRACE [--event:ip] [--elf FILE[:BIAS]] [--raw FILE[:FROM[-TO]]:ADDR] ...
 *
 * Each ELF's PT_LOAD segments are image sections (pt_image_add_file at
 * p_vaddr + BIAS, p_filesz bytes); no CPU is configured (docs/formats.md,
 * D130).  Nothing of rtitsim is used: this is what a decoder author
 * would write from docs/formats.md "Loading a vector with libipt".
 * Exit 0, or 2 on bad arguments or files.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>

/* The whole file (read in 64 KiB steps: this program shares no code with
 * rtitsim's). */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	size_t n = 0, got;
	if (!f)
		return NULL;
	do {
		uint8_t *nb = realloc(b, n + 65536);
		if (!nb) {
			free(b);
			fclose(f);
			return NULL;
		}
		b = nb;
		got = fread(b + n, 1, 65536, f);
		n += got;
	} while (got == 65536);
	fclose(f);
	*len = n;
	return b;
}

/* FILE:NUMBER -> @file (cut at the last ':') and @v; no ':' -> v = 0. */
static void split(char *arg, uint64_t *v)
{
	char *c = strrchr(arg, ':');
	*v = 0;
	if (c) {
		*c = 0;
		*v = strtoull(c + 1, NULL, 0);
	}
}

/* An ELF's PT_LOAD segments as image sections at p_vaddr + bias. */
static int add_elf(struct pt_image *img, const char *path, uint64_t bias)
{
	size_t len;
	uint8_t *b = slurp(path, &len);
	int n = 0;
	if (!b || len < sizeof(Elf32_Ehdr) || memcmp(b, ELFMAG, SELFMAG)) {
		fprintf(stderr, "ptxed_lines: %s: not an ELF file\n", path);
		free(b);
		return -1;
	}
	bool c64 = b[EI_CLASS] == ELFCLASS64;
	const Elf64_Ehdr *e64 = (const void *)b;
	const Elf32_Ehdr *e32 = (const void *)b;
	uint64_t phoff = c64 ? e64->e_phoff : e32->e_phoff;
	unsigned phnum = c64 ? e64->e_phnum : e32->e_phnum;
	size_t phsz = c64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	for (unsigned i = 0; i < phnum && phoff + (i + 1) * phsz <= len; i++) {
		const uint8_t *p = b + phoff + i * phsz;
		uint64_t type, off, va, fsz;
		if (c64) {
			const Elf64_Phdr *ph = (const void *)p;
			type = ph->p_type, off = ph->p_offset, va = ph->p_vaddr, fsz = ph->p_filesz;
		} else {
			const Elf32_Phdr *ph = (const void *)p;
			type = ph->p_type, off = ph->p_offset, va = ph->p_vaddr, fsz = ph->p_filesz;
		}
		if (type != PT_LOAD || !fsz)
			continue;
		if (pt_image_add_file(img, path, off, fsz, NULL, va + bias) < 0) {
			fprintf(stderr, "ptxed_lines: %s: segment %u rejected by libipt\n", path, i);
			free(b);
			return -1;
		}
		n++;
	}
	free(b);
	return n ? 0 : -1;
}

/* As ptxed's print_event, with --event:ip (@ip) the IPs of an interrupt
 * (`from`, and `to` unless suppressed) and of an abort. */
static void event_line(const struct pt_event *ev, bool ip)
{
	switch (ev->type) {
	case ptev_enabled: puts("[enabled]"); break;
	case ptev_disabled: case ptev_async_disabled: puts("[disabled]"); break;
	case ptev_overflow: puts("[overflow]"); break;
	case ptev_async_branch:
		printf("[interrupt");
		if (ip)
			printf(", from: %016" PRIx64, ev->variant.async_branch.from);
		if (ip && !ev->ip_suppressed)
			printf(", to: %016" PRIx64, ev->variant.async_branch.to);
		puts("]");
		break;
	case ptev_paging: case ptev_async_paging: puts("[paging]"); break;
	case ptev_exec_mode: puts("[exec mode]"); break;
	case ptev_tsx:
		if (!ev->variant.tsx.aborted) {
			puts("[tsx]");
			break;
		}
		printf("[aborted");
		if (ip && !ev->ip_suppressed)
			printf(", ip: %016" PRIx64, ev->variant.tsx.ip);
		puts("]");
		break;
	default: puts("[event]"); break;
	}
}

int main(int argc, char **argv)
{
	const char *trace_path = NULL;
	size_t tlen = 0;
	unsigned fam = 0, mod = 0, step = 0;
	bool have_cpu = false, event_ip = false;
	uint64_t filt_cfg = 0, filt_a[4] = { 0 }, filt_b[4] = { 0 };
	struct pt_image *img = pt_image_alloc("image");

	for (int i = 1; i < argc; i++) {
		uint64_t v;
		if (!strcmp(argv[i], "--event:ip")) {
			event_ip = true;	/* as ptxed: the IPs of events */
		} else if (!strcmp(argv[i], "--pt") && i + 1 < argc) {
			trace_path = argv[++i];
		} else if (!strcmp(argv[i], "--elf") && i + 1 < argc) {
			char *f = argv[++i];
			split(f, &v);
			if (add_elf(img, f, v) < 0)
				return 2;
		} else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
			/* as ptxed's --cpu f/m[/s]: libipt applies that CPU's errata */
			int n = sscanf(argv[++i], "%u/%i/%u", &fam, &mod, &step);
			if (n < 2) {
				fprintf(stderr, "ptxed_lines: --cpu %s: expected F/M[/S]\n", argv[i]);
				return 2;
			}
			have_cpu = true;
		} else if (!strncmp(argv[i], "--filter:addr", 13) && i + 1 < argc) {
			/* ptxed's --filter:addrN_cfg / _a / _b */
			unsigned n = (unsigned)(argv[i][13] - '0');
			const char *what = argv[i] + 14;
			uint64_t x = strtoull(argv[++i], NULL, 0);
			if (n > 3) {
				fprintf(stderr, "ptxed_lines: %s: no such filter\n", argv[i - 1]);
				return 2;
			}
			if (!strcmp(what, "_cfg"))
				filt_cfg |= (x & 0xf) << (4 * n);
			else if (!strcmp(what, "_a"))
				filt_a[n] = x;
			else
				filt_b[n] = x;
		} else if (!strcmp(argv[i], "--raw") && i + 1 < argc) {
			/* as ptxed: FILE[:FROM[-TO]]:BASE, the file's bytes
			 * [FROM, TO) (default the whole file) at BASE */
			char *f = argv[++i], *c, *end;
			size_t n;
			uint64_t from = 0, to = 0;
			uint8_t *b;
			split(f, &v);
			if ((c = strrchr(f, ':')) && c[1]) {
				uint64_t x = strtoull(c + 1, &end, 0);
				if (*end == '-' || !*end) {
					from = x;
					to = *end ? strtoull(end + 1, &end, 0) : 0;
					*c = 0;
				}
			}
			if (!(b = slurp(f, &n)) || from >= n || to > n || (to && to <= from) ||
			    pt_image_add_file(img, f, from, (to ? to : n) - from, NULL, v) < 0) {
				fprintf(stderr, "ptxed_lines: %s: cannot add\n", f);
				return 2;
			}
			free(b);
		} else {
			fprintf(stderr, "usage: ptxed_lines --pt TRACE [--cpu F/M[/S]] [--elf FILE[:BIAS]]"
				" [--raw FILE[:FROM[-TO]]:ADDR]\n");
			return 2;
		}
	}
	uint8_t *trace = trace_path ? slurp(trace_path, &tlen) : NULL;
	if (!trace) {
		fprintf(stderr, "ptxed_lines: no trace (--pt)\n");
		return 2;
	}
	struct pt_config cfg;
	pt_config_init(&cfg);		/* no --cpu: no errata workarounds */
	if (have_cpu) {
		cfg.cpu.vendor = pcv_intel;
		cfg.cpu.family = (uint16_t)fam;
		cfg.cpu.model = (uint8_t)mod;
		cfg.cpu.stepping = (uint8_t)step;
		if (pt_cpu_errata(&cfg.errata, &cfg.cpu) < 0)
			return 2;
	}
	cfg.addr_filter.config.addr_cfg = filt_cfg;
	cfg.addr_filter.addr0_a = filt_a[0];
	cfg.addr_filter.addr0_b = filt_b[0];
	cfg.addr_filter.addr1_a = filt_a[1];
	cfg.addr_filter.addr1_b = filt_b[1];
	cfg.addr_filter.addr2_a = filt_a[2];
	cfg.addr_filter.addr2_b = filt_b[2];
	cfg.addr_filter.addr3_a = filt_a[3];
	cfg.addr_filter.addr3_b = filt_b[3];
	cfg.begin = trace;
	cfg.end = trace + tlen;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d || pt_insn_set_image(d, img) < 0)
		return 2;

	size_t after_eos = 0;
	int st = pt_insn_sync_forward(d);
	while (st != -pte_eos) {
		if (st < 0) {
			uint64_t off = 0;
			pt_insn_get_offset(d, &off);
			printf("[%" PRIx64 ": error: %s]\n", off, pt_errstr(pt_errcode(st)));
			st = pt_insn_sync_forward(d);
			continue;
		}
		while (st >= 0 && (st & pts_event_pending)) {
			struct pt_event ev;
			st = pt_insn_event(d, &ev, sizeof(ev));
			if (st >= 0)
				event_line(&ev, event_ip);
		}
		if (st < 0)
			continue;
		/* past the last packet libipt walks on: a bound */
		if ((st & pts_eos) && ++after_eos > 100000)
			break;
		struct pt_insn in;
		st = pt_insn_next(d, &in, sizeof(in));
		if (st < 0)
			continue;
		printf("%016" PRIx64 " ", in.ip);
		for (unsigned k = 0; k < in.size; k++)
			printf(" %02x", in.raw[k]);
		putchar('\n');
	}
	pt_insn_free_decoder(d);
	pt_image_free(img);
	free(trace);
	return 0;
}
