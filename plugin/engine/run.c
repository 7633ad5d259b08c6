/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * run.c: the measuring loop.  qd worker threads, each doing synchronous
 * I/O through the backend's ops table, one clock read per completed I/O.
 *
 * Timing.  The target is open and every buffer allocated before the
 * clock starts.  The threads wait at a gate; the main thread reads t0,
 * sets the deadline and opens the gate.  Each thread reads the clock once
 * when it starts and once after every I/O (and its flush, with --flush
 * each): the completion time of I/O k is the start time of I/O k + 1, so
 * the latencies of a thread add up to its busy time exactly.
 *
 * Statistics without locks on the I/O path.  A thread accumulates its
 * current interval privately (histogram, Welford mean/variance, min,
 * max, count).  Only when a completion falls past the interval's end, or
 * past the deadline, does it take the run's mutex, merge the accumulator
 * into the global slot of that interval and into the run summary (Chan's
 * combination, stats.h), and start the next one.  An I/O belongs to the
 * interval in which it completes; with a time limit, completions at or
 * after the deadline count in the last interval, so no sliver interval
 * appears after it.  A slot is complete once every thread has moved past
 * it; complete slots get their percentiles computed and their histogram
 * freed (so memory stays bounded on long runs), and --stable is judged
 * on them.  The per-I/O cost is: the I/O, one clock read, a histogram
 * increment, a Welford step, a compare against the next boundary, a
 * countdown and a relaxed load of the stop flag (a plain load; no atomic
 * read-modify-write on the I/O path).
 *
 * Offsets.  Block b is the byte range [b * bs + offset, (b + 1) * bs +
 * offset), 0 <= b < region / bs.  seq: thread i starts at block
 * i * nblocks / qd and walks forward, wrapping at nblocks, so qd > 1 makes
 * qd spread-out sequential streams.  rand: b is drawn uniformly from
 * [0, nblocks) with splitmix64, seeded per thread from --seed and the
 * thread index (same seed, same offsets).
 */

#include "sdio.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "stats.h"

typedef struct ival_slot {
	welford_t	is_w;
	hist_t		*is_h;		/* NULL when empty or finished */
	sdio_ival_t	is_out;		/* valid once finished */
} ival_slot_t;

struct run;

typedef struct worker {
	struct run	*w_run;
	unsigned int	w_id;
	pthread_t	w_tid;
	void		*w_buf;
	uint64_t	w_quota;	/* I/Os left; UINT64_MAX: no limit */
	uint64_t	w_rng;
	uint64_t	w_blk;
	uint64_t	w_cur;		/* interval index; UINT64_MAX: done */
	uint64_t	w_check_at;	/* next boundary or the deadline */
	uint64_t	w_last;		/* time of the last completion */
	uint64_t	w_total;	/* I/Os merged so far */
	sdio_stop_t	w_why;
	welford_t	w_acc;		/* the current interval */
	hist_t		*w_hist;
	/*
	 * Workers sit side by side in one array and write w_acc and w_rng
	 * on every I/O: keep two workers' fields off a shared cache line
	 * (and its prefetched neighbour).
	 */
	char		w_pad[128];
} worker_t;

typedef struct run {
	const sdio_opts_t *r_opts;
	const sdio_ops_t *r_ops;
	sdio_dev_t	*r_dev;
	uint64_t	r_nblocks;
	uint64_t	r_ival_ns;	/* 0: one interval for the run */
	uint64_t	r_nmax;		/* intervals allowed by the deadline */
	uint64_t	r_t0;
	uint64_t	r_deadline;	/* absolute; UINT64_MAX: none */

	pthread_mutex_t	r_lock;
	pthread_cond_t	r_gate_cv;
	int		r_gate_open;
	int		r_stop;		/* read relaxed on the I/O path */
	int		r_stable;
	int		r_oom;

	hist_t		*r_sum_h;
	welford_t	r_sum_w;
	ival_slot_t	*r_iv;
	uint64_t	r_niv;
	uint64_t	r_ivcap;
	uint64_t	r_complete;	/* slots [0, r_complete) finished */

	worker_t	*r_w;
	unsigned int	r_nw;
	sdio_err_t	*r_errs;
	unsigned int	r_nerrs;
} run_t;

static void
stop_all(run_t *r)
{
	__atomic_store_n(&r->r_stop, 1, __ATOMIC_RELAXED);
}

/* Make slot idx exist.  Called with r_lock held. */
static int
slot_reserve(run_t *r, uint64_t idx)
{
	ival_slot_t *n;
	uint64_t cap, i;

	if (idx < r->r_niv)
		return (0);
	if (idx >= r->r_ivcap) {
		cap = r->r_ivcap == 0 ? 64 : r->r_ivcap;
		while (cap <= idx)
			cap *= 2;
		n = realloc(r->r_iv, cap * sizeof (ival_slot_t));
		if (n == NULL)
			return (-1);
		r->r_iv = n;
		r->r_ivcap = cap;
	}
	for (i = r->r_niv; i <= idx; i++) {
		(void) memset(&r->r_iv[i], 0, sizeof (ival_slot_t));
		welford_reset(&r->r_iv[i].is_w);
	}
	r->r_niv = idx + 1;
	return (0);
}

/* Percentiles of a finished slot; frees its histogram. */
static void
slot_finish(run_t *r, uint64_t idx)
{
	ival_slot_t *s = &r->r_iv[idx];
	sdio_ival_t *o = &s->is_out;
	uint64_t min = welford_min(&s->is_w), max = s->is_w.w_max;

	o->iv_start_ns = idx * r->r_ival_ns;
	o->iv_end_ns = (idx + 1) * r->r_ival_ns;
	o->iv_ios = s->is_w.w_n;
	o->iv_mean = s->is_w.w_mean;
	o->iv_stddev = welford_stddev(&s->is_w);
	o->iv_min = min;
	o->iv_max = max;
	if (s->is_h != NULL) {
		o->iv_p50 = hist_percentile(s->is_h, 500000, min, max);
		o->iv_p90 = hist_percentile(s->is_h, 900000, min, max);
		o->iv_p99 = hist_percentile(s->is_h, 990000, min, max);
		hist_free(s->is_h);
		s->is_h = NULL;
	}
}

/*
 * --stable REL --min-intervals N: the relative standard error of the
 * mean IOPS over the last N finished intervals, s / sqrt(N) / mean with
 * s the sample standard deviation, is at most REL.  All intervals
 * finished during the run have the full length, so IOPS is proportional
 * to the I/O count and the counts are compared directly.
 */
static int
is_stable(const run_t *r)
{
	uint64_t n = r->r_opts->op_min_intervals, i;
	welford_t w;
	double se;

	if (r->r_complete < n || n < 2)
		return (0);
	welford_reset(&w);
	for (i = r->r_complete - n; i < r->r_complete; i++)
		welford_add(&w, r->r_iv[i].is_out.iv_ios);
	if (w.w_mean <= 0.0)
		return (0);
	se = welford_stddev(&w) / stats_sqrt((double)n);
	return (se <= r->r_opts->op_stable_rel * w.w_mean);
}

/* Finish every slot all threads have left.  Called with r_lock held. */
static void
advance(run_t *r)
{
	uint64_t lo = UINT64_MAX;
	unsigned int i;
	int any = 0;

	for (i = 0; i < r->r_nw; i++)
		if (r->r_w[i].w_cur < lo)
			lo = r->r_w[i].w_cur;
	while (r->r_complete < lo && r->r_complete < r->r_niv) {
		slot_finish(r, r->r_complete);
		r->r_complete++;
		any = 1;
	}
	if (any && r->r_opts->op_stable_rel > 0.0 && r->r_ival_ns > 0 &&
	    !r->r_stable && is_stable(r)) {
		r->r_stable = 1;
		stop_all(r);
	}
}

/*
 * Merge the thread's accumulator into slot w_cur and the summary, then
 * move the thread to interval next (UINT64_MAX when it is done).
 */
static void
worker_flush(worker_t *w, uint64_t next)
{
	run_t *r = w->w_run;
	ival_slot_t *s;

	(void) pthread_mutex_lock(&r->r_lock);
	if (w->w_acc.w_n > 0) {
		if (slot_reserve(r, w->w_cur) != 0) {
			r->r_oom = 1;
			stop_all(r);
		} else {
			s = &r->r_iv[w->w_cur];
			welford_merge(&s->is_w, &w->w_acc);
			if (s->is_h == NULL)
				s->is_h = hist_alloc();
			if (s->is_h == NULL) {
				r->r_oom = 1;
				stop_all(r);
			} else {
				hist_merge(s->is_h, w->w_hist);
			}
		}
		welford_merge(&r->r_sum_w, &w->w_acc);
		hist_merge(r->r_sum_h, w->w_hist);
		w->w_total += w->w_acc.w_n;
		welford_reset(&w->w_acc);
		hist_reset(w->w_hist);
	}
	if (next != UINT64_MAX && slot_reserve(r, next) != 0) {
		r->r_oom = 1;
		stop_all(r);
	}
	w->w_cur = next;
	advance(r);
	(void) pthread_mutex_unlock(&r->r_lock);
}

/*
 * A completion at time `end` reached w_check_at: change interval and/or
 * notice the deadline.  Returns 1 when the thread must stop after
 * accounting this I/O.
 */
static int
worker_slow(worker_t *w, uint64_t end)
{
	run_t *r = w->w_run;
	uint64_t idx = 0, next;
	int last = end >= r->r_deadline;

	if (r->r_ival_ns > 0) {
		idx = (end - r->r_t0) / r->r_ival_ns;
		if (idx >= r->r_nmax)
			idx = r->r_nmax - 1;
	}
	if (idx != w->w_cur)
		worker_flush(w, idx);
	w->w_check_at = r->r_deadline;
	if (r->r_ival_ns > 0 && idx + 1 < r->r_nmax) {
		next = r->r_t0 + (idx + 1) * r->r_ival_ns;
		if (next < w->w_check_at)
			w->w_check_at = next;
	}
	return (last);
}

static void
record_error(worker_t *w, int op, uint64_t off, int err)
{
	run_t *r = w->w_run;
	sdio_err_t *e;

	(void) pthread_mutex_lock(&r->r_lock);
	if (r->r_nerrs < r->r_nw) {
		e = &r->r_errs[r->r_nerrs++];
		e->e_op = op;
		e->e_errno = err;
		e->e_offset = off;
	}
	stop_all(r);
	(void) pthread_mutex_unlock(&r->r_lock);
}

static void *
worker_main(void *arg)
{
	worker_t *w = arg;
	run_t *r = w->w_run;
	const sdio_opts_t *o = r->r_opts;
	int (*io)(sdio_dev_t *, void *, size_t, uint64_t, int) =
	    r->r_ops->o_io;
	int (*flush)(sdio_dev_t *) = r->r_ops->o_flush;
	sdio_dev_t *dev = r->r_dev;
	void *buf = w->w_buf;
	hist_t *h = w->w_hist;
	size_t bs = (size_t)o->op_bs;
	uint64_t base = o->op_offset, nblocks = r->r_nblocks;
	uint64_t quota, blk = w->w_blk, rng = w->w_rng, start, end, off, lat;
	int dir = o->op_write ? SDIO_IO_WRITE : SDIO_IO_READ;
	int rnd = o->op_pattern == PAT_RAND;
	int flush_each = o->op_write && o->op_flush == FLUSH_EACH;
	int err, last = 0;

	(void) pthread_mutex_lock(&r->r_lock);
	while (!r->r_gate_open)
		(void) pthread_cond_wait(&r->r_gate_cv, &r->r_lock);
	w->w_last = r->r_t0;
	w->w_check_at = r->r_t0;	/* first completion sets it right */
	quota = w->w_quota;		/* zeroed when thread creation failed */
	(void) pthread_mutex_unlock(&r->r_lock);

	w->w_why = STOP_IOS;
	if (quota == 0)
		goto done;
	start = sdio_now();
	for (;;) {
		if (rnd)
			blk = scale64(splitmix64(&rng), nblocks);
		off = blk * bs + base;
		if ((err = io(dev, buf, bs, off, dir)) != 0) {
			record_error(w, dir == SDIO_IO_WRITE ? SDIO_OP_WRITE :
			    SDIO_OP_READ, off, err);
			w->w_why = STOP_ERROR;
			break;
		}
		if (flush_each && (err = flush(dev)) != 0) {
			record_error(w, SDIO_OP_FLUSH, off, err);
			w->w_why = STOP_ERROR;
			break;
		}
		end = sdio_now();
		if (end >= w->w_check_at)
			last = worker_slow(w, end);
		lat = end - start;
		start = end;
		hist_add(h, lat);
		welford_add(&w->w_acc, lat);
		if (!rnd && ++blk == nblocks)
			blk = 0;
		if (last) {
			w->w_why = STOP_TIME;
			break;
		}
		if (--quota == 0)
			break;
		if (__atomic_load_n(&r->r_stop, __ATOMIC_RELAXED)) {
			w->w_why = STOP_STABLE;
			break;
		}
	}
	w->w_last = start;
done:
	worker_flush(w, UINT64_MAX);
	return (NULL);
}

static void
run_free(run_t *r)
{
	unsigned int i;
	uint64_t j;

	for (i = 0; r->r_w != NULL && i < r->r_nw; i++) {
		free(r->r_w[i].w_buf);
		hist_free(r->r_w[i].w_hist);
	}
	for (j = 0; j < r->r_niv; j++)
		hist_free(r->r_iv[j].is_h);
	free(r->r_iv);
	free(r->r_w);
	hist_free(r->r_sum_h);
	(void) pthread_mutex_destroy(&r->r_lock);
	(void) pthread_cond_destroy(&r->r_gate_cv);
}

/*
 * Fill a buffer with the --fill byte or with bytes from the seed (also
 * sdio paired's buffer, so both modes write the same kind of data).
 */
void
sdio_fill_buffer(uint8_t *b, size_t n, int fill, uint64_t seed)
{
	uint64_t s = seed ^ 0x5bd1e9955bd1e995ULL, x = 0;
	size_t i;

	if (fill >= 0) {
		(void) memset(b, fill, n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			x = splitmix64(&s);
		b[i] = (uint8_t)(x >> (8 * (i % 8)));
	}
}

/*
 * Run the workload described by o on the open device d.  Returns 0 with
 * res filled in (res->r_errs non-empty after an I/O error), or
 * SDIO_EXIT_SETUP with a message in msg.
 */
int
sdio_run(const sdio_opts_t *o, sdio_dev_t *d, sdio_result_t *res,
    char *msg, size_t msglen)
{
	run_t r;
	worker_t *w;
	sdio_ival_t *iv;
	uint64_t time_ns, last, q, rem, j;
	unsigned int i, started = 0;
	int rc = 0;

	(void) memset(&r, 0, sizeof (r));
	(void) memset(res, 0, sizeof (*res));
	r.r_opts = o;
	r.r_ops = o->op_backend;
	r.r_dev = d;
	r.r_nblocks = o->op_region / o->op_bs;
	r.r_nw = o->op_qd;
	/* Rounded, so that 0.3 s is 300000000 ns and not one less. */
	r.r_ival_ns = (uint64_t)(o->op_interval_s * 1e9 + 0.5);
	r.r_nmax = UINT64_MAX;
	time_ns = (uint64_t)(o->op_time_s * 1e9 + 0.5);
	if (time_ns > 0 && r.r_ival_ns > 0)
		r.r_nmax = (time_ns + r.r_ival_ns - 1) / r.r_ival_ns;
	welford_reset(&r.r_sum_w);
	(void) pthread_mutex_init(&r.r_lock, NULL);
	(void) pthread_cond_init(&r.r_gate_cv, NULL);

	r.r_sum_h = hist_alloc();
	r.r_w = calloc(r.r_nw, sizeof (worker_t));
	r.r_errs = calloc(r.r_nw, sizeof (sdio_err_t));
	if (r.r_sum_h == NULL || r.r_w == NULL || r.r_errs == NULL ||
	    slot_reserve(&r, 0) != 0) {
		(void) snprintf(msg, msglen, "out of memory");
		free(r.r_errs);
		run_free(&r);
		return (SDIO_EXIT_SETUP);
	}

	/* Everything the threads touch is allocated before the clock. */
	q = o->op_max_ios / r.r_nw;
	rem = o->op_max_ios % r.r_nw;
	for (i = 0; i < r.r_nw; i++) {
		w = &r.r_w[i];
		w->w_run = &r;
		w->w_id = i;
		w->w_quota = o->op_max_ios == 0 ? UINT64_MAX :
		    q + (i < rem ? 1 : 0);
		w->w_rng = o->op_seed ^ (0xd1b54a32d192ed03ULL * (i + 1));
		w->w_blk = (uint64_t)i * r.r_nblocks / r.r_nw;
		w->w_cur = 0;
		welford_reset(&w->w_acc);
		w->w_hist = hist_alloc();
		rc = posix_memalign(&w->w_buf, 4096, (size_t)o->op_bs);
		if (rc != 0 || w->w_hist == NULL) {
			w->w_buf = rc != 0 ? NULL : w->w_buf;
			(void) snprintf(msg, msglen, "cannot allocate a "
			    "%llu-byte buffer: %s",
			    (unsigned long long)o->op_bs,
			    strerror(rc != 0 ? rc : ENOMEM));
			free(r.r_errs);
			run_free(&r);
			return (SDIO_EXIT_SETUP);
		}
		sdio_fill_buffer(w->w_buf, (size_t)o->op_bs, o->op_fill,
		    o->op_seed + i);
	}

	for (i = 0; i < r.r_nw; i++) {
		rc = pthread_create(&r.r_w[i].w_tid, NULL, worker_main,
		    &r.r_w[i]);
		if (rc != 0)
			break;
		started++;
	}
	(void) pthread_mutex_lock(&r.r_lock);
	if (started < r.r_nw) {
		/* Release the started threads with nothing to do. */
		for (i = 0; i < r.r_nw; i++)
			r.r_w[i].w_quota = 0;
		for (i = started; i < r.r_nw; i++)
			r.r_w[i].w_cur = UINT64_MAX;
	}
	r.r_t0 = sdio_now();
	r.r_deadline = time_ns > 0 ? r.r_t0 + time_ns : UINT64_MAX;
	r.r_gate_open = 1;
	(void) pthread_cond_broadcast(&r.r_gate_cv);
	(void) pthread_mutex_unlock(&r.r_lock);
	for (i = 0; i < started; i++)
		(void) pthread_join(r.r_w[i].w_tid, NULL);
	if (started < r.r_nw) {
		(void) snprintf(msg, msglen, "cannot create thread %u: %s",
		    started, strerror(rc));
		free(r.r_errs);
		run_free(&r);
		return (SDIO_EXIT_SETUP);
	}
	if (r.r_oom) {
		(void) snprintf(msg, msglen, "out of memory during the run");
		free(r.r_errs);
		run_free(&r);
		return (SDIO_EXIT_SETUP);
	}

	/* Summary. */
	last = r.r_t0;
	for (i = 0; i < r.r_nw; i++)
		if (r.r_w[i].w_last > last)
			last = r.r_w[i].w_last;
	res->r_elapsed_ns = last - r.r_t0;
	res->r_ios = r.r_sum_w.w_n;
	res->r_mean = r.r_sum_w.w_mean;
	res->r_stddev = welford_stddev(&r.r_sum_w);
	res->r_min = welford_min(&r.r_sum_w);
	res->r_max = r.r_sum_w.w_max;
	res->r_p50 = hist_percentile(r.r_sum_h, 500000, res->r_min,
	    res->r_max);
	res->r_p90 = hist_percentile(r.r_sum_h, 900000, res->r_min,
	    res->r_max);
	res->r_p99 = hist_percentile(r.r_sum_h, 990000, res->r_min,
	    res->r_max);
	res->r_p99_9 = hist_percentile(r.r_sum_h, 999000, res->r_min,
	    res->r_max);

	/*
	 * Intervals: every slot up to the last one with a completion.  The
	 * last one ends at the last completion, which lies in it.  Without
	 * --interval, none are listed.
	 */
	while (r.r_niv > 0 && r.r_iv[r.r_niv - 1].is_w.w_n == 0)
		r.r_niv--;
	for (j = r.r_complete; j < r.r_niv; j++)
		slot_finish(&r, j);
	if (r.r_ival_ns > 0 && r.r_niv > 0) {
		res->r_ivals = calloc(r.r_niv, sizeof (sdio_ival_t));
		if (res->r_ivals == NULL) {
			(void) snprintf(msg, msglen, "out of memory");
			free(r.r_errs);
			run_free(&r);
			return (SDIO_EXIT_SETUP);
		}
		for (j = 0; j < r.r_niv; j++)
			res->r_ivals[j] = r.r_iv[j].is_out;
		res->r_nivals = r.r_niv;
		iv = &res->r_ivals[r.r_niv - 1];
		iv->iv_end_ns = res->r_elapsed_ns > iv->iv_start_ns ?
		    res->r_elapsed_ns : iv->iv_start_ns;
	}

	res->r_threads = calloc(r.r_nw, sizeof (uint64_t));
	if (res->r_threads != NULL) {
		for (i = 0; i < r.r_nw; i++)
			res->r_threads[i] = r.r_w[i].w_total;
		res->r_nthreads = r.r_nw;
	}

	res->r_errs = r.r_errs;
	res->r_nerrs = r.r_nerrs;
	if (r.r_nerrs > 0) {
		res->r_stopped = STOP_ERROR;
	} else if (r.r_stable) {
		res->r_stopped = STOP_STABLE;
	} else {
		res->r_stopped = STOP_IOS;
		for (i = 0; i < r.r_nw; i++)
			if (r.r_w[i].w_why == STOP_TIME)
				res->r_stopped = STOP_TIME;
	}
	run_free(&r);
	return (0);
}
