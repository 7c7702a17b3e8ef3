/*
 * pt_pebs.c - PEBS records in the Intel PT trace: packet blocks (SDM
 * 33.4.1.1; BBP, BIP, BEP: 33.4.2.26-28, Tables 33-45 to 33-48; the items:
 * Table 33-47; docs/decisions.md D54).
 *
 * The simulator writes a PEBS record after the instruction that made the
 * counter overflow retired (sim/pmu.c) and announces it with an
 * RTIT_EV_PEBS record: the block goes between that instruction and the
 * next, so no packet Table 33-15 forbids can fall inside it (the TNT of
 * the branches before it goes out first, 33.4.2.1, D21; a PSB+ comes after the
 * record, at the next packet boundary).
 */
#include <string.h>

#include "rtit/pt_encoder.h"
#include "rtit/pebs.h"
#include "pt_internal.h"

void rtit_pt_model_on_pebs(void *opaque, const struct rtit_sim_pebs *p,
			   const struct rtit_sim_rec *ctx)
{
	struct rtit_pt_model *m = opaque;

	(void)ctx;
	m->pebs = *p;
	m->pebs_have = true;
}

void rtit_pt_on_pebs(struct rtit_pt_model *m, const struct rtit_sim_rec *r)
{
	struct rtit_pebs_item it[RTIT_PEBS_MAX_ITEMS];
	struct rtit_packet p;
	bool ctx;
	size_t n;

	if (!m->pebs_have)
		return;		/* no record given (a consumer without on_pebs) */
	m->pebs_have = false;
	/* Table 33-45: TriggerEn, and IA32_PEBS_ENABLE.OUTPUT = 01b (the
	 * simulator announces only those) */
	if (!rtit_pt_trigger_en(m))
		return;
	ctx = rtit_pt_context_en(m);
	n = rtit_pebs_items(&m->pebs, it);
	for (size_t i = 0; i < n; i++) {
		if (!i || it[i].type != it[i - 1].type) {
			/* a new block ends the one before (33.4.1.1) */
			memset(&p, 0, sizeof(p));
			p.type = RTIT_PT_BBP;
			p.u.bbp.type = it[i].type;
			p.u.bbp.sz = it[i].sz4;
			if (!rtit_pt_send_plain(m, &p, "BBP: a PEBS record, one block per group "
						"(33.4.2.26, Table 33-47, D54)"))
				return;	/* an OVF ends the block; nothing resumes in it */
		}
		memset(&p, 0, sizeof(p));
		p.type = RTIT_PT_BIP;
		p.u.bip.id = it[i].id;
		p.u.bip.value = it[i].sz4 ? it[i].value & 0xffffffffull : it[i].value;
		if (!rtit_pt_send_plain(m, &p, "BIP: a PEBS record item (33.4.2.27, Table 33-47)"))
			return;
	}
	/* 33.4.2.28: IP=1 when ContextEn, and the FUP binds the block to the
	 * next instruction, where the record was written (D54) */
	memset(&p, 0, sizeof(p));
	p.type = RTIT_PT_BEP;
	p.u.ip_bit = ctx;
	if (!rtit_pt_send_plain(m, &p, ctx ? "BEP(IP=1): the PEBS record ends, ContextEn=1 (33.4.2.28)" :
				"BEP(IP=0): the PEBS record ends, ContextEn=0 (33.4.2.28)"))
		return;
	if (ctx)
		rtit_pt_send_fup(m, r->ip, "FUP(NLIP) after BEP(IP=1): where the PEBS record binds "
				 "(Table 33-45 Application, D54)");
}
