/* util.c - small helpers the subcommands share. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

uint8_t *rtit_cli_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;
	int e;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n) {
		b[n] = 0;
		*len = (size_t)n;
	} else {
		e = errno ? errno : EIO;
		free(b);
		b = NULL;
		errno = e;
	}
	fclose(f);
	return b;
}
