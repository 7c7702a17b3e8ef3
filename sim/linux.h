/*
 * linux.h - the Linux process model shared by sim/linux.c (the program's
 * start: loader, initial stack, address space) and sim/syscall.c (the
 * system-call layer).  docs/linux.md says what a guest sees.
 */
#ifndef RTIT_SIM_LINUX_H
#define RTIT_SIM_LINUX_H

#include <limits.h>
#include <stdio.h>

#include "sim_internal.h"

/* Where the "kernel" lives: one page of kernel text at the top of the
 * canonical space holding the SYSRET the system calls return through. */
#define LX_KERNEL_ENTRY 0xffffffff81000000ull
/* The load addresses of Linux with randomisation off (ELF_ET_DYN_BASE,
 * mmap_base = TASK_SIZE - 128 MiB; D88). */
#define LX_PIE_BASE 0x555555554000ull
#define LX_MMAP_TOP 0x7ffff7fff000ull
#define LX_MMAP_FLOOR 0x10000ull
#define LX_MAX_FDS 256
#define LX_MAX_ENOSYS 32

enum lx_fd_kind { LX_FD_FREE = 0, LX_FD_IN, LX_FD_OUT, LX_FD_ERR, LX_FD_FILE, LX_FD_DIR };

struct lx_fd {
	uint8_t kind;		/* enum lx_fd_kind */
	bool writable;		/* opened for writing (under the writable dir) */
	bool append;
	bool cloexec;
	int host;		/* host descriptor (FILE, DIR, IN), -1 none */
};

struct sim_linux {
	struct rtit_sim_process p;
	char exe[PATH_MAX];		/* the program, absolute */
	char cwd[PATH_MAX];		/* the guest's working directory */
	char writable[PATH_MAX];	/* "" none */
	uint64_t brk_start, brk_cur;
	uint64_t mmap_top;
	uint64_t rand;			/* getrandom's xorshift64 state */
	struct lx_fd fds[LX_MAX_FDS];
	/* what the process did */
	struct rtit_sim_mapping *maps;
	size_t nmaps, maps_cap;
	uint64_t syscalls, sys_cycles, sys_ns;
	int last_nr;
	uint64_t last_at;
	struct { int nr; uint64_t n; } enosys[LX_MAX_ENOSYS];
	int nenosys;
	bool exited;
	int exit_status;
	uint64_t sigmask;
	uint8_t sigact[64][32];	/* rt_sigaction's, kept and given back */
	uint8_t buf[65536];	/* copies between host and guest */
};

/* linux.c: the address space */
/* Maps [addr, addr + len) (page-aligned) with Linux protections @prot
 * (PROT_*), replacing what is there.  0 or -errno. */
int lx_map(struct rtit_sim *sim, uint64_t addr, uint64_t len, int prot);
/* Unmaps what is mapped in [addr, addr + len). */
void lx_unmap(struct rtit_sim *sim, uint64_t addr, uint64_t len);
/* Changes the protections of the mapped pages in the range; -ENOMEM when
 * part of it is not mapped. */
int lx_protect(struct rtit_sim *sim, uint64_t addr, uint64_t len, int prot);
/* A free range of @len bytes below the mmap top (top-down); 0 none. */
uint64_t lx_find_free(struct rtit_sim *sim, uint64_t len);
/* Whether any page of the range is mapped. */
bool lx_any_mapped(struct rtit_sim *sim, uint64_t addr, uint64_t len);
/* Records a file mapping (for the sideband); 0 or -ENOMEM. */
int lx_note_mapping(struct rtit_sim *sim, uint64_t addr, uint64_t len, uint64_t off,
		    int prot, const char *path);

/* syscall.c */
/* The system call in RAX after SYSCALL at @ip: done, result in RAX;
 * false: the process ended (exit) or the run stopped. */
bool sim_linux_syscall(struct rtit_sim *sim, uint64_t ip);
/* The name of system call @nr, or NULL. */
const char *lx_syscall_name(int nr);
/* Sets up the standard descriptors; 0 or -RTIT_ERR_x with the message. */
int lx_fds_init(struct rtit_sim *sim);
/* Closes every host descriptor. */
void lx_fds_fini(struct sim_linux *lx);
/* The next random word of the process's generator. */
uint64_t lx_rand64(struct sim_linux *lx);

#endif /* RTIT_SIM_LINUX_H */
