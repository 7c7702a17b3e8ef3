/*
 * outfile.c - output files under temporary names, renamed when whole
 * (outfile.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"

enum { max_files = 24 };

static struct {
	char part[1100], final[1080];
} files[max_files];
static volatile sig_atomic_t nfiles;
static volatile sig_atomic_t ncommitted;
static bool guarded;

void rtit_out_discard(void)
{
	for (int i = 0; i < nfiles; i++)
		unlink(files[i].part);
	nfiles = 0;
}

int rtit_out_pending(void)
{
	return nfiles;
}

/* SIGINT/SIGTERM: the unfinished files go, the complete ones stay, and one
 * line says which (write(2) only: a signal handler). */
static void on_signal(int sig)
{
	static char line[512];
	size_t n = 0;
	int removed = nfiles;
#define PUT(s) do { size_t l_ = strlen(s); if (n + l_ < sizeof(line)) { memcpy(line + n, s, l_); n += l_; } } while (0)
	rtit_out_discard();
	PUT("rtitsim: interrupted (");
	PUT(sig == SIGINT ? "SIGINT" : "SIGTERM");
	PUT("): ");
	if (removed) {
		PUT("the unfinished output files were removed, ");
	}
	PUT(ncommitted ? "the output files left are complete\n" : "no output file was written\n");
#undef PUT
	(void)!write(2, line, n);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void guard(void)
{
	struct sigaction sa;
	if (guarded)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	guarded = true;
}

FILE *rtit_out_open(const char *cmd, const char *path)
{
	if (nfiles == max_files || strlen(path) >= sizeof(files[0].final)) {
		fprintf(stderr, "%s: %s: too many outputs or too long a name\n", cmd, path);
		return NULL;
	}
	guard();
	int i = nfiles;
	snprintf(files[i].final, sizeof(files[i].final), "%s", path);
	snprintf(files[i].part, sizeof(files[i].part), "%s.part", path);
	FILE *f = fopen(files[i].part, "wb");
	if (!f) {
		fprintf(stderr, "%s: %s: cannot create: %s\n", cmd, path, strerror(errno));
		return NULL;
	}
	nfiles = i + 1;
	return f;
}

int rtit_out_commit(const char *cmd)
{
	sigset_t hold, old;
	int r = 0;
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigprocmask(SIG_BLOCK, &hold, &old);
	for (int i = 0; i < nfiles && r == 0; i++) {
		if (rename(files[i].part, files[i].final) != 0) {
			fprintf(stderr, "%s: %s: cannot rename %s to it: %s\n", cmd, files[i].final,
				files[i].part, strerror(errno));
			/* the ones renamed already are complete; the rest go */
			for (int k = i; k < nfiles; k++)
				unlink(files[k].part);
			r = -1;
			break;
		}
		ncommitted++;
	}
	nfiles = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}
