/*
 * image.h - the program image the flow decoder reads code from (the flow
 * layer's image interface): a set of non-overlapping memory regions, each
 * holding exactly the bytes a file provides (an ELF file's PT_LOAD
 * segments, p_filesz bytes each, or a flat file at an address), plus the
 * ELF files' symbols.
 *
 * Only bytes an added region provides are code: the zero fill of a page
 * past a file's end, an ELF segment's .bss part (p_memsz beyond p_filesz)
 * and the gaps between regions are not in the image, and
 * rtit_image_read() fails on them, so the flow decoder reports "no memory
 * mapped" there instead of decoding zeros.  No simulator, no Unicorn.
 */
#ifndef RTIT_IMAGE_H
#define RTIT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "rtit/error.h"

struct rtit_image;	/* opaque */

/* The largest image rtit_image_add_* accepts, all regions together
 * (bytes): a bound against a malformed ELF naming a huge segment. */
#define RTIT_IMAGE_MAX_BYTES (1ull << 32)

/* Creates an empty image.  Returns 0 or -RTIT_ERR_INVALID (NULL),
 * -RTIT_ERR_NOMEM. */
int rtit_image_new(struct rtit_image **imgp);

/* Frees an image (NULL allowed). */
void rtit_image_free(struct rtit_image *img);

/*
 * Adds @len bytes (copied) at @addr.  Returns 0, -RTIT_ERR_INVALID (empty,
 * wraps past 2^64, overlaps a region already added), -RTIT_ERR_NOSPACE
 * (beyond RTIT_IMAGE_MAX_BYTES), -RTIT_ERR_NOMEM.  The reason is in
 * rtit_image_errmsg().
 */
int rtit_image_add_bytes(struct rtit_image *img, uint64_t addr,
			 const void *bytes, size_t len);

/* Adds a flat file's bytes at @addr (all of them).  As add_bytes, and
 * -RTIT_ERR_IO (cannot read it). */
int rtit_image_add_file(struct rtit_image *img, const char *path, uint64_t addr);

/*
 * Adds an ELF executable (ELFCLASS64 x86-64 or ELFCLASS32 i386; ET_EXEC or
 * ET_DYN) by its PT_LOAD segments, each at p_vaddr + @bias with its
 * p_filesz bytes, and keeps its symbols (symtab, else dynsym) for
 * rtit_image_symbol().  Returns 0, -RTIT_ERR_IO (cannot read it),
 * -RTIT_ERR_INVALID (not such an ELF, a segment outside the file, an
 * overlap), -RTIT_ERR_NOSPACE, -RTIT_ERR_NOMEM; the reason in
 * rtit_image_errmsg().
 */
int rtit_image_add_elf(struct rtit_image *img, const char *path, uint64_t bias);

/* The GNU build-id (NT_GNU_BUILD_ID in a PT_NOTE segment) of the ELF file
 * open at @fd, as lower-case hex, or "" when it has none or is no ELF.
 * The simulator records it for each file a process maps; the image
 * checks it when it reads the file back. */
void rtit_elf_build_id(int fd, char out[41]);

/*
 * Adds the code of a process run: each executable mapping of the
 * sideband's mmap lines (rtit/sideband.h), the file's bytes [offset,
 * offset + size) at addr.  A file whose build-id differs from the one the
 * run recorded is refused.  Returns 0, -RTIT_ERR_IO, -RTIT_ERR_INVALID
 * (build-id, an incomplete map list, an overlap), -RTIT_ERR_NOSPACE,
 * -RTIT_ERR_NOMEM; the reason in rtit_image_errmsg().
 */
struct rtit_sideband;
int rtit_image_add_mmaps(struct rtit_image *img, const struct rtit_sideband *sb);

/* Adds the symbols of the files a process run mapped (the sideband's
 * executable mmap lines; each file once, at the address its mapping
 * gives), for rtit_image_symbol_get (`rtitsim explain`).  A file that is
 * not an ELF adds none.  Returns 0, -RTIT_ERR_NOMEM. */
int rtit_image_add_mmap_symbols(struct rtit_image *img, const struct rtit_sideband *sb);

/* The entry point of the last ELF added (e_entry + bias), 0 if none. */
uint64_t rtit_image_entry(const struct rtit_image *img);

/*
 * Reads @n bytes at @addr into @buf.  Returns 0 when the image provides
 * every one of them (they may span adjacent regions), -RTIT_ERR_NOMAP
 * otherwise.  The signature of rtit_flow_read_mem_fn (opaque = the image).
 */
int rtit_image_read(void *img, uint64_t addr, uint8_t *buf, size_t n);

/* Looks up a symbol of the ELF files added (the first file that has
 * it): 0 and *value, or -RTIT_ERR_INVALID. */
int rtit_image_symbol(const struct rtit_image *img, const char *name,
		      uint64_t *value);

/* Symbol @i of the ELF files added (0, 1, ... in no particular order):
 * 0 with its name (kept by the image) and value, or -RTIT_ERR_INVALID
 * past the last. */
int rtit_image_symbol_get(const struct rtit_image *img, size_t i, const char **name,
			  uint64_t *value);

/* The number of regions and the bytes they hold. */
size_t rtit_image_regions(const struct rtit_image *img, uint64_t *bytes);

/* Region @i (0 .. rtit_image_regions() - 1, in ascending address order):
 * its address, bytes and length (the image keeps the bytes).  Returns 0,
 * or -RTIT_ERR_INVALID when there is no region @i. */
int rtit_image_region(const struct rtit_image *img, size_t i, uint64_t *addr,
		      const uint8_t **bytes, size_t *len);

/* The reason of the last failure, one line (static while img lives). */
const char *rtit_image_errmsg(const struct rtit_image *img);

#endif /* RTIT_IMAGE_H */
