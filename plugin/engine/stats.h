/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * stats.h: running mean and variance (Welford), the parallel combination
 * of two partial results (Chan, Golub and LeVeque), and min/max.
 *
 * Welford's update keeps mean and M2 = sum (x - mean)^2 without the
 * cancellation of the textbook sum-of-squares formula, which matters
 * here: latencies are ~10^3..10^6 ns and their squares summed over
 * 10^8 I/Os lose every significant digit of the variance in a double.
 * Two partial results (n_a, mean_a, M2_a) and (n_b, mean_b, M2_b)
 * combine exactly as
 *	n = n_a + n_b, d = mean_b - mean_a,
 *	mean = mean_a + d * n_b / n,
 *	M2 = M2_a + M2_b + d^2 * n_a * n_b / n.
 */

#ifndef	_SDIO_STATS_H
#define	_SDIO_STATS_H

#include <stdint.h>

typedef struct welford {
	uint64_t	w_n;
	double		w_mean;
	double		w_m2;
	uint64_t	w_min;
	uint64_t	w_max;
} welford_t;

static inline void
welford_reset(welford_t *w)
{
	w->w_n = 0;
	w->w_mean = 0.0;
	w->w_m2 = 0.0;
	w->w_min = UINT64_MAX;
	w->w_max = 0;
}

static inline void
welford_add(welford_t *w, uint64_t v)
{
	double x = (double)v;
	double d = x - w->w_mean;

	w->w_n++;
	w->w_mean += d / (double)w->w_n;
	w->w_m2 += d * (x - w->w_mean);
	if (v < w->w_min)
		w->w_min = v;
	if (v > w->w_max)
		w->w_max = v;
}

static inline void
welford_merge(welford_t *a, const welford_t *b)
{
	double na, nb, n, d;

	if (b->w_n == 0)
		return;
	if (a->w_n == 0) {
		*a = *b;
		return;
	}
	na = (double)a->w_n;
	nb = (double)b->w_n;
	n = na + nb;
	d = b->w_mean - a->w_mean;
	a->w_mean += d * nb / n;
	a->w_m2 += b->w_m2 + d * d * na * nb / n;
	a->w_n += b->w_n;
	if (b->w_min < a->w_min)
		a->w_min = b->w_min;
	if (b->w_max > a->w_max)
		a->w_max = b->w_max;
}

/*
 * Square root by Newton's iteration, so that the engine needs no libm
 * (libc and pthreads only).  Started at or above the root, the iterates
 * decrease monotonically towards it; the first one that does not
 * decrease is the correctly rounded root or one ulp from it.
 */
static inline double
stats_sqrt(double x)
{
	double r, nr;
	int i;

	if (!(x > 0.0))
		return (0.0);
	r = x > 1.0 ? x : 1.0;
	for (i = 0; i < 2100; i++) {
		nr = 0.5 * (r + x / r);
		if (nr >= r)
			break;
		r = nr;
	}
	return (r);
}

/* Sample standard deviation (divide by n - 1), as fio reports it. */
static inline double
welford_stddev(const welford_t *w)
{
	if (w->w_n < 2 || w->w_m2 <= 0.0)
		return (0.0);
	return (stats_sqrt(w->w_m2 / (double)(w->w_n - 1)));
}

static inline uint64_t
welford_min(const welford_t *w)
{
	return (w->w_n == 0 ? 0 : w->w_min);
}

#endif	/* _SDIO_STATS_H */
