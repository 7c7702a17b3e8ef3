/*
 * maps.c - a process that maps many file regions (issue 18: the sideband
 * once kept at most 64 mmap lines and decode refused the rest).  It maps
 * the first page of its own executable N times (default 100) with
 * PROT_READ | PROT_EXEC, each at an address of the kernel's choosing
 * (every one an executable mapping the decoder's image must hold), and
 * prints how many it mapped and a sum of bytes read through them.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int fd = open(argv[0], O_RDONLY);
	unsigned sum = 0;
	int mapped = 0;

	if (fd < 0) {
		perror(argv[0]);
		return 2;
	}
	long page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < n; i++) {
		volatile const uint8_t *p = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC,
						 MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			break;
		sum += p[i % 64] + p[(i * 7) % 4096];
		mapped++;
	}
	close(fd);
	printf("%d regions mapped, sum %u\n", mapped, sum);
	return mapped == n ? 0 : 1;
}
