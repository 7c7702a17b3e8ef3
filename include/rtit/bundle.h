/*
 * bundle.h - a self-contained test vector (issue 19): one directory, every
 * file named STEM.something, needing nothing else: the trace, the
 * sideband, the program image files it maps (copied in, named relative to
 * the bundle), a JSON manifest describing all of it, and the expected
 * outputs (the dump, the ground-truth flow, the events).  docs/formats.md
 * specifies every file.  `rtitsim run --bundle DIR` and `rtitsim golden`
 * write bundles; `rtitsim decode DIR` and `rtitsim check DIR ...` read
 * them.  The session layer: it writes files, it prints nothing.
 */
#ifndef RTIT_BUNDLE_H
#define RTIT_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtit/asm.h"
#include "rtit/scenario.h"
#include "rtit/sideband.h"

/* The manifest's format version (docs/formats.md "Bundles"). */
#define RTIT_BUNDLE_FORMAT_VERSION 1

/* One program image file: an ELF loaded at its p_vaddr + @addr (the bias),
 * or a raw file's bytes at @addr. */
struct rtit_bundle_image {
	const char *path;
	uint64_t addr;
	bool elf;
};

/* A scenario's code as image files (rtit_bundle_scenario_images). */
struct rtit_bundle_scn_images {
	struct rtit_bundle_image img[1];
	size_t n;
	char path[1024];
	struct rtit_asm tmp;	/* `code asm`: the ELF assembled for it */
	bool has_tmp;
};

/*
 * The scenario's program as image files: `code elf` and `code flat` name
 * theirs, `code asm` is assembled and linked (as the simulator does) into
 * a temporary ELF.  Returns 0, or negative with one line in @err.  Free
 * with rtit_bundle_scenario_images_fini.
 */
int rtit_bundle_scenario_images(const struct rtit_scenario *sc,
				struct rtit_bundle_scn_images *out, char *err, size_t errsz);
void rtit_bundle_scenario_images_fini(struct rtit_bundle_scn_images *out);

/*
 * Copies @n image files into @dir: the first ELF as STEM.elf, the first
 * raw file as STEM.bin, the others as STEM.I.elf / STEM.I.bin (I their
 * index in @imgs), and replaces @sb's map lines with them (names relative
 * to @dir, where the sideband goes).  Returns 0, -RTIT_ERR_IO,
 * -RTIT_ERR_INVALID (more than RTIT_SIDEBAND_MAX_MAPS), with one line in
 * @err naming the file.
 */
int rtit_bundle_add_images(const char *dir, const char *stem,
			   const struct rtit_bundle_image *imgs, size_t n,
			   struct rtit_sideband *sb, char *err, size_t errsz);

/*
 * A process run's bundle (D132): copies every file @sb's `mmap` lines
 * name (the program, its interpreter, its libraries, any file it mapped)
 * into DIR/STEM.files/, once per file, named after its base name made
 * path-safe (a collision: NAME.2, NAME.3, ...), and rewrites those lines'
 * paths (and `image`) relative to @dir, where the sideband goes.  Returns
 * 0, -RTIT_ERR_IO or -RTIT_ERR_NOMEM with one line in @err naming the
 * file.
 */
int rtit_bundle_add_mmaps(const char *dir, const char *stem, struct rtit_sideband *sb,
			  char *err, size_t errsz);

/*
 * Writes DIR/STEM.manifest.json (docs/formats.md): what @sb says (dialect,
 * CPU, execution mode, every trace MSR at the first enable, parameters,
 * errata, the image map, the handlers), a libipt/ptxed configuration line,
 * and the size and XXH3-64 digest of each bundle file present in @dir
 * (STEM.trace, .sideband, .dump.txt, .dump.jsonl, .flow, .flow.txt,
 * .events.txt, the images).  @describe: one line saying what the vector
 * exercises.  The manifest holds no version or path outside the bundle,
 * so the same run writes the same bytes.  Returns 0 or -RTIT_ERR_IO with
 * @err.
 */
int rtit_bundle_write_manifest(const char *dir, const char *stem,
			       const struct rtit_sideband *sb, const char *describe,
			       char *err, size_t errsz);

#endif /* RTIT_BUNDLE_H */
