/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * hist.h: log-linear latency histogram (see hist.c for the error bound).
 *
 * A value v (nanoseconds, any uint64_t) goes into one of HIST_NBUCKETS
 * fixed buckets: values below 2^HIST_SUB_BITS have a bucket each; above
 * that, every power-of-two range [2^e, 2^(e+1)) is split into
 * 2^HIST_SUB_BITS linear sub-buckets of width 2^(e - HIST_SUB_BITS).
 * Insertion is O(1): one count-leading-zeros, a shift and an add.
 */

#ifndef	_SDIO_HIST_H
#define	_SDIO_HIST_H

#include <stdint.h>
#include <stddef.h>

#define	HIST_SUB_BITS	7
#define	HIST_SUB	(1U << HIST_SUB_BITS)
/* Groups 0 .. 64 - HIST_SUB_BITS, each HIST_SUB buckets wide. */
#define	HIST_NBUCKETS	((64 - HIST_SUB_BITS + 1) * HIST_SUB)

/*
 * Relative error bound of hist_percentile() against the exact
 * nearest-rank percentile: 2^-(HIST_SUB_BITS + 1) (1/256 = 0.39%).
 */
#define	HIST_REL_ERROR	(1.0 / (double)(2U * HIST_SUB))

typedef struct hist {
	uint64_t	h_count;
	uint64_t	h_bucket[HIST_NBUCKETS];
} hist_t;

/*
 * Bucket index of v.  For v >= 2^k (k = HIST_SUB_BITS) with most
 * significant bit e, v >> (e - k) lies in [2^k, 2^(k+1)), so the index
 * ((e - k) << k) + (v >> (e - k)) lies in [(e - k + 1) * 2^k,
 * (e - k + 2) * 2^k): group e - k + 1, sub-bucket given by the k bits
 * below the leading one.  For e = k it equals v, so small values and the
 * first group join without a gap.
 */
static inline unsigned int
hist_index(uint64_t v)
{
	unsigned int e, shift;

	if (v < HIST_SUB)
		return ((unsigned int)v);
	e = 63U - (unsigned int)__builtin_clzll(v);
	shift = e - HIST_SUB_BITS;
	return ((shift << HIST_SUB_BITS) + (unsigned int)(v >> shift));
}

static inline void
hist_add(hist_t *h, uint64_t v)
{
	h->h_bucket[hist_index(v)]++;
	h->h_count++;
}

extern hist_t *hist_alloc(void);
extern void hist_free(hist_t *);
extern void hist_reset(hist_t *);
extern void hist_merge(hist_t *, const hist_t *);
extern void hist_bounds(unsigned int, uint64_t *, uint64_t *);
extern uint64_t hist_percentile(const hist_t *, uint32_t, uint64_t,
    uint64_t);

#endif	/* _SDIO_HIST_H */
