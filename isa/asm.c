/*
 * asm.c - assembly source to an ELF with as and ld (rtit/asm.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtit/asm.h"

/* Runs argv with stdout and stderr to errpath; returns the exit status or
 * -1. */
static int run_tool(char *const argv[], const char *errpath)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
			close(fd);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The first error line of a tool, rewritten as name:line: tool: message. */
static void tool_error(char *err, size_t errsz, const char *errpath,
		       const char *tool, const char *name, int line_base)
{
	FILE *f = fopen(errpath, "r");
	char line[512];
	if (!f) {
		snprintf(err, errsz, "%s: %s failed", name, tool);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strstr(line, "Error") && !strstr(line, "error") &&
		    !strstr(line, "undefined"))
			continue;
		const char *p = strstr(line, "src.s:");
		int ln;
		const char *msg;
		if (p && sscanf(p + 6, "%d:", &ln) == 1 &&
		    (msg = strchr(p + 6, ':')) != NULL) {
			msg++;
			while (*msg == ' ')
				msg++;
			if (!strncmp(msg, "Error: ", 7))
				msg += 7;
			snprintf(err, errsz, "%s:%d: %s: %s", name, ln + line_base, tool, msg);
		} else {
			snprintf(err, errsz, "%s: %s: %s", name, tool, line);
		}
		fclose(f);
		return;
	}
	fclose(f);
	snprintf(err, errsz, "%s: %s failed", name, tool);
}

int rtit_asm_build(const char *src, uint64_t addr, int mode, const char *name,
		   int line_base, struct rtit_asm *out, char *err, size_t errsz)
{
	return rtit_asm_build_sections(src, addr, NULL, 0, mode, name, line_base, out, err,
				       errsz);
}

int rtit_asm_build_sections(const char *src, uint64_t addr, const struct rtit_asm_section *secs,
			    size_t nsecs, int mode, const char *name, int line_base,
			    struct rtit_asm *out, char *err, size_t errsz)
{
	if (!src || !out || !err || !errsz || (mode != 32 && mode != 64) ||
	    nsecs > RTIT_ASM_MAX_SECTIONS || (nsecs && !secs))
		return -RTIT_ERR_INVALID;
	if (!name)
		name = "<asm>";
	memset(out, 0, sizeof(*out));
	snprintf(out->dir, sizeof(out->dir), "/tmp/rtitsim.XXXXXX");
	if (!mkdtemp(out->dir)) {
		snprintf(err, errsz, "mkdtemp: %s", strerror(errno));
		out->dir[0] = 0;
		return -RTIT_ERR_IO;
	}
	char s_path[64], o_path[64], err_path[64], ttext[40];
	snprintf(s_path, sizeof(s_path), "%s/src.s", out->dir);
	snprintf(o_path, sizeof(o_path), "%s/src.o", out->dir);
	snprintf(out->elf, sizeof(out->elf), "%s/src.elf", out->dir);
	snprintf(err_path, sizeof(err_path), "%s/err.txt", out->dir);
	snprintf(ttext, sizeof(ttext), "-Ttext=0x%" PRIx64, addr);
	int r = 0;
	FILE *f = fopen(s_path, "w");
	if (!f || fputs(src, f) < 0 || fputc('\n', f) < 0) {
		if (f)
			fclose(f);
		snprintf(err, errsz, "%s: cannot write %s", name, s_path);
		r = -RTIT_ERR_IO;
		goto out;
	}
	fclose(f);
	bool b64 = mode == 64;
	char *as_argv[] = { "as", b64 ? "--64" : "--32", "-o", o_path, s_path, NULL };
	if (run_tool(as_argv, err_path) != 0) {
		tool_error(err, errsz, err_path, "as", name, line_base);
		r = -RTIT_ERR_INVALID;
		goto out;
	}
	char secarg[RTIT_ASM_MAX_SECTIONS][64];
	char *ld_argv[12 + RTIT_ASM_MAX_SECTIONS] = { "ld", "-m", b64 ? "elf_x86_64" : "elf_i386",
						      "-N", "-static", "--build-id=none", ttext,
						      "-o", out->elf, o_path };
	for (size_t i = 0; i < nsecs; i++) {
		snprintf(secarg[i], sizeof(secarg[i]), "--section-start=%.24s=0x%" PRIx64,
			 secs[i].name, secs[i].addr);
		ld_argv[10 + i] = secarg[i];
	}
	if (run_tool(ld_argv, err_path) != 0) {
		tool_error(err, errsz, err_path, "ld", name, line_base);
		r = -RTIT_ERR_INVALID;
		goto out;
	}
out:
	unlink(s_path);
	unlink(o_path);
	unlink(err_path);
	if (r < 0)
		rtit_asm_cleanup(out);
	return r;
}

void rtit_asm_cleanup(struct rtit_asm *a)
{
	if (!a || !a->dir[0])
		return;
	if (a->elf[0])
		unlink(a->elf);
	rmdir(a->dir);
	a->dir[0] = a->elf[0] = 0;
}
