/*
 * syscall.c - the Linux system-call layer of a process run (linux.c):
 * what glibc, musl and common programs need for a single-threaded run,
 * deterministic and sandboxed (docs/linux.md, D88-D92).
 *
 * The x86-64 system-call ABI (the kernel's arch/x86/entry/entry_64.S):
 * number in RAX, arguments in RDI RSI RDX R10 R8 R9, result (or -errno)
 * in RAX; RCX and R11 are the SYSCALL's.  Every call is answered from the
 * simulator's state: time from the simulated clock, random bytes from
 * the seed, fixed identities.  The guest reads host files read-only; it
 * writes only to its standard output and error and under the one
 * directory the user made writable.  A call not listed here returns
 * -ENOSYS and is counted for the run's summary.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "linux.h"

#define PAGE 0x1000ull
#define PAGE_UP(a) (((a) + PAGE - 1) & ~(PAGE - 1))

/* The simulated clock in wall time (D90): the TSC runs at LX_TSC_HZ; the
 * realtime clock starts at LX_EPOCH (2024-01-01 00:00:00 UTC), the
 * monotonic one at LX_BOOT seconds. */
#define LX_TSC_HZ 2000000000ull
#define LX_EPOCH 1704067200ull
#define LX_BOOT 1000ull
#define LX_PID 100
#define LX_UID 1000

/* The copy buffer between host and guest (in the process state: no
 * allocation per call). */
#define xfer (sim->lx->buf)

/* ---------------------------------------------------------- guest memory */

static int gread(struct rtit_sim *sim, uint64_t a, void *b, size_t n)
{
	return n && uc_mem_read(sim->uc, a, b, n) != UC_ERR_OK ? -EFAULT : 0;
}

static int gwrite(struct rtit_sim *sim, uint64_t a, const void *b, size_t n)
{
	return n && uc_mem_write(sim->uc, a, b, n) != UC_ERR_OK ? -EFAULT : 0;
}

/* A NUL-ended string of at most @size bytes; 0, -EFAULT, -ENAMETOOLONG. */
static int gstr(struct rtit_sim *sim, uint64_t a, char *out, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		if (uc_mem_read(sim->uc, a + i, &out[i], 1) != UC_ERR_OK)
			return -EFAULT;
		if (!out[i])
			return 0;
	}
	return -ENAMETOOLONG;
}

/* -------------------------------------------------------- descriptors */

int lx_fds_init(struct rtit_sim *sim)
{
	struct sim_linux *lx = sim->lx;
	for (int i = 0; i < LX_MAX_FDS; i++)
		lx->fds[i].host = -1;
	lx->fds[0].kind = LX_FD_IN;
	if (lx->p.stdin_path) {
		int h = open(lx->p.stdin_path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (h < 0)
			return sim_seterr(sim, -RTIT_ERR_IO, "--stdin %s: %s", lx->p.stdin_path,
					  strerror(errno));
		if (fstat(h, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(h);
			return sim_seterr(sim, -RTIT_ERR_IO, "--stdin %s: not a regular file",
					  lx->p.stdin_path);
		}
		lx->fds[0].host = h;
	}
	lx->fds[1].kind = LX_FD_OUT;
	lx->fds[1].writable = true;
	lx->fds[2].kind = LX_FD_ERR;
	lx->fds[2].writable = true;
	return 0;
}

void lx_fds_fini(struct sim_linux *lx)
{
	for (int i = 0; i < LX_MAX_FDS; i++)
		if (lx->fds[i].host >= 0)
			close(lx->fds[i].host);
}

static struct lx_fd *fd_get(struct sim_linux *lx, uint64_t fd)
{
	if (fd >= LX_MAX_FDS || lx->fds[fd].kind == LX_FD_FREE)
		return NULL;
	return &lx->fds[fd];
}

static int fd_alloc(struct sim_linux *lx, int from)
{
	for (int i = from < 0 ? 0 : from; i < LX_MAX_FDS; i++)
		if (lx->fds[i].kind == LX_FD_FREE)
			return i;
	return -EMFILE;
}

static void fd_close(struct sim_linux *lx, int fd)
{
	if (lx->fds[fd].host >= 0)
		close(lx->fds[fd].host);
	memset(&lx->fds[fd], 0, sizeof(lx->fds[fd]));
	lx->fds[fd].host = -1;
}

/* Duplicates @src into the free slot @dst. */
static int fd_dup(struct sim_linux *lx, int src, int dst, bool cloexec)
{
	struct lx_fd d = lx->fds[src];
	if (d.host >= 0 && (d.host = fcntl(d.host, F_DUPFD_CLOEXEC, 3)) < 0)
		return -errno;
	d.cloexec = cloexec;
	lx->fds[dst] = d;
	return dst;
}

/* --------------------------------------------------------------- paths */

/* The host directory of guest descriptor @dirfd (AT_FDCWD: the cwd). */
static int dir_of(struct sim_linux *lx, int64_t dirfd, char *out, size_t size)
{
	if ((int)dirfd == AT_FDCWD) {
		snprintf(out, size, "%s", lx->cwd);
		return 0;
	}
	struct lx_fd *f = fd_get(lx, (uint64_t)dirfd);
	if (!f)
		return -EBADF;
	if (f->kind != LX_FD_DIR)
		return -ENOTDIR;
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", f->host);
	ssize_t n = readlink(link, out, size - 1);
	if (n < 0)
		return -EBADF;
	out[n] = 0;
	return 0;
}

/* The host path of guest path @gp relative to @dirfd, in @out. */
static int host_path(struct rtit_sim *sim, int64_t dirfd, uint64_t gp, char *out, size_t size)
{
	char p[PATH_MAX];
	int r = gstr(sim, gp, p, sizeof(p));
	if (r < 0)
		return r;
	if (!p[0])
		return -ENOENT;
	if (p[0] == '/') {
		snprintf(out, size, "%s", p);
		return 0;
	}
	char dir[PATH_MAX];
	if ((r = dir_of(sim->lx, dirfd, dir, sizeof(dir))) < 0)
		return r;
	if ((size_t)snprintf(out, size, "%s/%s", dir, p) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Host pseudo-filesystems the guest may not see: what they hold is the
 * host's state, not the guest's (D91). */
static bool pseudo(const char *path)
{
	char rp[PATH_MAX];
	const char *p = realpath(path, rp) ? rp : path;
	static const char *const deny[] = { "/proc", "/sys", "/dev", "/run" };
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++) {
		size_t n = strlen(deny[i]);
		if (!strncmp(p, deny[i], n) && (p[n] == '/' || !p[n]))
			return true;
	}
	return false;
}

/* Whether host path @path may be created or written: its directory
 * resolves (symlinks and '..' followed) under the writable directory,
 * and its last component is a name.  The resolved path in @out. */
static int writable_path(struct sim_linux *lx, const char *path, char *out, size_t size)
{
	if (!lx->writable[0])
		return -EACCES;
	char dir[PATH_MAX], rdir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EACCES;
	if (slash == dir)
		snprintf(rdir, sizeof(rdir), "/");
	else {
		*slash = 0;
		if (!realpath(dir, rdir))
			return -errno;
	}
	size_t n = strlen(lx->writable);
	if (strncmp(rdir, lx->writable, n) || (rdir[n] && rdir[n] != '/'))
		return -EACCES;
	if ((size_t)snprintf(out, size, "%s/%s", rdir, path + (base - dir)) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* -------------------------------------------------------------- files */

static int64_t sys_openat(struct rtit_sim *sim, int64_t dirfd, uint64_t gp, int flags, int mode)
{
	struct sim_linux *lx = sim->lx;
	char path[PATH_MAX], wpath[PATH_MAX];
	int r = host_path(sim, dirfd, gp, path, sizeof(path));
	if (r < 0)
		return r;
	if (pseudo(path))
		return -EACCES;
	int acc = flags & O_ACCMODE;
	bool write = acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND));
	int slot = fd_alloc(lx, 0);
	if (slot < 0)
		return slot;
	int h;
	if (write) {
		if ((r = writable_path(lx, path, wpath, sizeof(wpath))) < 0)
			return r;
		h = open(wpath, (flags & (O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_EXCL)) |
				O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode & 0777);
	} else {
		h = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
			       (flags & (O_DIRECTORY | O_NOFOLLOW)));
	}
	if (h < 0)
		return -errno;
	struct stat st;
	if (fstat(h, &st) < 0 || !(S_ISREG(st.st_mode) || (!write && S_ISDIR(st.st_mode)))) {
		close(h);
		return -EACCES;	/* devices, FIFOs, sockets: never (D91) */
	}
	fcntl(h, F_SETFL, fcntl(h, F_GETFL) & ~O_NONBLOCK);
	lx->fds[slot] = (struct lx_fd){ .kind = S_ISDIR(st.st_mode) ? LX_FD_DIR : LX_FD_FILE,
					.writable = write && acc != O_RDONLY,
					.append = flags & O_APPEND, .cloexec = flags & O_CLOEXEC,
					.host = h };
	return slot;
}

static int64_t sys_read(struct rtit_sim *sim, uint64_t fd, uint64_t buf, uint64_t n,
			bool at, int64_t off)
{
	struct lx_fd *f = fd_get(sim->lx, fd);
	if (!f)
		return -EBADF;
	if (f->kind == LX_FD_DIR)
		return -EISDIR;
	if (f->kind == LX_FD_OUT || f->kind == LX_FD_ERR)
		return -EBADF;
	if (f->kind == LX_FD_IN && f->host < 0)
		return 0;	/* the empty standard input */
	if (at && (f->kind != LX_FD_FILE || off < 0))
		return f->kind != LX_FD_FILE ? -ESPIPE : -EINVAL;
	uint64_t done = 0;
	while (done < n) {
		size_t chunk = n - done < sizeof(xfer) ? n - done : sizeof(xfer);
		ssize_t got = at ? pread(f->host, xfer, chunk, off + (int64_t)done) :
				   read(f->host, xfer, chunk);
		if (got < 0)
			return done ? (int64_t)done : -errno;
		if (!got)
			break;
		if (gwrite(sim, buf + done, xfer, (size_t)got) < 0)
			return done ? (int64_t)done : -EFAULT;
		done += (uint64_t)got;
		if ((size_t)got < chunk)
			break;
	}
	return (int64_t)done;
}

static int64_t sys_write(struct rtit_sim *sim, uint64_t fd, uint64_t buf, uint64_t n,
			 bool at, int64_t off)
{
	struct sim_linux *lx = sim->lx;
	struct lx_fd *f = fd_get(lx, fd);
	if (!f)
		return -EBADF;
	if (!f->writable)
		return -EBADF;
	if (at && f->kind != LX_FD_FILE)
		return -ESPIPE;
	uint64_t done = 0;
	while (done < n) {
		size_t chunk = n - done < sizeof(xfer) ? n - done : sizeof(xfer);
		if (gread(sim, buf + done, xfer, chunk) < 0)
			return done ? (int64_t)done : -EFAULT;
		ssize_t put;
		if (f->kind == LX_FD_OUT || f->kind == LX_FD_ERR) {
			FILE *o = f->kind == LX_FD_OUT ? lx->p.out : lx->p.err;
			put = o ? (ssize_t)fwrite(xfer, 1, chunk, o) : (ssize_t)chunk;
			if (o && (size_t)put < chunk)
				return done ? (int64_t)done : -EIO;
		} else {
			put = at ? pwrite(f->host, xfer, chunk, off + (int64_t)done) :
				   write(f->host, xfer, chunk);
			if (put < 0)
				return done ? (int64_t)done : -errno;
		}
		done += (uint64_t)put;
	}
	if ((f->kind == LX_FD_OUT || f->kind == LX_FD_ERR) &&
	    fflush(f->kind == LX_FD_OUT ? lx->p.out : lx->p.err) != 0)
		return -EIO;
	return (int64_t)done;
}

/* readv/writev: the iovec array, each element through read/write. */
static int64_t sys_rwv(struct rtit_sim *sim, uint64_t fd, uint64_t iov, uint64_t cnt, bool wr)
{
	if (cnt > 1024)
		return -EINVAL;
	int64_t total = 0;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t v[2];
		if (gread(sim, iov + 16 * i, v, 16) < 0)
			return total ? total : -EFAULT;
		if (!v[1])
			continue;
		int64_t r = wr ? sys_write(sim, fd, v[0], v[1], false, 0) :
				 sys_read(sim, fd, v[0], v[1], false, 0);
		if (r < 0)
			return total ? total : r;
		total += r;
		if ((uint64_t)r < v[1])
			break;
	}
	return total;
}

/* The stat of the standard descriptors: a pipe (no host state leaks). */
static void std_stat(struct stat *st, int fd)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFIFO | 0600;
	st->st_nlink = 1;
	st->st_uid = st->st_gid = LX_UID;
	st->st_blksize = 4096;
	st->st_ino = (ino_t)fd + 1;
}

/* The kernel's x86-64 struct stat is the host's (this host is x86-64
 * Linux): copied as it is. */
static int64_t put_stat(struct rtit_sim *sim, uint64_t buf, const struct stat *st)
{
	return gwrite(sim, buf, st, sizeof(*st));
}

static int64_t sys_fstat(struct rtit_sim *sim, uint64_t fd, uint64_t buf)
{
	struct lx_fd *f = fd_get(sim->lx, fd);
	struct stat st;
	if (!f)
		return -EBADF;
	if (f->host < 0 || f->kind == LX_FD_OUT || f->kind == LX_FD_ERR)
		std_stat(&st, (int)fd);
	else if (fstat(f->host, &st) < 0)
		return -errno;
	return put_stat(sim, buf, &st);
}

static int64_t sys_fstatat(struct rtit_sim *sim, int64_t dirfd, uint64_t gp, uint64_t buf,
			   int flags)
{
	char p[PATH_MAX];
	struct stat st;
	if (flags & AT_EMPTY_PATH) {
		char c;
		if (gread(sim, gp, &c, 1) == 0 && !c)
			return sys_fstat(sim, (uint64_t)dirfd, buf);
	}
	int r = host_path(sim, dirfd, gp, p, sizeof(p));
	if (r < 0)
		return r;
	if (pseudo(p))
		return -EACCES;
	if (fstatat(AT_FDCWD, p, &st, flags & AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return put_stat(sim, buf, &st);
}

static int64_t sys_statx(struct rtit_sim *sim, int64_t dirfd, uint64_t gp, int flags,
			 unsigned mask, uint64_t buf)
{
	struct statx sx;
	char p[PATH_MAX];
	char c = 1;
	int r;
	if ((flags & AT_EMPTY_PATH) && gread(sim, gp, &c, 1) == 0 && !c) {
		struct lx_fd *f = fd_get(sim->lx, (uint64_t)dirfd);
		if (!f)
			return -EBADF;
		if (f->host < 0 || f->kind == LX_FD_OUT || f->kind == LX_FD_ERR) {
			memset(&sx, 0, sizeof(sx));
			sx.stx_mask = STATX_BASIC_STATS;
			sx.stx_mode = S_IFIFO | 0600;
			sx.stx_nlink = 1;
			sx.stx_uid = sx.stx_gid = LX_UID;
			sx.stx_blksize = 4096;
		} else if (statx(f->host, "", AT_EMPTY_PATH, mask, &sx) < 0) {
			return -errno;
		}
		return gwrite(sim, buf, &sx, sizeof(sx));
	}
	if ((r = host_path(sim, dirfd, gp, p, sizeof(p))) < 0)
		return r;
	if (pseudo(p))
		return -EACCES;
	if (statx(AT_FDCWD, p, flags & AT_SYMLINK_NOFOLLOW, mask, &sx) < 0)
		return -errno;
	return gwrite(sim, buf, &sx, sizeof(sx));
}

static int64_t sys_faccessat(struct rtit_sim *sim, int64_t dirfd, uint64_t gp, int mode)
{
	char p[PATH_MAX], w[PATH_MAX];
	int r = host_path(sim, dirfd, gp, p, sizeof(p));
	if (r < 0)
		return r;
	if (pseudo(p))
		return -EACCES;
	if ((mode & W_OK) && (r = writable_path(sim->lx, p, w, sizeof(w))) < 0)
		return -EACCES;
	return faccessat(AT_FDCWD, p, mode & (R_OK | W_OK | X_OK), 0) < 0 ? -errno : 0;
}

static int64_t sys_readlinkat(struct rtit_sim *sim, int64_t dirfd, uint64_t gp, uint64_t buf,
			      uint64_t size)
{
	char p[PATH_MAX], out[PATH_MAX];
	char g[PATH_MAX];
	int r = gstr(sim, gp, g, sizeof(g));
	if (r < 0)
		return r;
	ssize_t n;
	if (!strcmp(g, "/proc/self/exe")) {
		n = (ssize_t)strlen(sim->lx->exe);
		memcpy(out, sim->lx->exe, (size_t)n);
	} else {
		if ((r = host_path(sim, dirfd, gp, p, sizeof(p))) < 0)
			return r;
		if (pseudo(p))
			return -EACCES;
		if ((n = readlink(p, out, sizeof(out))) < 0)
			return -errno;
	}
	if ((int64_t)size <= 0)
		return -EINVAL;
	if ((uint64_t)n > size)
		n = (ssize_t)size;
	return gwrite(sim, buf, out, (size_t)n) < 0 ? -EFAULT : n;
}

static int64_t sys_getdents64(struct rtit_sim *sim, uint64_t fd, uint64_t buf, uint64_t n)
{
	struct lx_fd *f = fd_get(sim->lx, fd);
	if (!f)
		return -EBADF;
	if (f->kind != LX_FD_DIR)
		return -ENOTDIR;
	long got = syscall(SYS_getdents64, f->host, xfer, n < sizeof(xfer) ? n : sizeof(xfer));
	if (got < 0)
		return -errno;
	return gwrite(sim, buf, xfer, (size_t)got) < 0 ? -EFAULT : got;
}

static int64_t sys_lseek(struct sim_linux *lx, uint64_t fd, int64_t off, int whence)
{
	struct lx_fd *f = fd_get(lx, fd);
	if (!f)
		return -EBADF;
	if (f->kind != LX_FD_FILE && f->kind != LX_FD_DIR && !(f->kind == LX_FD_IN && f->host >= 0))
		return -ESPIPE;
	off_t r = lseek(f->host, off, whence);
	return r < 0 ? -errno : r;
}

static int64_t sys_fcntl(struct sim_linux *lx, uint64_t fd, int cmd, uint64_t arg)
{
	struct lx_fd *f = fd_get(lx, fd);
	if (!f)
		return -EBADF;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC: {
		int s = fd_alloc(lx, (int)arg);
		return s < 0 ? s : fd_dup(lx, (int)fd, s, cmd == F_DUPFD_CLOEXEC);
	}
	case F_GETFD:
		return f->cloexec ? FD_CLOEXEC : 0;
	case F_SETFD:
		f->cloexec = arg & FD_CLOEXEC;
		return 0;
	case F_GETFL:
		return (f->writable ? (f->kind == LX_FD_FILE ? O_RDWR : O_WRONLY) : O_RDONLY) |
		       (f->append ? O_APPEND : 0);
	case F_SETFL:
		return 0;
	default:
		return -EINVAL;
	}
}

static int64_t sys_dup3(struct sim_linux *lx, uint64_t old, uint64_t nfd, int flags, bool dup2)
{
	if (!fd_get(lx, old))
		return -EBADF;
	if (nfd >= LX_MAX_FDS)
		return -EBADF;
	if (old == nfd)
		return dup2 ? (int64_t)nfd : -EINVAL;
	if (lx->fds[nfd].kind != LX_FD_FREE)
		fd_close(lx, (int)nfd);
	return fd_dup(lx, (int)old, (int)nfd, flags & O_CLOEXEC);
}

/* unlink, mkdir: under the writable directory only. */
static int64_t sys_pathop(struct rtit_sim *sim, int64_t dirfd, uint64_t gp, int op, int arg)
{
	char p[PATH_MAX], w[PATH_MAX];
	int r = host_path(sim, dirfd, gp, p, sizeof(p));
	if (r < 0)
		return r;
	if ((r = writable_path(sim->lx, p, w, sizeof(w))) < 0)
		return r;
	if (op == 0)
		r = (arg & AT_REMOVEDIR) ? rmdir(w) : unlink(w);
	else
		r = mkdir(w, (mode_t)arg & 0777);
	return r < 0 ? -errno : 0;
}

/* ----------------------------------------------------------- memory */

static int64_t sys_brk(struct rtit_sim *sim, uint64_t want)
{
	struct sim_linux *lx = sim->lx;
	if (want < lx->brk_start)
		return (int64_t)lx->brk_cur;
	uint64_t cur = PAGE_UP(lx->brk_cur), nw = PAGE_UP(want);
	if (nw > cur) {
		if (nw > LX_MMAP_TOP || lx_any_mapped(sim, cur, nw - cur) ||
		    lx_map(sim, cur, nw - cur, PROT_READ | PROT_WRITE) < 0)
			return (int64_t)lx->brk_cur;	/* Linux: the old break */
	} else if (nw < cur) {
		lx_unmap(sim, nw, cur - nw);
	}
	lx->brk_cur = want;
	return (int64_t)want;
}

static int64_t sys_mmap(struct rtit_sim *sim, uint64_t addr, uint64_t len, int prot, int flags,
			int64_t fd, uint64_t off)
{
	struct sim_linux *lx = sim->lx;
	if (!len || (off & (PAGE - 1)) || len > (1ull << 46))
		return -EINVAL;
	len = PAGE_UP(len);
	struct lx_fd *f = NULL;
	if (!(flags & MAP_ANONYMOUS)) {
		if (!(f = fd_get(lx, (uint64_t)fd)))
			return -EBADF;
		if (f->kind != LX_FD_FILE)
			return -EACCES;
		if ((flags & MAP_SHARED) && (prot & PROT_WRITE))
			return -EACCES;	/* shared writable file maps: not modelled (D92) */
	}
	uint64_t at;
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (addr & (PAGE - 1))
			return -EINVAL;
		if ((flags & MAP_FIXED_NOREPLACE) && lx_any_mapped(sim, addr, len))
			return -EEXIST;
		at = addr;
	} else if (addr && !(addr & (PAGE - 1)) && addr + len <= LX_MMAP_TOP &&
		   addr >= LX_MMAP_FLOOR && !lx_any_mapped(sim, addr, len)) {
		at = addr;	/* the hint is free */
	} else if (!(at = lx_find_free(sim, len))) {
		return -ENOMEM;
	}
	int r = lx_map(sim, at, len, prot);
	if (r < 0)
		return r;
	if (f) {
		for (uint64_t done = 0; done < len;) {
			size_t chunk = len - done < sizeof(xfer) ? len - done : sizeof(xfer);
			ssize_t got = pread(f->host, xfer, chunk, (off_t)(off + done));
			if (got <= 0)
				break;	/* past the end: zero (D92) */
			uc_mem_write(sim->uc, at + done, xfer, (size_t)got);
			done += (uint64_t)got;
		}
		char link[64], path[PATH_MAX];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", f->host);
		ssize_t n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = 0;
		if (lx_note_mapping(sim, at, len, off, prot, path) < 0)
			return -ENOMEM;
	}
	return (int64_t)at;
}

static int64_t sys_mremap(struct rtit_sim *sim, uint64_t old, uint64_t osz, uint64_t nsz,
			  int flags)
{
	if ((old & (PAGE - 1)) || !nsz || (flags & ~3))
		return -EINVAL;
	osz = PAGE_UP(osz);
	nsz = PAGE_UP(nsz);
	if (!lx_any_mapped(sim, old, osz ? osz : PAGE))
		return -EFAULT;
	if (nsz <= osz) {
		if (nsz < osz)
			lx_unmap(sim, old + nsz, osz - nsz);
		return (int64_t)old;
	}
	uc_mem_region *regs;
	uint32_t n, perms = UC_PROT_READ | UC_PROT_WRITE;
	if (uc_mem_regions(sim->uc, &regs, &n) == UC_ERR_OK) {
		for (uint32_t i = 0; i < n; i++)
			if (regs[i].begin <= old && regs[i].end >= old)
				perms = regs[i].perms;
		uc_free(regs);
	}
	int prot = ((perms & UC_PROT_READ) ? PROT_READ : 0) |
		   ((perms & UC_PROT_WRITE) ? PROT_WRITE : 0) |
		   ((perms & UC_PROT_EXEC) ? PROT_EXEC : 0);
	if (!lx_any_mapped(sim, old + osz, nsz - osz) && old + nsz <= LX_MMAP_TOP)
		return lx_map(sim, old + osz, nsz - osz, prot) < 0 ? -ENOMEM : (int64_t)old;
	if (!(flags & 1))	/* MREMAP_MAYMOVE */
		return -ENOMEM;
	uint64_t at = lx_find_free(sim, nsz);
	if (!at || lx_map(sim, at, nsz, prot | PROT_WRITE) < 0)
		return -ENOMEM;
	for (uint64_t d = 0; d < osz; d += sizeof(xfer)) {
		size_t c = osz - d < sizeof(xfer) ? osz - d : sizeof(xfer);
		if (uc_mem_read(sim->uc, old + d, xfer, c) == UC_ERR_OK)
			uc_mem_write(sim->uc, at + d, xfer, c);
	}
	if (!(prot & PROT_WRITE))
		lx_protect(sim, at, nsz, prot);
	lx_unmap(sim, old, osz);
	return (int64_t)at;
}

/* ----------------------------------------------------- time and identity */

uint64_t lx_rand64(struct sim_linux *lx)
{
	uint64_t x = lx->rand;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return lx->rand = x;
}

static uint64_t now_ns(const struct rtit_sim *sim)
{
	uint64_t t = sim->tsc;
	return t / LX_TSC_HZ * 1000000000ull + t % LX_TSC_HZ * 1000000000ull / LX_TSC_HZ;
}

static int64_t sys_clock_gettime(struct rtit_sim *sim, int64_t clk, uint64_t tp)
{
	uint64_t ns = now_ns(sim), s;
	switch (clk) {
	case 0: case 5: case 8: case 11:	/* REALTIME, _COARSE, _ALARM, TAI */
		s = LX_EPOCH;
		break;
	case 1: case 4: case 6: case 7: case 9:	/* MONOTONIC, _RAW, _COARSE, BOOTTIME */
		s = LX_BOOT;
		break;
	case 2: case 3:				/* PROCESS_CPUTIME, THREAD_CPUTIME */
		s = 0;
		break;
	default:
		return -EINVAL;
	}
	uint64_t ts[2] = { s + ns / 1000000000ull, ns % 1000000000ull };
	return tp ? gwrite(sim, tp, ts, 16) : 0;
}

static int64_t sys_uname(struct rtit_sim *sim, uint64_t buf)
{
	char u[6][65];
	memset(u, 0, sizeof(u));
	strcpy(u[0], "Linux");
	strcpy(u[1], "rtitsim");
	strcpy(u[2], "6.1.0-rtitsim");
	strcpy(u[3], "#1 SMP PREEMPT_DYNAMIC");
	strcpy(u[4], "x86_64");
	strcpy(u[5], "(none)");
	return gwrite(sim, buf, u, sizeof(u));
}

static int64_t sys_prlimit(struct rtit_sim *sim, int res, uint64_t old)
{
	uint64_t lim[2] = { UINT64_MAX, UINT64_MAX };
	if (res < 0 || res > 15)
		return -EINVAL;
	if (res == 3)		/* RLIMIT_STACK */
		lim[0] = RTIT_SIM_PROCESS_STACK_SIZE;
	else if (res == 7)	/* RLIMIT_NOFILE */
		lim[0] = lim[1] = LX_MAX_FDS;
	return old ? gwrite(sim, old, lim, 16) : 0;
}

static int64_t sys_sysinfo(struct rtit_sim *sim, uint64_t buf)
{
	uint8_t b[112];
	memset(b, 0, sizeof(b));
	int64_t up = (int64_t)(LX_BOOT + now_ns(sim) / 1000000000ull);
	uint64_t ram = 4ull << 30;
	uint16_t procs = 1;
	memcpy(b, &up, 8);
	memcpy(b + 32, &ram, 8);	/* totalram */
	memcpy(b + 40, &ram, 8);	/* freeram */
	memcpy(b + 80, &procs, 2);
	uint32_t unit = 1;
	memcpy(b + 104, &unit, 4);
	return gwrite(sim, buf, b, sizeof(b));
}

static int64_t sys_futex(struct rtit_sim *sim, uint64_t ua, int op, uint32_t val)
{
	uint32_t cur;
	switch (op & 0x7f) {
	case 0: case 9:		/* FUTEX_WAIT, FUTEX_WAIT_BITSET */
		if (gread(sim, ua, &cur, 4) < 0)
			return -EFAULT;
		if (cur != val)
			return -EAGAIN;
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, sim_reg_get(sim, R_IP),
			      "futex wait on 0x%" PRIx64 " would block forever: the process"
			      " has one thread", ua);
		return 0;
	case 1: case 10:	/* FUTEX_WAKE, FUTEX_WAKE_BITSET: no waiter */
		return 0;
	default:
		return -ENOSYS;
	}
}

/* rt_sigaction: the actions are kept and given back; no signal is ever
 * delivered (D92). */
#define sigact (sim->lx->sigact)

static int64_t sys_sigaction(struct rtit_sim *sim, int64_t sig, uint64_t act, uint64_t oact,
			     uint64_t size)
{
	if (sig < 1 || sig > 64 || size != 8)
		return -EINVAL;
	if (act && (sig == 9 || sig == 19))
		return -EINVAL;
	uint8_t old[32];
	memcpy(old, sigact[sig - 1], 32);
	if (act && gread(sim, act, sigact[sig - 1], 32) < 0)
		return -EFAULT;
	return oact ? gwrite(sim, oact, old, 32) : 0;
}

static int64_t sys_sigprocmask(struct rtit_sim *sim, int how, uint64_t set, uint64_t oset,
			       uint64_t size)
{
	struct sim_linux *lx = sim->lx;
	uint64_t s = 0, old = lx->sigmask;
	if (size != 8)
		return -EINVAL;
	if (set) {
		if (gread(sim, set, &s, 8) < 0)
			return -EFAULT;
		if (how == 0)
			lx->sigmask |= s;
		else if (how == 1)
			lx->sigmask &= ~s;
		else if (how == 2)
			lx->sigmask = s;
		else
			return -EINVAL;
		lx->sigmask &= ~((1ull << 8) | (1ull << 18));	/* SIGKILL, SIGSTOP */
	}
	return oset ? gwrite(sim, oset, &old, 8) : 0;
}

static int64_t sys_getrandom(struct rtit_sim *sim, uint64_t buf, uint64_t n)
{
	if (n > (1u << 25))
		n = 1u << 25;
	for (uint64_t d = 0; d < n; d += 8) {
		uint64_t v = lx_rand64(sim->lx);
		if (gwrite(sim, buf + d, &v, n - d < 8 ? n - d : 8) < 0)
			return d ? (int64_t)d : -EFAULT;
	}
	return (int64_t)n;
}

/* ------------------------------------------------------------ dispatch */

/* x86-64 system-call numbers (the kernel's syscall_64.tbl). */
static const char *const names[] = {
	[0] = "read", [1] = "write", [2] = "open", [3] = "close", [4] = "stat", [5] = "fstat",
	[6] = "lstat", [7] = "poll", [8] = "lseek", [9] = "mmap", [10] = "mprotect",
	[11] = "munmap", [12] = "brk", [13] = "rt_sigaction", [14] = "rt_sigprocmask",
	[15] = "rt_sigreturn", [16] = "ioctl", [17] = "pread64", [18] = "pwrite64",
	[19] = "readv", [20] = "writev", [21] = "access", [22] = "pipe", [23] = "select",
	[24] = "sched_yield", [25] = "mremap", [26] = "msync", [27] = "mincore",
	[28] = "madvise", [32] = "dup", [33] = "dup2", [35] = "nanosleep", [39] = "getpid",
	[41] = "socket", [42] = "connect", [56] = "clone", [57] = "fork", [58] = "vfork",
	[59] = "execve", [60] = "exit", [61] = "wait4", [62] = "kill", [63] = "uname",
	[72] = "fcntl", [74] = "fsync", [75] = "fdatasync", [76] = "truncate",
	[77] = "ftruncate", [78] = "getdents", [79] = "getcwd", [80] = "chdir",
	[81] = "fchdir", [82] = "rename", [83] = "mkdir", [84] = "rmdir", [87] = "unlink",
	[89] = "readlink", [90] = "chmod", [91] = "fchmod", [92] = "chown", [95] = "umask",
	[96] = "gettimeofday", [97] = "getrlimit", [98] = "getrusage", [99] = "sysinfo",
	[102] = "getuid", [105] = "setuid", [106] = "setgid", [104] = "getgid", [107] = "geteuid", [108] = "getegid",
	[110] = "getppid", [111] = "getpgrp", [115] = "getgroups", [131] = "sigaltstack", [157] = "prctl",
	[137] = "statfs", [138] = "fstatfs", [158] = "arch_prctl", [186] = "gettid",
	[200] = "tkill", [201] = "time", [202] = "futex", [204] = "sched_getaffinity",
	[217] = "getdents64", [218] = "set_tid_address", [221] = "fadvise64",
	[228] = "clock_gettime", [229] = "clock_getres", [230] = "clock_nanosleep",
	[231] = "exit_group", [234] = "tgkill", [257] = "openat", [258] = "mkdirat",
	[262] = "newfstatat", [263] = "unlinkat", [267] = "readlinkat", [269] = "faccessat",
	[273] = "set_robust_list", [280] = "utimensat", [292] = "dup3", [293] = "pipe2",
	[302] = "prlimit64", [318] = "getrandom", [322] = "execveat", [332] = "statx",
	[334] = "rseq", [435] = "clone3", [439] = "faccessat2",
};

const char *lx_syscall_name(int nr)
{
	if (nr < 0 || (size_t)nr >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[nr];
}

static int64_t enosys(struct sim_linux *lx, int nr)
{
	for (int i = 0; i < lx->nenosys; i++) {
		if (lx->enosys[i].nr == nr) {
			lx->enosys[i].n++;
			return -ENOSYS;
		}
	}
	if (lx->nenosys < LX_MAX_ENOSYS) {
		lx->enosys[lx->nenosys].nr = nr;
		lx->enosys[lx->nenosys++].n = 1;
	}
	return -ENOSYS;
}

/* Signals that end the process (raise, abort): the run stops. */
static int64_t sys_kill_self(struct rtit_sim *sim, int64_t sig)
{
	if (sig == 0)
		return 0;
	if (sig < 0 || sig > 64)
		return -EINVAL;
	sim_stop_with(sim, RTIT_SIM_STOP_FAULT, sim_reg_get(sim, R_IP),
		      "the program sent itself signal %d%s, which is not delivered (docs/linux.md)",
		      (int)sig, sig == 6 ? " (SIGABRT: abort())" : "");
	return 0;
}

static int64_t dispatch_files(struct rtit_sim *sim, int nr, const uint64_t *a, bool *known)
{
	struct sim_linux *lx = sim->lx;
	*known = true;
	switch (nr) {
	case 0: return sys_read(sim, a[0], a[1], a[2], false, 0);
	case 1: return sys_write(sim, a[0], a[1], a[2], false, 0);
	case 2: return sys_openat(sim, AT_FDCWD, a[0], (int)a[1], (int)a[2]);
	case 3:
		if (!fd_get(lx, a[0]))
			return -EBADF;
		fd_close(lx, (int)a[0]);
		return 0;
	case 4: return sys_fstatat(sim, AT_FDCWD, a[0], a[1], 0);
	case 5: return sys_fstat(sim, a[0], a[1]);
	case 6: return sys_fstatat(sim, AT_FDCWD, a[0], a[1], AT_SYMLINK_NOFOLLOW);
	case 8: return sys_lseek(lx, a[0], (int64_t)a[1], (int)a[2]);
	case 16: return fd_get(lx, a[0]) ? -ENOTTY : -EBADF;
	case 17: return sys_read(sim, a[0], a[1], a[2], true, (int64_t)a[3]);
	case 18: return sys_write(sim, a[0], a[1], a[2], true, (int64_t)a[3]);
	case 19: return sys_rwv(sim, a[0], a[1], a[2], false);
	case 20: return sys_rwv(sim, a[0], a[1], a[2], true);
	case 21: return sys_faccessat(sim, AT_FDCWD, a[0], (int)a[1]);
	case 32: {
		int s = fd_get(lx, a[0]) ? fd_alloc(lx, 0) : -EBADF;
		return s < 0 ? s : fd_dup(lx, (int)a[0], s, false);
	}
	case 33: return sys_dup3(lx, a[0], a[1], 0, true);
	case 292: return sys_dup3(lx, a[0], a[1], (int)a[2], false);
	case 72: return sys_fcntl(lx, a[0], (int)a[1], a[2]);
	case 74: case 75: return fd_get(lx, a[0]) ? 0 : -EBADF;
	case 77: {
		struct lx_fd *f = fd_get(lx, a[0]);
		if (!f || !f->writable || f->kind != LX_FD_FILE)
			return -EBADF;
		return ftruncate(f->host, (off_t)a[1]) < 0 ? -errno : 0;
	}
	case 79: {
		size_t n = strlen(lx->cwd) + 1;
		if (a[1] < n)
			return -ERANGE;
		return gwrite(sim, a[0], lx->cwd, n) < 0 ? -EFAULT : (int64_t)n;
	}
	case 80: {
		char p[PATH_MAX], rp[PATH_MAX];
		struct stat st;
		int r = host_path(sim, AT_FDCWD, a[0], p, sizeof(p));
		if (r < 0)
			return r;
		if (pseudo(p))
			return -EACCES;
		if (!realpath(p, rp) || stat(rp, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		snprintf(lx->cwd, sizeof(lx->cwd), "%s", rp);
		return 0;
	}
	case 83: return sys_pathop(sim, AT_FDCWD, a[0], 1, (int)a[1]);
	case 84: return sys_pathop(sim, AT_FDCWD, a[0], 0, AT_REMOVEDIR);
	case 87: return sys_pathop(sim, AT_FDCWD, a[0], 0, 0);
	case 89: return sys_readlinkat(sim, AT_FDCWD, a[0], a[1], a[2]);
	case 217: return sys_getdents64(sim, a[0], a[1], a[2]);
	case 221: return fd_get(lx, a[0]) ? 0 : -EBADF;
	case 257: return sys_openat(sim, (int64_t)a[0], a[1], (int)a[2], (int)a[3]);
	case 258: return sys_pathop(sim, (int64_t)a[0], a[1], 1, (int)a[2]);
	case 262: return sys_fstatat(sim, (int64_t)a[0], a[1], a[2], (int)a[3]);
	case 263: return sys_pathop(sim, (int64_t)a[0], a[1], 0, (int)a[2]);
	case 267: return sys_readlinkat(sim, (int64_t)a[0], a[1], a[2], a[3]);
	case 269: case 439: return sys_faccessat(sim, (int64_t)a[0], a[1], (int)a[2]);
	case 332: return sys_statx(sim, (int64_t)a[0], a[1], (int)a[2], (unsigned)a[3], a[4]);
	default:
		*known = false;
		return -ENOSYS;
	}
}

static int64_t dispatch_process(struct rtit_sim *sim, int nr, const uint64_t *a, bool *known)
{
	*known = true;
	switch (nr) {
	case 9: return sys_mmap(sim, a[0], a[1], (int)a[2], (int)a[3], (int64_t)a[4], a[5]);
	case 10:
		if (a[0] & (PAGE - 1))
			return -EINVAL;
		return a[1] ? lx_protect(sim, a[0], PAGE_UP(a[1]), (int)a[2]) : 0;
	case 11:
		if ((a[0] & (PAGE - 1)) || !a[1])
			return -EINVAL;
		lx_unmap(sim, a[0], PAGE_UP(a[1]));
		return 0;
	case 12: return sys_brk(sim, a[0]);
	case 13: return sys_sigaction(sim, (int64_t)a[0], a[1], a[2], a[3]);
	case 14: return sys_sigprocmask(sim, (int)a[0], a[1], a[2], a[3]);
	case 24: return 0;
	case 25: return sys_mremap(sim, a[0], a[1], a[2], (int)a[3]);
	case 28: return 0;
	case 35: case 230: {
		/* the sleep passes on the simulated clock */
		uint64_t ts[2];
		if (gread(sim, nr == 35 ? a[0] : a[2], ts, 16) < 0)
			return -EFAULT;
		if (ts[1] >= 1000000000ull || (int64_t)ts[0] < 0)
			return -EINVAL;
		uint64_t ticks = ts[0] * LX_TSC_HZ + ts[1] * LX_TSC_HZ / 1000000000ull;
		if (ticks < (1ull << 50))
			sim_clock_on_cycles(sim, ticks * sim->core_ratio / sim->cfg.clock.tsc_ratio);
		return 0;
	}
	case 39: case 186: return LX_PID;
	case 110: return 1;
	case 111: return LX_PID;
	case 62: case 200:
		return (int64_t)a[0] == LX_PID ? sys_kill_self(sim, (int64_t)a[1]) : -ESRCH;
	case 234:
		return (int64_t)a[1] == LX_PID ? sys_kill_self(sim, (int64_t)a[2]) : -ESRCH;
	case 63: return sys_uname(sim, a[0]);
	case 95: return 022;
	case 96: {
		uint64_t ns = now_ns(sim);
		uint64_t tv[2] = { LX_EPOCH + ns / 1000000000ull, ns % 1000000000ull / 1000 };
		return a[0] ? gwrite(sim, a[0], tv, 16) : 0;
	}
	case 97: return sys_prlimit(sim, (int)a[0], a[1]);
	case 302:
		if (a[0] && a[0] != LX_PID)
			return -ESRCH;
		return sys_prlimit(sim, (int)a[1], a[3]);
	case 99: return sys_sysinfo(sim, a[0]);
	case 102: case 104: case 107: case 108: return LX_UID;
	case 115: return 0;
	case 131: {
		uint64_t oss[3] = { 0, 2, 0 };	/* ss_flags SS_DISABLE */
		return a[1] ? gwrite(sim, a[1], oss, 24) : 0;
	}
	case 158: {
		int reg = a[0] == 0x1002 ? UC_X86_REG_FS_BASE : a[0] == 0x1001 ? UC_X86_REG_GS_BASE : 0;
		if (reg) {
			if ((uint64_t)((int64_t)(a[1] << 16) >> 16) != a[1])
				return -EPERM;
			uc_reg_write(sim->uc, reg, &a[1]);
			return 0;
		}
		if (a[0] == 0x1003 || a[0] == 0x1004) {
			uint64_t v = 0;
			uc_reg_read(sim->uc, a[0] == 0x1003 ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE, &v);
			return gwrite(sim, a[1], &v, 8);
		}
		return -EINVAL;
	}
	case 201: {
		uint64_t t = LX_EPOCH + now_ns(sim) / 1000000000ull;
		if (a[0] && gwrite(sim, a[0], &t, 8) < 0)
			return -EFAULT;
		return (int64_t)t;
	}
	case 202: return sys_futex(sim, a[0], (int)a[1], (uint32_t)a[2]);
	case 204: {
		uint64_t mask = 1;
		if (a[1] < 8 || (a[1] & 7))
			return -EINVAL;
		for (uint64_t i = 0; i < a[1]; i += 8, mask = 0)
			if (gwrite(sim, a[2] + i, &mask, 8) < 0)
				return -EFAULT;
		return 8;
	}
	case 218: return LX_PID;
	case 228: return sys_clock_gettime(sim, (int64_t)a[0], a[1]);
	case 229: {
		uint64_t res[2] = { 0, 1 };
		return a[1] ? gwrite(sim, a[1], res, 16) : 0;
	}
	case 273: return a[1] == 24 ? 0 : -EINVAL;
	/* extended attributes: none on any file (getxattr: ENODATA, the
	 * lists empty), as on a file system without them set (D92) */
	case 191: case 192: case 193: return -ENODATA;
	case 194: case 195: case 196: return 0;
	case 318: return sys_getrandom(sim, a[0], a[1]);
	default:
		*known = false;
		return -ENOSYS;
	}
}

static uint64_t host_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static bool serve(struct rtit_sim *sim, uint64_t ip);

bool sim_linux_syscall(struct rtit_sim *sim, uint64_t ip)
{
	uint64_t t0 = host_ns();
	bool r = serve(sim, ip);
	sim->lx->sys_ns += host_ns() - t0;
	return r;
}

static bool serve(struct rtit_sim *sim, uint64_t ip)
{
	struct sim_linux *lx = sim->lx;
	int nr = (int)sim_reg_get(sim, R_AX);
	uint64_t a[6] = { sim_reg_get(sim, R_DI), sim_reg_get(sim, R_SI), sim_reg_get(sim, R_DX),
			  sim_reg_get(sim, R_10), sim_reg_get(sim, R_8), sim_reg_get(sim, R_9) };
	lx->syscalls++;
	lx->last_nr = nr;
	lx->last_at = sim->retired;
	lx->sys_cycles += lx->p.syscall_cycles;
	sim_clock_on_cycles(sim, lx->p.syscall_cycles);
	if (nr == 60 || nr == 231) {		/* exit, exit_group */
		lx->exited = true;
		lx->exit_status = (int)(a[0] & 0xff);
		if (lx->p.out)
			fflush(lx->p.out);
		sim_stop_with(sim, RTIT_SIM_STOP_EXIT, LX_KERNEL_ENTRY,
			      "the program exited with status %d", lx->exit_status);
		return false;
	}
	if (nr == 56 || nr == 57 || nr == 58 || nr == 59 || nr == 322 || nr == 435) {
		sim_stop_with(sim, RTIT_SIM_STOP_FAULT, ip,
			      "the program called %s at 0x%" PRIx64 ": new processes, threads and"
			      " exec are not modelled (docs/linux.md)", lx_syscall_name(nr), ip);
		return false;
	}
	bool known;
	int64_t r = dispatch_files(sim, nr, a, &known);
	if (!known)
		r = dispatch_process(sim, nr, a, &known);
	if (!known)
		r = enosys(lx, nr);
	if (sim->req == SIM_REQ_STOP)
		return false;
	sim_reg_set(sim, R_AX, (uint64_t)r);
	return true;
}
