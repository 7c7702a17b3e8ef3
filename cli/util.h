/* util.h - small helpers the subcommands share. */
#ifndef RTIT_CLI_UTIL_H
#define RTIT_CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Reads a whole file into a malloc'd buffer with a terminating 0 byte
 * (not counted in *len).  NULL on failure, with errno set. */
uint8_t *rtit_cli_slurp(const char *path, size_t *len);

#endif
