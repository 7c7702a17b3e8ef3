/*
 * outfile.h - output files that never lie (issue 19): each is written under
 * a temporary name (PATH.part) and renamed to PATH when the command has
 * written it whole, so PATH is either complete or absent.  SIGINT and
 * SIGTERM while files are unfinished remove them and say so; a write
 * failure discards them.
 */
#ifndef RTIT_CLI_OUTFILE_H
#define RTIT_CLI_OUTFILE_H

#include <stdio.h>

/* Opens PATH.part for writing ("wb") and registers it.  NULL after a line
 * on stderr naming PATH ("CMD: PATH: cannot create: ..."). */
FILE *rtit_out_open(const char *cmd, const char *path);

/* Renames every registered file to its name, with SIGINT/SIGTERM held
 * off so that they are renamed all or none.  0, or -1 after a line naming
 * the file (the rest are then discarded). */
int rtit_out_commit(const char *cmd);

/* Removes every registered file (a failed or abandoned run).  Safe in a
 * signal handler. */
void rtit_out_discard(void);

/* The number of registered (unfinished) files. */
int rtit_out_pending(void);

/*
 * A bundle written whole (docs/formats.md "Bundles", D135): every file of
 * DIR/STEM.* is written into the staging directory DIR/.STEM.part (made
 * fresh; its path in @stage), and rtit_out_stage_commit moves them into
 * DIR with SIGINT/SIGTERM held off, the mapped files' directory
 * STEM.files first and STEM.manifest.json last.  SIGINT/SIGTERM before
 * that remove the staging directory: DIR keeps what it held.  0, or -1
 * after a line.
 */
int rtit_out_stage(const char *cmd, const char *dir, const char *stem, char *stage, size_t cap);
int rtit_out_stage_commit(const char *cmd);

/* Removes the staging directory (a failed run). */
void rtit_out_stage_discard(void);

#endif
