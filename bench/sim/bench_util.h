/*
 * bench_util.h - what bench_sim and bench_store share: the clock and the
 * consumer that only counts records.
 */
#ifndef BENCH_SIM_UTIL_H
#define BENCH_SIM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "rtit/sim.h"

/* CPU time of the process (Unicorn runs in the calling thread): the
 * machine is shared, and wall time counts the waits for a core. */
static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A consumer that counts the records (opaque: a size_t). */
static inline void sink(const struct rtit_sim_rec *recs, size_t n, void *opaque)
{
	(void)recs;
	*(size_t *)opaque += n;
}

/* A simulator with the default configuration but precise_faults, its
 * records counted in *count.  0 or < 0. */
static inline int bench_sim_new(struct rtit_sim **sim, bool precise, size_t *count)
{
	struct rtit_sim_config cfg;
	rtit_sim_config_default(&cfg);
	cfg.precise_faults = precise;
	cfg.consumer.on_batch = sink;
	cfg.consumer.opaque = count;
	return rtit_sim_new(sim, &cfg);
}

#endif
