/* bundle.h - the CLI's part of a bundle (rtit/bundle.h has the rest). */
#ifndef RTIT_CLI_BUNDLE_H
#define RTIT_CLI_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the dump of PREFIX.trace to PREFIX.dump.txt (@json: to
 * PREFIX.dump.jsonl, one JSON object a line).  Returns RTIT_EXIT_*. */
int rtit_cli_write_dump(const char *prefix, int dialect, bool cycle_acc, bool json);

/* The expected outputs of a bundle besides the run's: PREFIX.dump.txt,
 * PREFIX.dump.jsonl and PREFIX.events.txt (the 'E' lines of
 * PREFIX.flow.txt).  Returns RTIT_EXIT_*, with a line on stderr. */
int rtit_cli_bundle_outputs(const char *prefix, int dialect, bool cycle_acc);

/* The stem (DIR/STEM) of the bundle @arg names: its directory (holding
 * exactly one STEM.manifest.json), STEM.manifest.json, STEM.trace or
 * STEM.  Returns 0, or -1 after a line on stderr. */
int rtit_cli_bundle_stem(const char *arg, char *stem, size_t cap);

#endif
