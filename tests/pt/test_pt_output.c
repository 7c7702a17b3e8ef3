/*
 * test_pt_output.c - the output schemes (33.2.7): a single circular range,
 * and ToPA with END (wrap-around and chained tables), INT, STOP and the
 * malformed entries that are operational errors ("ToPA Errors").
 *
 * Harness memory is 0x100000-0x10ffff; ToPA entries (Table 33-3, Figure
 * 33-2): base | Size << 6 | STOP 0x10 | INT 0x04 | END 0x01.
 */
#include "pt_harness.h"
#include "rtit/bits.h"

static struct px h;

#define MEM(a) (h.mem + ((a) - h.mem_base))
#define TOPA_REGION(a, size) ((uint64_t)(a) | ((uint64_t)(size) << RTIT_PT_TOPA_SIZE_SHIFT))

static void entry(uint64_t table, unsigned i, uint64_t e)
{
	rtit_le_store(MEM(table + 8 * i), e, 8);
}

static void start_topa(uint64_t table)
{
	px_msr(&h, RTIT_PT_MSR_OUTPUT_BASE, table);
	px_msr(&h, RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_TOPA);
	px_op(&h, 0x1000, 2);
}

/* Indirect jumps between 0x1100 and 0x2200: 3-byte TIPs until @bytes. */
static void fill(size_t bytes)
{
	for (unsigned i = 0; h.n < bytes && i < 100000; i++)
		px_insn(&h, RTIT_IC_INDIRECT_JMP, i & 1 ? 0x2200 : 0x1100, 2, i & 1 ? 0x1100 : 0x2200, true);
}

static uint64_t rd(uint32_t msr)
{
	uint64_t v;
	cr_assert_eq(rtit_pt_model_msr_read(&h.m, msr, &v, NULL), 0);
	return v;
}

Test(output, single_range_wraps)
{
	px_init(&h);
	px_start(&h);
	/* 4 KiB region at 0x101000, starting 16 bytes before its end. */
	px_msr(&h, RTIT_PT_MSR_OUTPUT_BASE, 0x101000);
	px_msr(&h, RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0xfffull | (0xff0ull << 32));
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	cr_assert_gt(h.n, 16);
	cr_expect_arr_eq(MEM(0x101ff0), h.out, 16);
	cr_expect_arr_eq(MEM(0x101000), h.out + 16, h.n - 16);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON & ~RTIT_PT_CTL_TRACE_EN);
	cr_expect_eq(rd(RTIT_PT_MSR_OUTPUT_MASK_PTRS) >> 32, h.n - 16);
}

Test(output, single_range_config_errors)
{
	px_init(&h);
	px_start(&h);
	/* A mask with a hole (33.2.7.1): operational error at enable. */
	px_msr(&h, RTIT_PT_MSR_OUTPUT_BASE, 0x101000);
	px_msr(&h, RTIT_PT_MSR_OUTPUT_MASK_PTRS, 0x1f7f);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	cr_expect_eq(h.n, 0);
	cr_expect(rd(RTIT_PT_MSR_STATUS) & RTIT_PT_STATUS_ERROR);
	cr_expect(!(rd(RTIT_PT_MSR_STATUS) & RTIT_PT_STATUS_TRIGGER_EN));
}

Test(output, topa_end_wraps_and_int)
{
	px_init(&h);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 0));
	entry(0x100000, 1, TOPA_REGION(0x102000, 0) | RTIT_PT_TOPA_INT);
	entry(0x100000, 2, 0x100000 | RTIT_PT_TOPA_END);
	start_topa(0x100000);
	fill(10000);
	/* Region 1 holds bytes [0, 4K) then was overwritten by [8K, n);
	 * region 2 holds [4K, 8K); one PMI (33.2.7.2 "ToPA PMI"). */
	cr_expect_arr_eq(MEM(0x102000), h.out + 4096, 4096);
	cr_expect_arr_eq(MEM(0x101000), h.out + 8192, h.n - 8192);
	cr_expect_eq(h.m.stats.topa_pmis, 1);
	px_msr(&h, RTIT_PT_MSR_CTL, (PT_CTL_ON | RTIT_PT_CTL_TOPA) & ~RTIT_PT_CTL_TRACE_EN);
	/* The pointers: table 0x100000, entry 0, offset n - 8K. */
	cr_expect_eq(rd(RTIT_PT_MSR_OUTPUT_BASE), 0x100000);
	cr_expect_eq(rd(RTIT_PT_MSR_OUTPUT_MASK_PTRS), ((uint64_t)(h.n - 8192) << 32) | 0x7f);
}

Test(output, topa_stop)
{
	px_init(&h);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 0) | RTIT_PT_TOPA_STOP | RTIT_PT_TOPA_INT);
	entry(0x100000, 1, 0x100000 | RTIT_PT_TOPA_END);
	start_topa(0x100000);
	fill(6000);
	/* Output ceases at the last byte of the region, mid-packet maybe; no
	 * TIP.PGD (33.2.7.2 "ToPA STOP"); STOP before INT. */
	cr_expect_eq(h.n, 4096);
	cr_expect_arr_eq(MEM(0x101000), h.out, 4096);
	cr_expect_eq(h.m.stats.topa_stops, 1);
	cr_expect_eq(h.m.stats.topa_pmis, 1);
	uint64_t st = rd(RTIT_PT_MSR_STATUS);
	cr_expect(st & RTIT_PT_STATUS_STOPPED);
	cr_expect(!(st & RTIT_PT_STATUS_TRIGGER_EN));
	px_msr(&h, RTIT_PT_MSR_CTL, (PT_CTL_ON | RTIT_PT_CTL_TOPA) & ~RTIT_PT_CTL_TRACE_EN);
	/* 33.2.7.2, D26: OutputOffset = size - 1, the entry index of the STOP entry. */
	cr_expect_eq(rd(RTIT_PT_MSR_OUTPUT_MASK_PTRS), (0xfffull << 32) | 0x7f);
}

Test(output, topa_chained_tables)
{
	px_init(&h);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 0));
	entry(0x100000, 1, 0x104000 | RTIT_PT_TOPA_END);
	entry(0x104000, 0, TOPA_REGION(0x106000, 1));	/* 8 KiB, 8K-aligned */
	entry(0x104000, 1, 0x100000 | RTIT_PT_TOPA_END);
	start_topa(0x100000);
	fill(7000);
	cr_expect_arr_eq(MEM(0x101000), h.out, 4096);
	cr_expect_arr_eq(MEM(0x106000), h.out + 4096, h.n - 4096);
	px_msr(&h, RTIT_PT_MSR_CTL, (PT_CTL_ON | RTIT_PT_CTL_TOPA) & ~RTIT_PT_CTL_TRACE_EN);
	cr_expect_eq(rd(RTIT_PT_MSR_OUTPUT_BASE), 0x104000);
	cr_expect_eq(rd(RTIT_PT_MSR_OUTPUT_MASK_PTRS), ((uint64_t)(h.n - 4096) << 32) | 0x7f);
}

Test(output, topa_errors)
{
	/* END with INT set is a reserved-bit violation (Table 33-3). */
	px_init(&h);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 0));
	entry(0x100000, 1, 0x100000 | RTIT_PT_TOPA_END | RTIT_PT_TOPA_INT);
	start_topa(0x100000);
	fill(5000);
	cr_expect_eq(h.n, 4096);
	cr_expect(rd(RTIT_PT_MSR_STATUS) & RTIT_PT_STATUS_ERROR);

	/* A region not aligned to its size: error when the entry is reached. */
	px_init(&h);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 1));
	entry(0x100000, 1, 0x100000 | RTIT_PT_TOPA_END);
	start_topa(0x100000);
	cr_expect_eq(h.n, 0);
	cr_expect(rd(RTIT_PT_MSR_STATUS) & RTIT_PT_STATUS_ERROR);

	/* OUTPUT_BASE bits 11:7 set: no #GP, an error at enable (Table 33-8). */
	px_init(&h);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 0));
	start_topa(0x100080);
	cr_expect_eq(h.n, 0);
	cr_expect(rd(RTIT_PT_MSR_STATUS) & RTIT_PT_STATUS_ERROR);
}

Test(output, topa_single_entry_profile)
{
	/* MENTRY=0: only one output entry, then END (33.2.7.2). */
	px_init(&h);
	rtit_pt_caps_profile(&h.p.caps, RTIT_PT_PROFILE_BASIC);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 0));
	entry(0x100000, 1, TOPA_REGION(0x102000, 0));
	start_topa(0x100000);
	fill(5000);
	cr_expect_eq(h.n, 4096);
	cr_expect(rd(RTIT_PT_MSR_STATUS) & RTIT_PT_STATUS_ERROR);
}

Test(output, disable_write_changing_scheme_saves_old_pointers)
{
	px_init(&h);
	px_start(&h);
	px_single_range(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON);
	px_op(&h, 0x1000, 2);
	size_t n = h.n;
	/* Clearing TraceEn and setting ToPA in one write: the FUP, TIP.PGD,
	 * the flush and the pointer write-back use the single-range scheme
	 * tracing ran with. */
	px_msr(&h, RTIT_PT_MSR_CTL, (PT_CTL_ON & ~RTIT_PT_CTL_TRACE_EN) | RTIT_PT_CTL_TOPA);
	px_expect(&h, n, 0x3d, 0x02, 0x10, 0x01);
	cr_expect_arr_eq(MEM(0x100000), h.out, h.n);
	cr_expect_eq(rd(RTIT_PT_MSR_OUTPUT_MASK_PTRS), ((uint64_t)h.n << 32) | 0xffff);
	cr_expect_eq(rd(RTIT_PT_MSR_CTL), (PT_CTL_ON & ~RTIT_PT_CTL_TRACE_EN) | RTIT_PT_CTL_TOPA);
}

Test(output, topa_int_pends_pmi_with_inject)
{
	px_init(&h);
	px_start(&h);
	entry(0x100000, 0, TOPA_REGION(0x101000, 0) | RTIT_PT_TOPA_INT);
	entry(0x100000, 1, 0x100000 | RTIT_PT_TOPA_END);
	px_msr(&h, RTIT_PT_MSR_OUTPUT_BASE, 0x100000);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_TOPA | RTIT_PT_CTL_INJECT_PSB_PMI);
	px_op(&h, 0x1000, 2);
	fill(4200);
	/* 33.2.7.2 "ToPA PMI": with InjectPsbPmiOnEnable, PendTopaPMI. */
	cr_expect_eq(h.m.stats.topa_pmis, 1);
	cr_expect(rd(RTIT_PT_MSR_STATUS) & RTIT_PT_STATUS_PEND_TOPA_PMI);
	cr_expect_arr_eq(MEM(0x101000), h.out + 4096, h.n - 4096);	/* wrapped */
}

Test(output, fabric_writes_no_memory)
{
	px_init(&h);
	h.p.caps.fabric = true;
	px_start(&h);
	px_msr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_FABRIC_EN);
	px_op(&h, 0x1000, 2);
	fill(300);
	/* FabricEn: the trace transport gets the bytes (Table 33-6 bit 6). */
	cr_expect_geq(h.n, 300);
	cr_expect_eq(h.mem_writes, 0);
	/* Without the capability FabricEn is reserved. */
	px_init(&h);
	px_start(&h);
	cr_expect_eq(px_wr(&h, RTIT_PT_MSR_CTL, PT_CTL_ON | RTIT_PT_CTL_FABRIC_EN), -1);
}
