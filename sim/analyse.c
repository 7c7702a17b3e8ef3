/*
 * analyse.c - block analysis with Zydis, cached by address, and the exact
 * instruction classification (RTIT 2.2 / Table 2, Intel PT Table 33-1).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

int sim_cache_init(struct sim_cache *c)
{
	memset(c, 0, sizeof(*c));
	c->cap = 4096;
	c->slots = calloc(c->cap, sizeof(*c->slots));
	c->blocks_cap = 1024;
	c->blocks = malloc(c->blocks_cap * sizeof(*c->blocks));
	c->insns_cap = 8192;
	c->insns = malloc(c->insns_cap * sizeof(*c->insns));
	c->recs = malloc(c->insns_cap * sizeof(*c->recs));
	c->gen = 1;	/* a block's rec_gen starts at 0: never current */
	if (!c->slots || !c->blocks || !c->insns || !c->recs) {
		sim_cache_fini(c);
		return -RTIT_ERR_NOMEM;
	}
	return 0;
}

void sim_cache_fini(struct sim_cache *c)
{
	free(c->slots);
	free(c->blocks);
	free(c->insns);
	free(c->recs);
	memset(c, 0, sizeof(*c));
}

void sim_cache_clear(struct sim_cache *c)
{
	memset(c->slots, 0, c->cap * sizeof(*c->slots));
	c->nblocks = 0;
	c->ninsns = 0;
}

static inline uint32_t hash_addr(uint64_t a)
{
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ull;
	a ^= a >> 32;
	return (uint32_t)a;
}

static int cache_grow(struct sim_cache *c)
{
	uint32_t ncap = c->cap * 2;
	uint32_t *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -RTIT_ERR_NOMEM;
	for (uint32_t i = 0; i < c->cap; i++) {
		if (!c->slots[i])
			continue;
		uint32_t h = hash_addr(c->blocks[c->slots[i] - 1].addr) & (ncap - 1);
		while (ns[h])
			h = (h + 1) & (ncap - 1);
		ns[h] = c->slots[i];
	}
	free(c->slots);
	c->slots = ns;
	c->cap = ncap;
	return 0;
}

/* Analyses [addr, addr+size): every instruction, classified. */
static int analyse(struct rtit_sim *sim, uint64_t addr, uint32_t size,
		   struct sim_block *b)
{
	struct sim_cache *c = &sim->cache;
	uint8_t buf[4096 + 16];
	uint32_t len = size ? size : 64;
	if (len > 4096)
		len = 4096;
	memset(buf, 0, sizeof(buf));
	/* a TB never crosses into unmapped memory; read what is mapped */
	if (uc_mem_read(sim->uc, addr, buf, len) != UC_ERR_OK) {
		uint32_t l;
		for (l = 0; l < len; l++)
			if (uc_mem_read(sim->uc, addr + l, buf + l, 1) != UC_ERR_OK)
				break;
		len = l;
	}
	memset(b, 0, sizeof(*b));
	b->addr = addr;
	b->size = size;
	b->first = c->ninsns;
	b->n = 0;
	b->nspecial = 0;
	uint32_t off = 0;
	while (off < len) {
		ZydisDecodedInstruction in;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&sim->dec, NULL,
				buf + off, len - off, &in)))
			break;
		if (c->ninsns == c->insns_cap) {
			uint32_t ncap = c->insns_cap * 2;
			struct isa_insn *ni = realloc(c->insns, ncap * sizeof(*ni));
			if (!ni)
				return -RTIT_ERR_NOMEM;
			c->insns = ni;
			struct rtit_sim_rec *nr = realloc(c->recs, ncap * sizeof(*nr));
			if (!nr)
				return -RTIT_ERR_NOMEM;
			c->recs = nr;
			c->insns_cap = ncap;
		}
		struct isa_insn *si = &c->insns[c->ninsns++];
		isa_classify(&in, addr + off, si);
		si->cpi = (uint8_t)sim->cfg.clock.cpi[si->cls];
		if ((si->flags & ISA_I_BRANCH) && si->cls != RTIT_IC_COND)
			si->rflags |= RTIT_SIM_F_TAKEN;
		if (si->flags & ISA_I_ZLC)
			si->rflags |= RTIT_SIM_F_ZERO_LEN_CALL;
		b->n++;
		if (si->flags & (ISA_I_SPECIAL | ISA_I_RISKY | ISA_I_PRIV | ISA_I_TXABORT))
			b->nspecial++;
		off += in.length;
		/* size unknown: stop at the first branch */
		if (!size && (si->flags & ISA_I_BRANCH))
			break;
	}
	if (b->n) {
		const struct isa_insn *l = &c->insns[b->first + b->n - 1];
		b->last_ip = l->ip;
		b->fall = l->ip + l->len;
		b->tail = ((l->flags & ISA_I_REP) ? SIM_TAIL_REP : 0) |
			  ((l->flags & ISA_I_SHADOW) ? SIM_TAIL_SHADOW : 0);
		if (l->cls == RTIT_IC_COND)
			b->tail |= SIM_TAIL_COND |
				   (l->target == b->fall ? SIM_TAIL_COND_FALL : 0);
	}
	return 0;
}

const struct sim_block *sim_block_get(struct rtit_sim *sim, uint64_t addr,
				      uint32_t size, bool *fresh)
{
	struct sim_cache *c = &sim->cache;
	uint32_t h = hash_addr(addr) & (c->cap - 1);
	uint32_t s;
	*fresh = false;
	while ((s = c->slots[h]) != 0) {
		struct sim_block *b = &c->blocks[s - 1];
		if (b->addr == addr) {
			if (b->size == size)
				return b;
			/* same start, other extent (retranslated): redo */
			if (analyse(sim, addr, size, b) < 0)
				return NULL;
			*fresh = true;
			return b;
		}
		h = (h + 1) & (c->cap - 1);
	}
	if (c->nblocks == c->blocks_cap) {
		uint32_t ncap = c->blocks_cap * 2;
		struct sim_block *nb = realloc(c->blocks, ncap * sizeof(*nb));
		if (!nb)
			return NULL;
		c->blocks = nb;
		c->blocks_cap = ncap;
	}
	struct sim_block *b = &c->blocks[c->nblocks];
	if (analyse(sim, addr, size, b) < 0)
		return NULL;
	c->slots[h] = ++c->nblocks;
	*fresh = true;
	if (c->nblocks * 2 > c->cap && cache_grow(c) < 0)
		return NULL;
	return b;
}
