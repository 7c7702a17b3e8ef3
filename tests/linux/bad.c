/*
 * bad.c - a program that does what the process model must refuse or
 * answer with an error code (tests/linux/test_bad.sh); argv[1] says what.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "efault")) {
		/* a bad pointer: -EFAULT to the guest, not a crash */
		long r = syscall(SYS_write, 1, (void *)8, 16);
		printf("write(1, 0x8, 16) = %ld errno %d\n", r, r < 0 ? errno : 0);
		return 0;
	}
	if (!strcmp(what, "open-write") && argc > 2) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			printf("open %s for writing: errno %d\n", argv[2], errno);
			return 1;
		}
		ssize_t w = write(fd, "written by the guest\n", 21);
		close(fd);
		printf("wrote %zd bytes to %s\n", w, argv[2]);
		return 0;
	}
	if (!strcmp(what, "open-dev")) {
		int fd = open("/dev/zero", O_RDONLY);
		printf("open /dev/zero: %s errno %d\n", fd < 0 ? "refused" : "opened", fd < 0 ? errno : 0);
		return 0;
	}
	if (!strcmp(what, "fork")) {
		pid_t p = fork();
		printf("fork returned %d\n", (int)p);
		return 0;
	}
	if (!strcmp(what, "loop")) {
		printf("looping\n");
		fflush(stdout);
		for (volatile unsigned long i = 0;; i++)
			;
	}
	if (!strcmp(what, "segv")) {
		volatile int *p = (int *)0x10;
		return *p;
	}
	if (!strcmp(what, "random")) {
		unsigned char b[8];
		struct timespec ts;
		if (getrandom(b, sizeof(b), 0) != sizeof(b))
			return 1;
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("random %02x%02x%02x%02x%02x%02x%02x%02x time %lld\n", b[0], b[1], b[2], b[3],
		       b[4], b[5], b[6], b[7], (long long)ts.tv_sec);
		return 0;
	}
	printf("usage: bad efault|open-write PATH|open-dev|fork|loop|segv|random\n");
	return 2;
}
