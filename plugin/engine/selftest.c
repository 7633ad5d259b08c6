/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * selftest.c: hidden test modes, for tests/engine to check the engine's
 * statistics against exact values computed in Python, without a device.
 * Here: --selftest-hist (the histogram, its documented error bound and
 * the merging of per-thread accumulators, as run.c does).  The other,
 * --selftest-median, lives in paired.c beside the slice statistics it
 * exercises, which are private to that file.
 */

#include "sdio.h"

#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "stats.h"

/*
 * Hidden test mode: sdio --selftest-hist [--split N] [PPM ...] reads
 * unsigned integers from stdin, spreads them round-robin over N
 * accumulators (as over N threads), merges them the way a run does and
 * prints count, min, max, mean, stddev, the documented relative error
 * bound and the requested percentiles (PPM: parts per million; default
 * 50%, 90%, 99%, 99.9%).  The tests compare against exact values.
 */
int
sdio_selftest_hist(int argc, char **argv)
{
	static const uint32_t defppm[] = { 500000, 900000, 990000, 999000 };
	uint32_t ppm[64];
	unsigned int nppm = 0, nsplit = 1, i, k;
	unsigned long long v;
	hist_t *h[64], *all;
	welford_t w[64], sum;
	uint64_t u, n = 0;

	for (i = 0; i < (unsigned int)argc; i++) {
		if (strcmp(argv[i], "--split") == 0 && i + 1 <
		    (unsigned int)argc) {
			if (sdio_parse_u64(argv[++i], &u) != 0 || u < 1 ||
			    u > 64)
				return (SDIO_EXIT_USAGE);
			nsplit = (unsigned int)u;
		} else if (sdio_parse_u64(argv[i], &u) == 0 &&
		    u <= 1000000 && nppm < 64) {
			ppm[nppm++] = (uint32_t)u;
		} else {
			return (SDIO_EXIT_USAGE);
		}
	}
	if (nppm == 0) {
		for (i = 0; i < 4; i++)
			ppm[i] = defppm[i];
		nppm = 4;
	}
	if ((all = hist_alloc()) == NULL)
		return (SDIO_EXIT_SETUP);
	welford_reset(&sum);
	for (k = 0; k < nsplit; k++) {
		if ((h[k] = hist_alloc()) == NULL)
			return (SDIO_EXIT_SETUP);
		welford_reset(&w[k]);
	}
	while (scanf("%llu", &v) == 1) {
		k = (unsigned int)(n++ % nsplit);
		hist_add(h[k], (uint64_t)v);
		welford_add(&w[k], (uint64_t)v);
	}
	for (k = 0; k < nsplit; k++) {
		hist_merge(all, h[k]);
		welford_merge(&sum, &w[k]);
		hist_free(h[k]);
	}
	(void) printf("{\"count\": %llu, \"min\": %llu, \"max\": %llu, "
	    "\"mean\": %.17g, \"stddev\": %.17g, \"rel_error_bound\": %.17g, "
	    "\"percentiles\": [", (unsigned long long)sum.w_n,
	    (unsigned long long)welford_min(&sum),
	    (unsigned long long)sum.w_max, sum.w_mean, welford_stddev(&sum),
	    HIST_REL_ERROR);
	for (i = 0; i < nppm; i++)
		(void) printf("%s{\"ppm\": %u, \"value\": %llu}",
		    i == 0 ? "" : ", ", ppm[i],
		    (unsigned long long)hist_percentile(all, ppm[i],
		    welford_min(&sum), sum.w_max));
	(void) printf("]}\n");
	hist_free(all);
	return (SDIO_EXIT_OK);
}
