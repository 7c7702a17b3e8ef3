/* version.c - rtit_version(): the version of the library linked. */
#include "rtit/version.h"

const char *rtit_version(void)
{
	return RTITSIM_VERSION_STRING;
}
