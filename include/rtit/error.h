/*
 * error.h - rtitsim error codes.
 *
 * Functions return int: >= 0 on success (often a size or a count), and
 * -RTIT_ERR_x on failure.  rtit_errstr() names each code in one phrase.
 */
#ifndef RTIT_ERROR_H
#define RTIT_ERROR_H

enum rtit_error {
	RTIT_OK = 0,
	RTIT_ERR_INTERNAL,	/* a bug in rtitsim */
	RTIT_ERR_INVALID,	/* a bad argument */
	RTIT_ERR_EOS,		/* the stream ends inside a packet */
	RTIT_ERR_BAD_OPC,	/* a reserved or unknown opcode */
	RTIT_ERR_BAD_PACKET,	/* a reserved code or value inside a packet */
	RTIT_ERR_BAD_CONTEXT,	/* a packet that cannot stand here */
	RTIT_ERR_NOSYNC,	/* no PSB found */
	RTIT_ERR_NOMEM,		/* out of memory */
	RTIT_ERR_IO,		/* a read or write failed */
	RTIT_ERR_BAD_CONFIG,	/* a bad configuration value */
	RTIT_ERR_NOSPACE,	/* the output buffer is too small */
	RTIT_ERR_NOIP,		/* IP compressed against an unknown last IP */
	RTIT_ERR_NOMAP,		/* no memory mapped at an address of the image */
	RTIT_ERR_COUNT
};

/* Returns a static one-phrase description of an error code (either sign). */
static inline const char *rtit_errstr(int err)
{
	static const char *const s[RTIT_ERR_COUNT] = {
		[RTIT_OK] = "success",
		[RTIT_ERR_INTERNAL] = "internal error",
		[RTIT_ERR_INVALID] = "invalid argument",
		[RTIT_ERR_EOS] = "truncated packet (stream ends inside it)",
		[RTIT_ERR_BAD_OPC] = "reserved or unknown opcode",
		[RTIT_ERR_BAD_PACKET] = "reserved encoding inside packet",
		[RTIT_ERR_BAD_CONTEXT] = "packet not allowed here",
		[RTIT_ERR_NOSYNC] = "no PSB found",
		[RTIT_ERR_NOMEM] = "out of memory",
		[RTIT_ERR_IO] = "I/O error",
		[RTIT_ERR_BAD_CONFIG] = "bad configuration",
		[RTIT_ERR_NOSPACE] = "output buffer too small",
		[RTIT_ERR_NOIP] = "IP compressed against an unknown last IP",
		[RTIT_ERR_NOMAP] = "no memory mapped at the address",
	};
	if (err < 0)
		err = -err;
	if (err >= RTIT_ERR_COUNT || !s[err])
		return "unknown error";
	return s[err];
}

#endif /* RTIT_ERROR_H */
