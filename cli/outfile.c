/*
 * outfile.c - output files under temporary names, renamed when whole
 * (outfile.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "outfile.h"

enum { max_files = 24 };

static struct {
	char part[1100], final[1080];
} files[max_files];
static volatile sig_atomic_t nfiles;
static volatile sig_atomic_t ncommitted;
static bool guarded;

/* A bundle being written (D135): its staging directory DIR/.STEM.part,
 * DIR and STEM. */
static struct {
	char stage[1100], dir[1024], stem[256];
} bundle;
static volatile sig_atomic_t staging;

/* Removes the directory @path and what it holds, @depth levels down,
 * with system calls only (safe in a signal handler: getdents64, not
 * readdir).  Entries are removed while listed, so the listing is read
 * again until a pass finds nothing. */
static void rm_tree(const char *path, int depth)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096], sub[1400];
	if (fd < 0)
		return;
	for (int pass = 0; pass < 64; pass++) {
		bool found = false;
		long n;
		lseek(fd, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
				unsigned short reclen;
				memcpy(&reclen, buf + off + 16, 2);
				const char *name = buf + off + 19;
				off += reclen;
				if (!strcmp(name, ".") || !strcmp(name, ".."))
					continue;
				found = true;
				if (unlinkat(fd, name, 0) == 0 || errno != EISDIR || depth <= 0)
					continue;
				size_t pl = strlen(path), nl = strlen(name);
				if (pl + nl + 2 > sizeof(sub))
					continue;
				memcpy(sub, path, pl);
				sub[pl] = '/';
				memcpy(sub + pl + 1, name, nl + 1);
				rm_tree(sub, depth - 1);
			}
		}
		if (!found)
			break;
	}
	close(fd);
	rmdir(path);
}

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
	if (staging) {
		rm_tree(bundle.stage, 2);
		PUT("the unfinished bundle ");
		PUT(bundle.dir);
		PUT("/");
		PUT(bundle.stem);
		PUT(".* was removed; the directory holds what it held before\n");
	} else {
		if (removed)
			PUT("the unfinished output files were removed, ");
		PUT(ncommitted ? "the output files left are complete\n" :
		    "no output file was written\n");
	}
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

int rtit_out_stage(const char *cmd, const char *dir, const char *stem, char *stage, size_t cap)
{
	int n = snprintf(bundle.stage, sizeof(bundle.stage), "%s/.%s.part", dir, stem);
	if (n < 0 || (size_t)n >= sizeof(bundle.stage) || (size_t)n >= cap ||
	    strlen(dir) >= sizeof(bundle.dir) || strlen(stem) >= sizeof(bundle.stem)) {
		fprintf(stderr, "%s: --bundle %s: too long a name\n", cmd, dir);
		return -1;
	}
	guard();
	snprintf(bundle.dir, sizeof(bundle.dir), "%s", dir);
	snprintf(bundle.stem, sizeof(bundle.stem), "%s", stem);
	rm_tree(bundle.stage, 2);	/* a run killed before (SIGKILL) left it */
	if (mkdir(bundle.stage, 0777) < 0) {
		fprintf(stderr, "%s: --bundle %s: cannot create %s: %s\n", cmd, dir, bundle.stage,
			strerror(errno));
		return -1;
	}
	staging = 1;
	snprintf(stage, cap, "%s", bundle.stage);
	return 0;
}

void rtit_out_stage_discard(void)
{
	if (!staging)
		return;
	rm_tree(bundle.stage, 2);
	staging = 0;
}

/* Moves @name from the staging directory into the bundle's. */
static int move_in(const char *cmd, const char *name)
{
	char from[1400], to[1400];
	snprintf(from, sizeof(from), "%s/%s", bundle.stage, name);
	snprintf(to, sizeof(to), "%s/%s", bundle.dir, name);
	if (rename(from, to) == 0)
		return 0;
	fprintf(stderr, "%s: %s: cannot rename %s to it: %s\n", cmd, to, from, strerror(errno));
	return -1;
}

int rtit_out_stage_commit(const char *cmd)
{
	sigset_t hold, old;
	char fdir[300], old_files[1400], path[1400];
	int r = 0;
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigprocmask(SIG_BLOCK, &hold, &old);
	/* the mapped files' directory: the old one out of the way first */
	snprintf(fdir, sizeof(fdir), "%s.files", bundle.stem);
	snprintf(path, sizeof(path), "%s/%s", bundle.stage, fdir);
	struct stat st;
	if (stat(path, &st) == 0) {
		snprintf(old_files, sizeof(old_files), "%s/%s", bundle.dir, fdir);
		snprintf(path, sizeof(path), "%s/.old.files", bundle.stage);
		if (stat(old_files, &st) == 0 && rename(old_files, path) != 0) {
			fprintf(stderr, "%s: %s: cannot replace it: %s\n", cmd, old_files,
				strerror(errno));
			r = -1;
		}
		if (r == 0)
			r = move_in(cmd, fdir);
	}
	/* then every file, the manifest last */
	char mf[300];
	snprintf(mf, sizeof(mf), "%s.manifest.json", bundle.stem);
	DIR *d = r == 0 ? opendir(bundle.stage) : NULL;
	struct dirent *e;
	while (d && r == 0 && (e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, mf) && strcmp(e->d_name, fdir))
			r = move_in(cmd, e->d_name);
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "%s/%s", bundle.stage, mf);
	if (r == 0 && stat(path, &st) == 0)
		r = move_in(cmd, mf);
	rm_tree(bundle.stage, 2);
	staging = 0;
	ncommitted++;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}
