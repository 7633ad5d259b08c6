/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * hist.c: log-linear latency histogram and its percentile estimate.
 *
 * Layout.  Let k = HIST_SUB_BITS (7).  Values 0 .. 2^k - 1 have a bucket
 * each.  A value v >= 2^k whose most significant bit is e (2^e <= v <
 * 2^(e+1), k <= e <= 63) goes into the bucket of width w = 2^(e - k)
 * that contains it; there are 2^k such buckets per power of two, so
 * every uint64_t value has a bucket and none is clamped.  That is
 * (64 - k + 1) * 2^k = 7424 buckets, 58 KiB of counters.
 *
 * Estimate.  hist_percentile(h, ppm, min, max) returns an estimate of the
 * nearest-rank percentile p = ppm / 10^4 (ppm: parts per million, so
 * 99.9% is 999000): with n values sorted ascending as x_1 <= ... <= x_n
 * and r = max(1, ceil(ppm * n / 10^6)), computed in integers, the exact
 * percentile is x_r.
 * The histogram walks its buckets in value order, accumulating counts,
 * and stops at the first bucket B = [lo, hi] (integers, hi inclusive)
 * whose cumulative count reaches r.  It returns the midpoint
 * m = lo + (hi - lo) / 2 (integer division), clamped to [min, max], the
 * smallest and largest value inserted.
 *
 * Claim.  |m - x_r| <= x_r / 2^(k+1) and |m - x_r| <= m / 2^(k+1), i.e.
 * the relative error is at most 2^-(k+1) = 1/256 < 0.4%.
 *
 * Proof.  Buckets partition the integers in increasing order, so exactly
 * the values in buckets before B number fewer than r and those up to and
 * including B number at least r: x_r lies in B, lo <= x_r <= hi.
 * (1) If B is a unit bucket (v < 2^(k+1), width 1), m = lo = hi = x_r and
 * the error is 0.  (2) Otherwise B lies in [2^e, 2^(e+1)) with e > k, has
 * width w = hi - lo + 1 = 2^(e-k) and lo >= 2^e.  The midpoint satisfies
 * m - lo = floor((w - 1) / 2) and hi - m = ceil((w - 1) / 2), both
 * <= w / 2, hence |m - x_r| <= w / 2 = 2^(e-k-1).  Since x_r >= lo >= 2^e
 * and m >= lo >= 2^e, dividing gives both bounds 2^(e-k-1) / 2^e =
 * 2^-(k+1).  (3) Clamping to [min, max] keeps the bound: x_r itself lies
 * in [min, max], so clamping m into that interval moves it towards x_r
 * and cannot increase |m - x_r|; the clamped m is still >= lo.  QED.
 *
 * The same histogram (same bound) serves the whole-run summary and every
 * interval: interval histograms are merged into a per-interval slot and
 * freed as soon as every thread has moved past the interval (run.c), so
 * only the intervals still in flight hold one.
 *
 * Mean and variance are not taken from the histogram; they are exact
 * (Welford, stats.h).
 */

#include <stdlib.h>
#include <string.h>

#include "hist.h"

hist_t *
hist_alloc(void)
{
	return (calloc(1, sizeof (hist_t)));
}

void
hist_free(hist_t *h)
{
	free(h);
}

void
hist_reset(hist_t *h)
{
	(void) memset(h, 0, sizeof (*h));
}

void
hist_merge(hist_t *dst, const hist_t *src)
{
	unsigned int i;

	if (src->h_count == 0)
		return;
	for (i = 0; i < HIST_NBUCKETS; i++)
		dst->h_bucket[i] += src->h_bucket[i];
	dst->h_count += src->h_count;
}

/*
 * Smallest and largest value of bucket idx: the inverse of hist_index().
 * Index i >= 2^k is group g = i >> k (g >= 1) with shift g - 1 and
 * mantissa i - (g - 1) * 2^k in [2^k, 2^(k+1)).
 */
void
hist_bounds(unsigned int idx, uint64_t *lo, uint64_t *hi)
{
	unsigned int shift;
	uint64_t mant;

	if (idx < HIST_SUB) {
		*lo = *hi = idx;
		return;
	}
	shift = (idx >> HIST_SUB_BITS) - 1;
	mant = (uint64_t)idx - ((uint64_t)shift << HIST_SUB_BITS);
	*lo = mant << shift;
	*hi = *lo + (((uint64_t)1 << shift) - 1);
}

uint64_t
hist_percentile(const hist_t *h, uint32_t ppm, uint64_t min, uint64_t max)
{
	uint64_t n, rank, cum, lo, hi, m;
	unsigned int i;

	n = h->h_count;
	if (n == 0)
		return (0);
	/*
	 * Nearest rank ceil(ppm * n / 10^6) in integers, split so that no
	 * product overflows: n = q * 10^6 + rem.
	 */
	rank = (uint64_t)ppm * (n / 1000000) +
	    ((uint64_t)ppm * (n % 1000000) + 999999) / 1000000;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;

	cum = 0;
	for (i = 0; i < HIST_NBUCKETS - 1; i++) {
		cum += h->h_bucket[i];
		if (cum >= rank)
			break;
	}
	hist_bounds(i, &lo, &hi);
	m = lo + (hi - lo) / 2;
	if (m < min)
		m = min;
	if (m > max)
		m = max;
	return (m);
}
