/*
 * image.c - the program image of the flow decoder (rtit/image.h): regions
 * sorted by address, each exactly the bytes a file provides, looked up by
 * binary search with the last hit remembered (the decoder reads mostly
 * where it read last).  ELF files through libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtit/image.h"
#include "rtit/sideband.h"

struct region {
	uint64_t addr, len;
	uint8_t *bytes;
};

struct symbol {
	char *name;
	uint64_t value;
};

struct rtit_image {
	struct region *r;
	size_t n, cap;
	size_t hit;		/* the region of the last read */
	uint64_t total;
	struct symbol *sym;
	size_t nsym, symcap;
	uint64_t entry;
	char err[256];
};

__attribute__((format(printf, 3, 4)))
static int fail(struct rtit_image *img, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(img->err, sizeof(img->err), fmt, ap);
	va_end(ap);
	return code;
}

int rtit_image_new(struct rtit_image **imgp)
{
	if (!imgp)
		return -RTIT_ERR_INVALID;
	*imgp = calloc(1, sizeof(**imgp));
	return *imgp ? 0 : -RTIT_ERR_NOMEM;
}

void rtit_image_free(struct rtit_image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->n; i++)
		free(img->r[i].bytes);
	for (size_t i = 0; i < img->nsym; i++)
		free(img->sym[i].name);
	free(img->r);
	free(img->sym);
	free(img);
}

const char *rtit_image_errmsg(const struct rtit_image *img)
{
	return img ? img->err : "no image";
}

uint64_t rtit_image_entry(const struct rtit_image *img)
{
	return img ? img->entry : 0;
}

size_t rtit_image_regions(const struct rtit_image *img, uint64_t *bytes)
{
	if (bytes)
		*bytes = img ? img->total : 0;
	return img ? img->n : 0;
}

int rtit_image_region(const struct rtit_image *img, size_t i, uint64_t *addr,
		      const uint8_t **bytes, size_t *len)
{
	if (!img || i >= img->n)
		return -RTIT_ERR_INVALID;
	*addr = img->r[i].addr;
	*bytes = img->r[i].bytes;
	*len = (size_t)img->r[i].len;
	return 0;
}

/* Takes ownership of @bytes (freed on failure). */
static int add_owned(struct rtit_image *img, uint64_t addr, uint8_t *bytes, uint64_t len)
{
	if (!len || addr + len - 1 < addr) {
		free(bytes);
		return fail(img, -RTIT_ERR_INVALID, "a region at 0x%" PRIx64 " of %" PRIu64
			    " bytes is empty or wraps past 2^64", addr, len);
	}
	if (len > RTIT_IMAGE_MAX_BYTES - img->total) {
		free(bytes);
		return fail(img, -RTIT_ERR_NOSPACE, "a region at 0x%" PRIx64 " of %" PRIu64
			    " bytes makes the image larger than %llu bytes", addr, len,
			    (unsigned long long)RTIT_IMAGE_MAX_BYTES);
	}
	size_t at = 0;
	while (at < img->n && img->r[at].addr < addr)
		at++;
	if ((at > 0 && img->r[at - 1].addr + img->r[at - 1].len > addr) ||
	    (at < img->n && addr + len > img->r[at].addr)) {
		const struct region *o = at > 0 && img->r[at - 1].addr + img->r[at - 1].len > addr ?
					 &img->r[at - 1] : &img->r[at];
		free(bytes);
		return fail(img, -RTIT_ERR_INVALID, "the region [0x%" PRIx64 ", 0x%" PRIx64
			    ") overlaps [0x%" PRIx64 ", 0x%" PRIx64 ")", addr, addr + len,
			    o->addr, o->addr + o->len);
	}
	if (img->n == img->cap) {
		size_t nc = img->cap ? 2 * img->cap : 8;
		struct region *nr = realloc(img->r, nc * sizeof(*nr));
		if (!nr) {
			free(bytes);
			return fail(img, -RTIT_ERR_NOMEM, "out of memory");
		}
		img->r = nr;
		img->cap = nc;
	}
	memmove(&img->r[at + 1], &img->r[at], (img->n - at) * sizeof(*img->r));
	img->r[at] = (struct region){ addr, len, bytes };
	img->n++;
	img->total += len;
	img->hit = 0;
	return 0;
}

int rtit_image_add_bytes(struct rtit_image *img, uint64_t addr, const void *bytes, size_t len)
{
	if (!img || (!bytes && len))
		return -RTIT_ERR_INVALID;
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		return fail(img, -RTIT_ERR_NOMEM, "out of memory");
	if (len)
		memcpy(copy, bytes, len);
	return add_owned(img, addr, copy, len);
}

/* Reads [off, off + len) of an open file into a new buffer. */
static int read_range(struct rtit_image *img, int fd, const char *path, uint64_t off,
		      uint64_t len, uint8_t **out)
{
	if (len > RTIT_IMAGE_MAX_BYTES)
		return fail(img, -RTIT_ERR_NOSPACE, "%s: %" PRIu64 " bytes is more than an image"
			    " may hold (%llu)", path, len, (unsigned long long)RTIT_IMAGE_MAX_BYTES);
	uint8_t *b = malloc(len ? (size_t)len : 1);
	if (!b)
		return fail(img, -RTIT_ERR_NOMEM, "%s: out of memory", path);
	for (uint64_t got = 0; got < len;) {
		ssize_t r = pread(fd, b + got, (size_t)(len - got), (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = errno;
			free(b);
			return fail(img, -RTIT_ERR_IO, "%s: cannot read %" PRIu64 " bytes at offset %"
				    PRIu64 ": %s", path, len, off, r < 0 ? strerror(e) : "end of file");
		}
		got += (uint64_t)r;
	}
	*out = b;
	return 0;
}

/* Opens a regular file for reading: the descriptor, or -RTIT_ERR_IO. */
static int open_regular(struct rtit_image *img, const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(img, -RTIT_ERR_IO, "%s: %s", path, strerror(errno));
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return fail(img, -RTIT_ERR_IO, "%s: not a regular file", path);
	}
	return fd;
}

int rtit_image_add_file(struct rtit_image *img, const char *path, uint64_t addr)
{
	if (!img || !path)
		return -RTIT_ERR_INVALID;
	struct stat st;
	int fd = open_regular(img, path, &st);
	if (fd < 0)
		return fd;
	if (st.st_size == 0) {
		close(fd);
		return fail(img, -RTIT_ERR_INVALID, "%s: the file is empty", path);
	}
	uint8_t *b;
	int r = read_range(img, fd, path, 0, (uint64_t)st.st_size, &b);
	close(fd);
	if (r < 0)
		return r;
	r = add_owned(img, addr, b, (uint64_t)st.st_size);
	if (r < 0) {
		char msg[sizeof(img->err)];
		snprintf(msg, sizeof(msg), "%s", img->err);
		return fail(img, r, "%s: %s", path, msg);
	}
	return 0;
}

static int add_symbols(struct rtit_image *img, Elf *e, uint64_t bias)
{
	Elf_Scn *scn = NULL;
	Elf_Scn *best = NULL;
	GElf_Shdr sh;

	/* the full symbol table when there is one, else the dynamic one */
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB ||
		    (sh.sh_type == SHT_DYNSYM && !best)))
			best = scn;
	if (!best || !gelf_getshdr(best, &sh) || !sh.sh_entsize)
		return 0;
	Elf_Data *d = elf_getdata(best, NULL);
	if (!d)
		return 0;
	size_t n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			continue;
		int t = GELF_ST_TYPE(s.st_info);
		if (t == STT_SECTION || t == STT_FILE || s.st_shndx == SHN_UNDEF)
			continue;
		const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
		if (!nm || !*nm)
			continue;
		if (img->nsym == img->symcap) {
			size_t nc = img->symcap ? 2 * img->symcap : 64;
			struct symbol *ns = realloc(img->sym, nc * sizeof(*ns));
			if (!ns)
				return -RTIT_ERR_NOMEM;
			img->sym = ns;
			img->symcap = nc;
		}
		if (!(img->sym[img->nsym].name = strdup(nm)))
			return -RTIT_ERR_NOMEM;
		img->sym[img->nsym++].value = s.st_value + (s.st_shndx == SHN_ABS ? 0 : bias);
	}
	return 0;
}

/* The PT_LOAD segments of an open ELF: each checked, then added. */
static int add_segments(struct rtit_image *img, Elf *e, int fd, const char *path,
			uint64_t fsize, uint64_t bias)
{
	size_t nph;
	if (elf_getphdrnum(e, &nph) != 0 || nph == 0)
		return fail(img, -RTIT_ERR_INVALID, "%s: no program headers", path);
	int added = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			return fail(img, -RTIT_ERR_INVALID, "%s: program header %zu: %s", path, i,
				    elf_errmsg(-1));
		/* a program the simulator could not load is no image either:
		 * the same bound on the memory a segment asks for (issue 19) */
		if (ph.p_type == PT_LOAD && ph.p_memsz > RTIT_IMAGE_MAX_BYTES)
			return fail(img, -RTIT_ERR_INVALID, "%s: PT_LOAD %zu: p_memsz 0x%" PRIx64
				    " is more than an image may hold (0x%llx bytes)", path, i,
				    (uint64_t)ph.p_memsz, (unsigned long long)RTIT_IMAGE_MAX_BYTES);
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
			return fail(img, -RTIT_ERR_INVALID, "%s: PT_LOAD %zu: bytes [0x%" PRIx64
				    ", 0x%" PRIx64 ") lie outside the file (%" PRIu64 " bytes)", path, i,
				    (uint64_t)ph.p_offset, (uint64_t)(ph.p_offset + ph.p_filesz), fsize);
		if (ph.p_filesz > ph.p_memsz)
			return fail(img, -RTIT_ERR_INVALID, "%s: PT_LOAD %zu: p_filesz 0x%" PRIx64
				    " exceeds p_memsz 0x%" PRIx64, path, i, (uint64_t)ph.p_filesz,
				    (uint64_t)ph.p_memsz);
		uint8_t *b;
		int r = read_range(img, fd, path, ph.p_offset, ph.p_filesz, &b);
		if (r < 0)
			return r;
		r = add_owned(img, ph.p_vaddr + bias, b, ph.p_filesz);
		if (r < 0) {
			char msg[sizeof(img->err)];
			snprintf(msg, sizeof(msg), "%s", img->err);
			return fail(img, r, "%s: PT_LOAD %zu: %s", path, i, msg);
		}
		added++;
	}
	if (!added)
		return fail(img, -RTIT_ERR_INVALID, "%s: no PT_LOAD segment with bytes in the file",
			    path);
	return 0;
}

int rtit_image_add_elf(struct rtit_image *img, const char *path, uint64_t bias)
{
	if (!img || !path)
		return -RTIT_ERR_INVALID;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(img, -RTIT_ERR_INTERNAL, "libelf: %s", elf_errmsg(-1));
	struct stat st;
	int fd = open_regular(img, path, &st);
	if (fd < 0)
		return fd;
	int r = 0;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		r = fail(img, -RTIT_ERR_INVALID, "%s: not an ELF file", path);
		goto out;
	}
	int cls = gelf_getclass(e);
	if (!((cls == ELFCLASS64 && eh.e_machine == EM_X86_64) ||
	      (cls == ELFCLASS32 && eh.e_machine == EM_386))) {
		r = fail(img, -RTIT_ERR_INVALID, "%s: not an x86-64 or i386 ELF (class %d,"
			 " machine %u)", path, cls, (unsigned)eh.e_machine);
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		r = fail(img, -RTIT_ERR_INVALID, "%s: not an executable or shared object"
			 " (e_type %u)", path, (unsigned)eh.e_type);
		goto out;
	}
	if ((r = add_segments(img, e, fd, path, (uint64_t)st.st_size, bias)) < 0)
		goto out;
	if ((r = add_symbols(img, e, bias)) < 0) {
		r = fail(img, r, "%s: out of memory reading its symbols", path);
		goto out;
	}
	img->entry = eh.e_entry + bias;
out:
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

/* The region holding @addr, or NULL. */
static inline const struct region *find(struct rtit_image *img, uint64_t addr)
{
	const struct region *h = img->n ? &img->r[img->hit] : NULL;
	if (h && addr - h->addr < h->len)
		return h;
	size_t lo = 0, hi = img->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (img->r[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - img->r[lo - 1].addr >= img->r[lo - 1].len)
		return NULL;
	img->hit = lo - 1;
	return &img->r[lo - 1];
}

int rtit_image_read(void *opaque, uint64_t addr, uint8_t *buf, size_t n)
{
	struct rtit_image *img = opaque;
	while (n) {
		const struct region *r = find(img, addr);
		if (!r)
			return -RTIT_ERR_NOMAP;
		uint64_t off = addr - r->addr;
		size_t k = r->len - off < n ? (size_t)(r->len - off) : n;
		memcpy(buf, r->bytes + off, k);
		buf += k;
		n -= k;
		addr += k;
		if (n && !addr)
			return -RTIT_ERR_NOMAP;	/* wrapped past 2^64 */
	}
	return 0;
}

int rtit_image_symbol_get(const struct rtit_image *img, size_t i, const char **name,
			  uint64_t *value)
{
	if (!img || i >= img->nsym)
		return -RTIT_ERR_INVALID;
	*name = img->sym[i].name;
	*value = img->sym[i].value;
	return 0;
}

int rtit_image_symbol(const struct rtit_image *img, const char *name, uint64_t *value)
{
	if (!img || !name)
		return -RTIT_ERR_INVALID;
	for (size_t i = 0; i < img->nsym; i++)
		if (!strcmp(img->sym[i].name, name)) {
			if (value)
				*value = img->sym[i].value;
			return 0;
		}
	return -RTIT_ERR_INVALID;
}

/* The GNU build-id note of the ELF open at @fd, from its PT_NOTE segments
 * (a stripped file without section headers has them too). */
void rtit_elf_build_id(int fd, char out[41])
{
	out[0] = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t nph, fsize;
	const char *raw;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &nph) != 0 ||
	    !(raw = elf_rawfile(e, &fsize)))
		nph = 0;
	for (size_t i = 0; i < nph && !out[0]; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
			continue;
		const uint8_t *p = (const uint8_t *)raw + ph.p_offset, *end = p + ph.p_filesz;
		while (end - p >= 12) {
			uint32_t nsz, dsz, type;
			memcpy(&nsz, p, 4);
			memcpy(&dsz, p + 4, 4);
			memcpy(&type, p + 8, 4);
			uint64_t need = 12 + ((nsz + 3ull) & ~3ull) + ((dsz + 3ull) & ~3ull);
			if (need > (uint64_t)(end - p))
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + 12, "GNU", 4) &&
			    dsz <= 20) {
				for (uint32_t k = 0; k < dsz; k++)
					snprintf(out + 2 * k, 3, "%02x", p[16 + k]);
				break;
			}
			p += need;
		}
	}
	if (e)
		elf_end(e);
}

/* One executable mapping's file bytes, after its build-id check. */
static int add_mmap(struct rtit_image *img, const struct rtit_sideband_mmap *m,
		    const char *path)
{
	struct stat st;
	int fd = open_regular(img, path, &st);
	if (fd < 0)
		return fd;
	char bid[41];
	rtit_elf_build_id(fd, bid);
	if (m->build_id[0] && strcmp(bid, m->build_id)) {
		close(fd);
		return fail(img, -RTIT_ERR_INVALID, "%s: build-id %s, the run mapped %s:"
			    " not the file the program ran", path, bid[0] ? bid : "none",
			    m->build_id);
	}
	/* the bytes the file has (a mapping past its end reads zero there,
	 * which is no code the trace may use) */
	uint64_t len = m->size;
	if (m->offset >= (uint64_t)st.st_size)
		len = 0;
	else if (len > (uint64_t)st.st_size - m->offset)
		len = (uint64_t)st.st_size - m->offset;
	uint8_t *b = NULL;
	int r = len ? read_range(img, fd, path, m->offset, len, &b) : 0;
	close(fd);
	if (r < 0)
		return r;
	if (len && (r = add_owned(img, m->addr, b, len)) < 0) {
		char msg[sizeof(img->err)];
		snprintf(msg, sizeof(msg), "%s", img->err);
		return fail(img, r, "%s: %s", path, msg);
	}
	return 0;
}

int rtit_image_add_mmaps(struct rtit_image *img, const struct rtit_sideband *sb)
{
	if (!img || !sb)
		return -RTIT_ERR_INVALID;
	if (sb->mmaps_total > sb->nmmaps)
		return fail(img, -RTIT_ERR_INVALID, "the sideband lists %zu of the run's %" PRIu64
			    " mappings: the image would be incomplete", sb->nmmaps, sb->mmaps_total);
	for (size_t i = 0; i < sb->nmmaps; i++) {
		char path[1500];
		if (!(sb->mmaps[i].prot & 4))
			continue;	/* code only */
		/* a bundle's copy: relative to the sideband's directory (D132) */
		if (rtit_sideband_mmap_path(sb, i, path, sizeof(path)) < 0)
			return fail(img, -RTIT_ERR_NOSPACE, "%s: the path is too long",
				    sb->mmaps[i].path);
		int r = add_mmap(img, &sb->mmaps[i], path);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The symbols of one mapped file: the bias from the PT_LOAD segment that
 * holds file offset @off, mapped at @addr.  A file that is no ELF, or no
 * such segment: nothing. */
static int mmap_file_symbols(struct rtit_image *img, const char *path, uint64_t off,
			     uint64_t addr)
{
	struct stat st;
	int fd = open_regular(img, path, &st);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t nph;
	int r = 0;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    off < ph.p_offset || off - ph.p_offset >= ph.p_filesz)
				continue;
			r = add_symbols(img, e, addr - (ph.p_vaddr + (off - ph.p_offset)));
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

int rtit_image_add_mmap_symbols(struct rtit_image *img, const struct rtit_sideband *sb)
{
	if (!img || !sb)
		return -RTIT_ERR_INVALID;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(img, -RTIT_ERR_INTERNAL, "libelf: %s", elf_errmsg(-1));
	for (size_t i = 0; i < sb->nmmaps; i++) {
		const struct rtit_sideband_mmap *m = &sb->mmaps[i];
		bool seen = false;
		if (!(m->prot & 4))
			continue;	/* once a file: its first executable mapping */
		for (size_t k = 0; k < i && !seen; k++)
			seen = (sb->mmaps[k].prot & 4) && !strcmp(sb->mmaps[k].path, m->path);
		int r = seen ? 0 : mmap_file_symbols(img, m->path, m->offset, m->addr);
		if (r < 0)
			return fail(img, r, "%s: out of memory reading its symbols", m->path);
	}
	return 0;
}
