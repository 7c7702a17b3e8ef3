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

#endif
