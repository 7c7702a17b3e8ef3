/*
 * msr_rtit.h - the RTIT model-specific registers (RTIT 3.3): addresses,
 * fields, reserved bits and reset values.  The one home of the register
 * layout; encoder/rtit/rtit_msr.c implements the access rules.
 */
#ifndef RTIT_MSR_RTIT_H
#define RTIT_MSR_RTIT_H

enum rtit_r_msr {
	RTIT_R_MSR_LIP0 = 0x760,		/* 3.3.6, Table 8 */
	RTIT_R_MSR_LIP1 = 0x761,
	RTIT_R_MSR_LIP2 = 0x762,
	RTIT_R_MSR_LIP3 = 0x763,
	RTIT_R_MSR_CTL = 0x768,		/* 3.3.2, Table 4 */
	RTIT_R_MSR_STATUS = 0x769,	/* 3.3.3 */
	RTIT_R_MSR_CNTP = 0x76b,		/* 3.3.4, Table 5 */
	RTIT_R_MSR_EVENTS = 0x76c,	/* 3.3.5, Table 6 */
	RTIT_R_MSR_LAST_LIP = 0x76e,	/* 3.3.7, Table 9 */
	RTIT_R_MSR_LAST_CALL_NLIP = 0x76f,/* 3.3.14 */
	RTIT_R_MSR_BASE_ADDR = 0x770,	/* 3.3.10 */
	RTIT_R_MSR_LIMIT_MASK = 0x771,	/* 3.3.11 */
	RTIT_R_MSR_OFFSET = 0x772,	/* 3.3.12 */
	RTIT_R_MSR_CR3_MATCH = 0x777,	/* 3.3.8, Table 10 */
	RTIT_R_MSR_PKT_CNT = 0x77c,	/* 3.3.9, Table 11 */
	RTIT_R_MSR_TNT_BUFF = 0x77d,	/* 3.3.13 */
	RTIT_R_MSR_FIRST = 0x760,
	RTIT_R_MSR_LAST = 0x77d
};

/* RTIT_CTL bits (Table 4). */
#define RTIT_R_CTL_TRACE_EN	(1ull << 0)
#define RTIT_R_CTL_CYCLE_ACC	(1ull << 1)
#define RTIT_R_CTL_OS		(1ull << 2)
#define RTIT_R_CTL_USER		(1ull << 3)
#define RTIT_R_CTL_STS_ON_CR3	(1ull << 4)
#define RTIT_R_CTL_CR3EN		(1ull << 7)
#define RTIT_R_CTL_DEST		(1ull << 8)
#define RTIT_R_CTL_MTC_EN		(1ull << 9)
#define RTIT_R_CTL_STS_EN		(1ull << 10)
#define RTIT_R_CTL_CMPRS_RET	(1ull << 11)
#define RTIT_R_CTL_LESS_PKTS	(1ull << 12)
#define RTIT_R_CTL_TRACE_ACTIVE	(1ull << 13)
#define RTIT_R_CTL_MTC_RANGE_SHIFT 14
#define RTIT_R_CTL_MTC_RANGE_MASK	(3ull << 14)
#define RTIT_R_CTL_RSVD		(~0xff9full)	/* [6:5], [63:16] */

/* RTIT_STATUS bits (3.3.3). ContextEn and TriggerEn are read-only:
 * writes to them are ignored, not #GP. */
#define RTIT_R_STATUS_FILTER_EN	(1ull << 0)
#define RTIT_R_STATUS_CONTEXT_EN	(1ull << 1)
#define RTIT_R_STATUS_TRIGGER_EN	(1ull << 2)
#define RTIT_R_STATUS_BUFF_OVF	(1ull << 3)
#define RTIT_R_STATUS_RO		(RTIT_R_STATUS_CONTEXT_EN | RTIT_R_STATUS_TRIGGER_EN)
#define RTIT_R_STATUS_RSVD	(~0xfull)

/* RTIT_CNTP (Table 5): [21:0]. */
#define RTIT_R_CNTP_BITS		22
#define RTIT_R_CNTP_MSB		(1ull << 21)
#define RTIT_R_CNTP_RSVD		(~0x3fffffull)

/* RTIT_EVENTS (Table 6, Table 7): Filter_Event_ID [2:0],
 * TraceStop_Event_ID [5:3]. */
#define RTIT_R_EVENTS_FILTER_MASK	0x7ull
#define RTIT_R_EVENTS_STOP_SHIFT	3
#define RTIT_R_EVENTS_RSVD	(~0x3full)
enum rtit_r_event_id {
	RTIT_R_EVID_RANGE0 = 0,
	RTIT_R_EVID_RANGE1 = 1,
	RTIT_R_EVID_RANGE01 = 2,
	RTIT_R_EVID_ALWAYS_OFF = 6,
	RTIT_R_EVID_ALWAYS_ON = 7
};

/* RTIT_LIPn (Table 8): [47:0]; [63:48] read as the sign of bit 47, writes
 * ignored (D71). */
#define RTIT_R_LIP_MASK		0xffffffffffffull

/* RTIT_LAST_LIP (Table 9): [15:0] LIP[31:16], [31:16] LIP[47:32],
 * [32] valid; [63:33] reserved. */
#define RTIT_R_LAST_LIP_VALID	(1ull << 32)
#define RTIT_R_LAST_LIP_RSVD	(~0x1ffffffffull)

/* RTIT_LAST_CALL_NLIP (3.3.14): [47:0] NLIP, [48] valid. */
#define RTIT_R_LAST_CALL_VALID	(1ull << 48)
#define RTIT_R_LAST_CALL_RSVD	(~0x1ffffffffffffull)

/* RTIT_BASE_ADDR (3.3.10): [35:6]; reset 0xFDC00000. */
#define RTIT_R_BASE_RSVD		(~0xfffffffc0ull)
#define RTIT_R_BASE_RESET		0xfdc00000ull

/* RTIT_LIMIT_MASK (3.3.11): [5:0] read as 1, [21:6] mask; reset 0x7F. */
#define RTIT_R_LIMIT_LOW		0x3full
#define RTIT_R_LIMIT_RSVD		(~0x3fffffull)
#define RTIT_R_LIMIT_RESET	0x7full

/* RTIT_OFFSET (3.3.12): [21:0]. */
#define RTIT_R_OFFSET_RSVD	(~0x3fffffull)

/* RTIT_CR3_MATCH (Table 10): CR3[35:5]. */
#define RTIT_R_CR3_MATCH_MASK	0xfffffffe0ull
#define RTIT_R_CR3_MATCH_RSVD	(~RTIT_R_CR3_MATCH_MASK)

/* RTIT_PKT_CNT (Table 11): [13:0] Pkt_Cnt, [17:16] Pkt_Mask; reset
 * 0x00020000. */
#define RTIT_R_PKT_CNT_MASK	0x3fffull
#define RTIT_R_PKT_MASK_SHIFT	16
#define RTIT_R_PKT_CNT_RSVD	(~0x33fffull)
#define RTIT_R_PKT_CNT_RESET	0x20000ull

/* RTIT_TNT_BUFF (3.3.13): [6:0], the image of TNT byte 0; reset 1;
 * writing 0 is #GP. */
#define RTIT_R_TNT_BUFF_RSVD	(~0x7full)
#define RTIT_R_TNT_BUFF_RESET	0x1ull

#endif /* RTIT_MSR_RTIT_H */
