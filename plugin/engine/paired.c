/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * paired.c: `sdio paired`, interleaved and paired measurement.
 *
 *	sdio paired [--backend sync|null] [--direct] [--seed N]
 *	    [--region BYTES] [--rounds N] [--warmup-rounds N]
 *	    [--slice SECONDS] [--min-ios N] [--time SECONDS] [--json]
 *	    --arm SPEC [--arm SPEC ...] TARGET
 *
 * Why.  sdtune decides a drive's native page size and cache kind by
 * comparing the per-I/O costs of a few workloads ("arms": 512 B against
 * 4 KiB writes, aligned against misaligned 4 KiB, write against
 * write+flush).  Measured one after another, drift (garbage collection,
 * a filling cache, heat) and machine load hit each differently, and the
 * comparison would measure them.  Here every arm runs in every round, one
 * slice each, in one thread of one process, so what disturbs a round
 * disturbs all its arms alike; the caller compares arms within a round
 * (paired), and this program reports per-round, per-arm figures.
 *
 * Rounds.  --warmup-rounds rounds first, measured the same way and not
 * reported; then --rounds reported rounds.  Every round runs each arm
 * once, in an order drawn afresh by a Fisher-Yates shuffle from a
 * splitmix64 stream seeded by --seed (same seed, same orders), so that
 * no arm always follows the same arm and always inherits its
 * after-effects (a drained or a filled cache).
 *
 * A slice.  Its first I/O, the settle I/O, is done but kept out of the
 * statistics: it pays for the switch from the previous arm (the drive's
 * read-ahead or write-combining state, a seek).  Then I/Os are timed
 * with one clock read each (the end of one is the start of the next, as
 * in run.c; with flush=each the flush is inside its write's time) until
 * at least --min-ios are done and --slice seconds have passed since the
 * slice began.  Every latency is kept (one buffer, reused by every
 * slice) so that the median is exact: slices are short, and the median
 * of a few dozen values must not carry a histogram bucket's error.  A
 * slice also ends at SLICE_MAX_IOS timed I/Os, which bounds that buffer
 * (128 MiB); only the null backend with long slices gets there.
 *
 * Offsets.  [0, region) is split into one sub-region per arm, region /
 * narms bytes rounded down to 1 MiB, so that every sub-region starts
 * 1 MiB-aligned and only an arm's offset= decides its alignment, and so
 * that no arm touches another's blocks (its writes would warm or fill
 * the other's pages).  Block b of arm i is [i * sub + offset + b * bs,
 * + bs), 0 <= b < (sub - offset) / bs.  seq walks forward from block 0,
 * continuing across slices and rounds, wrapping; rand draws b uniformly
 * with splitmix64 seeded from --seed and the arm index.
 *
 * Mixes.  An arm given mix=S1:S2:...:Sn (write arms, seq only) writes
 * those sizes in turn instead of bs each time, every size rounded up to
 * align=A (a power of two; default: no rounding), packed one after
 * another from the start of its sub-region as an allocator packs blocks
 * (the next write starts where the last one ended), wrapping to the start
 * when the next would not fit.  This is how sdtune replays the writes ZFS
 * issues at one ashift against those at another: the same sizes, rounded
 * to and aligned on each allocation unit.  bs must be at least the
 * largest rounded size (it sizes the buffer).  A slice of a mix arm times
 * whole cycles of the mix: it ends only where the mix is back at the size
 * its first timed I/O had, so that every slice of the arm averages the
 * same sizes and rounds compare like with like.
 *
 * Buffers.  One write buffer of the largest bs, 4096-aligned (O_DIRECT),
 * filled as the run mode fills it.  Read arms read into a second buffer,
 * allocated only when there is a read arm, so that reading (zeros from
 * a fresh area, say) never changes what the write arms write: some
 * drives compress or skip zeros.
 *
 * Stopping.  After the last round ("rounds"); before a reported round
 * whose start would be more than --time seconds after the first reported
 * round began ("time"); at once on an I/O or flush error ("error", exit
 * 3), with only the rounds completed before it listed.  --time is decided
 * on the one clock reading that also stamps the round's start, so every
 * listed round has start_ns <= --time however the process is scheduled,
 * and the reading that stops the run is its elapsed_ns (> --time).  The
 * first reported round always runs, so a run has at least one.
 */

#include "sdio.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define	PAIRED_JSON_VERSION	1
#define	MAX_ARMS		32
#define	ARM_NAME_MAX		32
#define	SUB_ALIGN		(1ULL << 20)
#define	MAX_ROUNDS		100000
#define	SLICE_MAX_IOS		(1U << 24)
#define	LAT_INIT		4096
#define	MIX_MAX			32
#define	DEFAULT_ROUNDS		8
#define	DEFAULT_WARMUP		1
#define	DEFAULT_SLICE_S		0.03
#define	DEFAULT_MIN_IOS		8
/* Keeps the order stream apart from the arms' offset streams. */
#define	ORDER_SEED_MIX		0x2545f4914f6cdd1dULL

typedef struct arm {
	/* From --arm. */
	char		a_name[ARM_NAME_MAX + 1];
	uint64_t	a_bs;
	uint64_t	a_offset;
	sdio_pattern_t	a_pattern;
	sdio_flush_t	a_flush;
	int		a_write;	/* 1 write, 0 read */
	uint64_t	a_align;	/* mix sizes round up to this; 0 none */
	unsigned int	a_nmix;		/* 0: every I/O is bs */
	uint64_t	a_mix[MIX_MAX];	/* rounded up to a_align at setup */
	/* Set up once the region is known. */
	uint64_t	a_start;	/* of the arm's sub-region */
	uint64_t	a_nblocks;
	uint64_t	a_blk;		/* next (seq) or last (rand) block */
	uint64_t	a_rng;
	uint64_t	a_ios;		/* timed I/Os of the reported rounds */
	uint64_t	a_cursor;	/* mix: next write, from the offset */
	unsigned int	a_mixi;		/* mix: the size it writes */
} arm_t;

typedef struct popts {
	const sdio_ops_t *po_backend;
	const char	*po_target;
	int		po_direct;
	uint64_t	po_seed;
	uint64_t	po_region;	/* 0: the target's size */
	unsigned int	po_rounds;
	unsigned int	po_warmup;
	double		po_slice_s;
	unsigned int	po_min_ios;
	double		po_time_s;	/* 0: no bound */
	int		po_json;
	uint64_t	po_sub;		/* bytes of each arm's sub-region */
	unsigned int	po_narms;
	arm_t		po_arms[MAX_ARMS];
} popts_t;

/* One slice's statistics; settle is always 1 (kept for the reader). */
typedef struct pslice {
	uint64_t	s_ios;
	uint64_t	s_settle;
	double		s_mean;
	uint64_t	s_median;
	uint64_t	s_min;
	uint64_t	s_max;
	uint64_t	s_elapsed;
} pslice_t;

typedef struct prun {
	popts_t		*pr_o;
	const sdio_ops_t *pr_ops;
	sdio_dev_t	*pr_dev;
	void		*pr_wbuf;
	void		*pr_rbuf;	/* NULL without read arms */
	uint64_t	*pr_lat;	/* the current slice's latencies */
	size_t		pr_latcap;
	uint64_t	pr_slice_ns;
	pslice_t	*pr_slices;	/* [round * narms + arm index] */
	unsigned int	*pr_order;	/* [round * narms + position] */
	uint64_t	*pr_rstart;	/* round start, from pr_t0 */
	unsigned int	pr_nrounds;	/* reported rounds completed */
	int		pr_started;	/* the reported rounds have begun */
	uint64_t	pr_t0;		/* when they began */
	uint64_t	pr_last;	/* the last clock read */
	sdio_err_t	pr_err;
	unsigned int	pr_nerrs;
	int		pr_oom;
	const char	*pr_stopped;
} prun_t;

#define	A(field)	offsetof(arm_t, field)
#define	P(field)	offsetof(popts_t, field)

/* The --arm keys; their index is their bit in parse_arm's seen mask. */
static const opt_def_t arm_keys[] = {
	{ "name", OPT_SPEC, 0, 0, 0 },
	{ "bs", OPT_BYTES, A(a_bs), 1, 1ULL << 30 },
	{ "offset", OPT_BYTES, A(a_offset), 0, UINT64_MAX >> 2 },
	{ "pattern", OPT_PATTERN, A(a_pattern), 0, 0 },
	{ "flush", OPT_FLUSH, A(a_flush), 0, 0 },
	{ "rw", OPT_RW, A(a_write), 0, 0 },
	{ "mix", OPT_SPEC, 0, 0, 0 },
	{ "align", OPT_BYTES, A(a_align), 1, 1ULL << 30 },
	{ NULL, OPT_FLAG, 0, 0, 0 }
};
#define	KEY_NAME	0x1
#define	KEY_BS		0x2
#define	KEY_PATTERN	0x8
#define	KEY_MIX		0x40
#define	KEY_ALIGN	0x80

static const opt_def_t paired_defs[] = {
	{ "backend", OPT_BACKEND, P(po_backend), 0, 0 },
	{ "direct", OPT_FLAG, P(po_direct), 0, 0 },
	{ "seed", OPT_BYTES, P(po_seed), 0, UINT64_MAX },
	{ "region", OPT_BYTES, P(po_region), 1, UINT64_MAX >> 2 },
	{ "rounds", OPT_UINT, P(po_rounds), 1, MAX_ROUNDS },
	{ "warmup-rounds", OPT_UINT, P(po_warmup), 0, MAX_ROUNDS },
	{ "slice", OPT_SECONDS, P(po_slice_s), 0, 0 },
	{ "min-ios", OPT_UINT, P(po_min_ios), 1, SLICE_MAX_IOS },
	{ "time", OPT_BOUND, P(po_time_s), 0, 0 },
	{ "json", OPT_FLAG, P(po_json), 0, 0 },
	{ "arm", OPT_SPEC, 0, 0, 0 },
	{ NULL, OPT_FLAG, 0, 0, 0 }
};

/*
 * mix=S1:S2:...: up to MIX_MAX byte counts, each from 1 byte to 1 GiB
 * (k, m, g suffixes as everywhere).  0, or -1 when malformed.
 */
static int
parse_mix(arm_t *a, const char *val)
{
	static const opt_def_t size_def =
	    { "mix", OPT_BYTES, 0, 1, 1ULL << 30 };
	char one[32];
	const char *p = val;
	size_t len;

	a->a_nmix = 0;
	for (;;) {
		len = strcspn(p, ":");
		if (len == 0 || len >= sizeof (one) || a->a_nmix == MIX_MAX)
			return (-1);
		(void) memcpy(one, p, len);
		one[len] = '\0';
		if (sdio_set_option(&a->a_mix[a->a_nmix], &size_def, one) != 0)
			return (-1);
		a->a_nmix++;
		if (p[len] == '\0')
			return (0);
		p += len + 1;
	}
}

/* A usage error in the idx'th --arm, naming it by its spec. */
static int
arm_error(unsigned int idx, const char *spec, const char *what)
{
	return (sdio_usage_error("--arm %u '%s': %s", idx, spec, what));
}

static int
valid_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > ARM_NAME_MAX)
		return (0);
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return (0);
	return (1);
}

/* Parse one --arm SPEC into the next arm.  0, or an exit status. */
static int
parse_arm(popts_t *o, const char *spec)
{
	const opt_def_t *d;
	unsigned int idx = o->po_narms, seen = 0, bit, i;
	const char *p = spec, *eq;
	char val[512], what[704];
	size_t len, klen, vlen;
	arm_t *a;

	if (idx == MAX_ARMS)
		return (arm_error(idx, spec, "more than 32 arms"));
	a = &o->po_arms[idx];
	(void) memset(a, 0, sizeof (*a));
	a->a_pattern = PAT_SEQ;
	a->a_flush = FLUSH_NONE;
	a->a_write = 1;
	for (;;) {
		len = strcspn(p, ",");
		eq = memchr(p, '=', len);
		if (eq == NULL) {
			(void) snprintf(what, sizeof (what), "'%.*s' is not "
			    "key=value", (int)len, p);
			return (arm_error(idx, spec, what));
		}
		klen = (size_t)(eq - p);
		if ((d = sdio_find_option(arm_keys, p, klen)) == NULL) {
			(void) snprintf(what, sizeof (what), "unknown key "
			    "'%.*s' (name, bs, offset, pattern, flush, rw, "
			    "mix, align)",
			    (int)klen, p);
			return (arm_error(idx, spec, what));
		}
		bit = 1U << (unsigned int)(d - arm_keys);
		if (seen & bit) {
			(void) snprintf(what, sizeof (what), "key '%s' given "
			    "twice", d->od_name);
			return (arm_error(idx, spec, what));
		}
		seen |= bit;
		vlen = len - klen - 1;
		if (vlen >= sizeof (val)) {
			(void) snprintf(what, sizeof (what), "the value of %s "
			    "is too long", d->od_name);
			return (arm_error(idx, spec, what));
		}
		(void) memcpy(val, eq + 1, vlen);
		val[vlen] = '\0';
		if (bit == KEY_MIX) {
			if (parse_mix(a, val) != 0) {
				(void) snprintf(what, sizeof (what), "bad mix "
				    "'%s': 1 to %d sizes of 1 byte to 1g, "
				    "separated by ':'", val, MIX_MAX);
				return (arm_error(idx, spec, what));
			}
		} else if (d->od_kind == OPT_SPEC) {
			if (!valid_name(val)) {
				(void) snprintf(what, sizeof (what), "bad "
				    "name '%s': 1 to %d of A-Z a-z 0-9 . _ -",
				    val, ARM_NAME_MAX);
				return (arm_error(idx, spec, what));
			}
			(void) strcpy(a->a_name, val);
		} else if (sdio_set_option(a, d, val) != 0) {
			(void) snprintf(what, sizeof (what), "bad value '%s' "
			    "for %s", val, d->od_name);
			return (arm_error(idx, spec, what));
		}
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	if (!(seen & KEY_NAME))
		return (arm_error(idx, spec, "name=NAME is missing"));
	if (!(seen & KEY_BS))
		return (arm_error(idx, spec, "bs=BYTES is missing"));
	if ((seen & KEY_ALIGN) && (a->a_align & (a->a_align - 1)) != 0)
		return (arm_error(idx, spec, "align must be a power of two"));
	if ((seen & KEY_ALIGN) && !(seen & KEY_MIX))
		return (arm_error(idx, spec, "align needs mix"));
	if (a->a_nmix > 0) {
		if (!a->a_write || a->a_pattern != PAT_SEQ)
			return (arm_error(idx, spec, "mix needs rw=write and "
			    "pattern=seq"));
		for (i = 0; i < a->a_nmix; i++) {
			if (a->a_align > 0)
				a->a_mix[i] = (a->a_mix[i] + a->a_align - 1) /
				    a->a_align * a->a_align;
			if (a->a_mix[i] > a->a_bs) {
				(void) snprintf(what, sizeof (what), "mix size "
				    "%llu (rounded to align) exceeds bs %llu",
				    (unsigned long long)a->a_mix[i],
				    (unsigned long long)a->a_bs);
				return (arm_error(idx, spec, what));
			}
		}
	}
	for (i = 0; i < idx; i++) {
		if (strcmp(o->po_arms[i].a_name, a->a_name) == 0) {
			(void) snprintf(what, sizeof (what), "name '%s' is "
			    "already arm %u's", a->a_name, i);
			return (arm_error(idx, spec, what));
		}
	}
	o->po_narms++;
	return (0);
}

/* --arm's handler for sdio_parse_argv(). */
static int
arm_spec(void *o, const opt_def_t *d, const char *val)
{
	(void) d;
	return (parse_arm(o, val));
}

/* Parse argv (argv[0] is "paired") into o.  0, or an exit status. */
static int
parse_paired(int argc, char **argv, popts_t *o)
{
	uint64_t seen;
	int rc;

	(void) memset(o, 0, sizeof (*o));
	o->po_seed = 1;
	o->po_rounds = DEFAULT_ROUNDS;
	o->po_warmup = DEFAULT_WARMUP;
	o->po_slice_s = DEFAULT_SLICE_S;
	o->po_min_ios = DEFAULT_MIN_IOS;

	if ((rc = sdio_parse_argv(argc, argv, paired_defs, o, &o->po_target,
	    &seen, arm_spec)) != 0)
		return (rc);
	if (o->po_narms == 0)
		return (sdio_usage_error("sdio paired needs at least one "
		    "--arm"));
	if (o->po_target == NULL)
		return (sdio_usage_error("no target given"));
	/*
	 * The default backend when none was chosen, looked up last: that can
	 * fail only on a mismatched ops version (backend.c), a setup error.
	 */
	if (o->po_backend == NULL &&
	    (o->po_backend = sdio_backend_lookup(NULL)) == NULL)
		return (SDIO_EXIT_SETUP);
	return (0);
}

/*
 * With the device open: the region, the sub-regions and each arm's
 * blocks.  0, or an exit status after a message.
 */
static int
paired_setup(popts_t *o, const sdio_dev_t *dev)
{
	uint64_t size = dev->d_size, region = o->po_region, sub;
	unsigned int i, nread = 0;
	arm_t *a;

	if (region == 0) {
		if (size == 0) {
			(void) fprintf(stderr, "sdio: cannot set up '%s': its "
			    "size is unknown or 0; give --region\n",
			    o->po_target);
			return (SDIO_EXIT_SETUP);
		}
		region = size;
	}
	for (i = 0; i < o->po_narms; i++)
		if (!o->po_arms[i].a_write)
			nread++;
	/* Past the end of a device or a file being read is always an error. */
	if (size > 0 && ((dev->d_flags & SDIO_DEV_RAW) || nread > 0) &&
	    region > size) {
		(void) fprintf(stderr, "sdio: --region %llu exceeds the size "
		    "of '%s' (%llu)\n", (unsigned long long)region,
		    o->po_target, (unsigned long long)size);
		return (SDIO_EXIT_USAGE);
	}
	sub = region / o->po_narms;
	sub -= sub % SUB_ALIGN;
	if (sub < SUB_ALIGN) {
		(void) fprintf(stderr, "sdio: region %llu split over %u arms "
		    "leaves less than 1 MiB per arm\n",
		    (unsigned long long)region, o->po_narms);
		return (SDIO_EXIT_USAGE);
	}
	for (i = 0; i < o->po_narms; i++) {
		a = &o->po_arms[i];
		if (a->a_offset > sub || sub - a->a_offset < a->a_bs) {
			(void) fprintf(stderr, "sdio: arm %u '%s': offset %llu "
			    "+ bs %llu exceed its sub-region of %llu bytes "
			    "(region %llu / %u arms, rounded down to 1 MiB)\n",
			    i, a->a_name, (unsigned long long)a->a_offset,
			    (unsigned long long)a->a_bs,
			    (unsigned long long)sub,
			    (unsigned long long)region, o->po_narms);
			return (SDIO_EXIT_USAGE);
		}
		a->a_start = (uint64_t)i * sub;
		a->a_nblocks = (sub - a->a_offset) / a->a_bs;
		a->a_blk = 0;
		a->a_cursor = 0;
		a->a_mixi = 0;
		/* As run.c seeds its threads: same seed, same offsets. */
		a->a_rng = o->po_seed ^ (0xd1b54a32d192ed03ULL * (i + 1));
		a->a_ios = 0;
	}
	o->po_region = region;
	o->po_sub = sub;
	return (0);
}

static void
record_error(prun_t *pr, int op, uint64_t off, int err)
{
	pr->pr_last = sdio_now();
	pr->pr_err.e_op = op;
	pr->pr_err.e_errno = err;
	pr->pr_err.e_offset = off;
	pr->pr_nerrs = 1;
}

/* One I/O of arm a (and its flush).  0, or -1 with the error recorded. */
static int
arm_io(prun_t *pr, arm_t *a, void *buf)
{
	uint64_t off, len = a->a_bs;
	int err, dir = a->a_write ? SDIO_IO_WRITE : SDIO_IO_READ;

	if (a->a_nmix > 0) {
		len = a->a_mix[a->a_mixi];
		/* Setup checked that bs, and so any size, fits. */
		if (a->a_cursor + len > pr->pr_o->po_sub - a->a_offset)
			a->a_cursor = 0;
		off = a->a_start + a->a_offset + a->a_cursor;
		a->a_cursor += len;
		a->a_mixi = (a->a_mixi + 1) % a->a_nmix;
	} else {
		if (a->a_pattern == PAT_RAND)
			a->a_blk = scale64(splitmix64(&a->a_rng),
			    a->a_nblocks);
		off = a->a_start + a->a_offset + a->a_blk * a->a_bs;
	}
	if ((err = pr->pr_ops->o_io(pr->pr_dev, buf, (size_t)len, off,
	    dir)) != 0) {
		record_error(pr, a->a_write ? SDIO_OP_WRITE : SDIO_OP_READ,
		    off, err);
		return (-1);
	}
	/* Reads are never flushed, as in the run mode. */
	if (a->a_write && a->a_flush == FLUSH_EACH &&
	    (err = pr->pr_ops->o_flush(pr->pr_dev)) != 0) {
		record_error(pr, SDIO_OP_FLUSH, off, err);
		return (-1);
	}
	if (a->a_nmix == 0 && a->a_pattern == PAT_SEQ &&
	    ++a->a_blk == a->a_nblocks)
		a->a_blk = 0;
	return (0);
}

/*
 * The k-th smallest of a[0 .. n) (n > 0), reordering a: Hoare's FIND
 * with a median-of-three pivot, O(n) on average, and no worse on runs of
 * equal values (the null backend's latencies are mostly equal), which
 * stop both scans and so split evenly.
 */
static uint64_t
select_nth(uint64_t *a, size_t n, size_t k)
{
	int64_t l = 0, m = (int64_t)n - 1, i, j, kk = (int64_t)k;
	uint64_t x, y, z, t;

	while (l < m) {
		x = a[l];
		y = a[l + (m - l) / 2];
		z = a[m];
		if (x > y) {
			t = x;
			x = y;
			y = t;
		}
		/* Now x <= y: the median is y, or the larger of x and z. */
		if (z < y)
			y = z > x ? z : x;
		x = y;
		i = l;
		j = m;
		do {
			while (a[i] < x)
				i++;
			while (x < a[j])
				j--;
			if (i <= j) {
				t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			m = j;
	}
	return (a[kk]);
}

/*
 * Statistics of n > 0 latencies (reordered).  The median is the lower
 * one for even n, a[(n - 1) / 2] of the sorted values: a latency that
 * occurred, not the mean of two.
 */
static void
slice_stats(uint64_t *lat, size_t n, pslice_t *s)
{
	uint64_t sum = 0, min = UINT64_MAX, max = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += lat[i];
		if (lat[i] < min)
			min = lat[i];
		if (lat[i] > max)
			max = lat[i];
	}
	s->s_ios = n;
	s->s_mean = (double)sum / (double)n;
	s->s_min = min;
	s->s_max = max;
	s->s_median = select_nth(lat, n, (n - 1) / 2);
}

static int
lat_grow(prun_t *pr)
{
	size_t cap = pr->pr_latcap * 2;
	uint64_t *n;

	if (cap > SLICE_MAX_IOS)
		cap = SLICE_MAX_IOS;
	if ((n = realloc(pr->pr_lat, cap * sizeof (uint64_t))) == NULL) {
		pr->pr_oom = 1;
		return (-1);
	}
	pr->pr_lat = n;
	pr->pr_latcap = cap;
	return (0);
}

/* One slice of arm a into s.  0, or -1 on an error or out of memory. */
static int
run_slice(prun_t *pr, arm_t *a, pslice_t *s)
{
	void *buf = a->a_write ? pr->pr_wbuf : pr->pr_rbuf;
	uint64_t *lat = pr->pr_lat, t0, start, end;
	size_t n = 0, min_ios = pr->pr_o->po_min_ios;
	unsigned int first;

	t0 = sdio_now();
	if (arm_io(pr, a, buf) != 0)
		return (-1);
	first = a->a_mixi;
	start = end = sdio_now();
	for (;;) {
		if (n == pr->pr_latcap) {
			if (lat_grow(pr) != 0)
				return (-1);
			lat = pr->pr_lat;
			/* The realloc is no part of any I/O's time. */
			start = sdio_now();
		}
		if (arm_io(pr, a, buf) != 0)
			return (-1);
		end = sdio_now();
		lat[n++] = end - start;
		start = end;
		if ((n >= min_ios && end - t0 >= pr->pr_slice_ns &&
		    a->a_mixi == first) || n == SLICE_MAX_IOS)
			break;
	}
	pr->pr_last = end;
	slice_stats(lat, n, s);
	s->s_settle = 1;
	s->s_elapsed = end - t0;
	return (0);
}

/* A random order of 0 .. n - 1 (Fisher-Yates). */
static void
shuffle(unsigned int *order, unsigned int n, uint64_t *rng)
{
	unsigned int i, j, t;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = (unsigned int)scale64(splitmix64(rng), (uint64_t)i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

static void
paired_run(prun_t *pr)
{
	popts_t *o = pr->pr_o;
	unsigned int n = o->po_narms, total = o->po_warmup + o->po_rounds;
	unsigned int order[MAX_ARMS], r, k, idx;
	uint64_t rng = o->po_seed ^ ORDER_SEED_MIX, rstart;
	uint64_t time_ns = (uint64_t)(o->po_time_s * 1e9 + 0.5);
	pslice_t scratch, *row;

	pr->pr_stopped = "rounds";
	for (r = 0; r < total; r++) {
		/* Warm-up rounds draw orders too: one stream per seed. */
		shuffle(order, n, &rng);
		/*
		 * One reading both stamps the round and decides --time: a
		 * second reading for the stamp could fall past the bound if
		 * the process were descheduled between the two.
		 */
		rstart = sdio_now();
		if (r == o->po_warmup) {
			pr->pr_t0 = rstart;
			pr->pr_started = 1;
		} else if (r > o->po_warmup && time_ns > 0 &&
		    rstart - pr->pr_t0 > time_ns) {
			pr->pr_last = rstart;
			pr->pr_stopped = "time";
			return;
		}
		idx = r - o->po_warmup;
		row = r >= o->po_warmup ? &pr->pr_slices[(size_t)idx * n] :
		    NULL;
		for (k = 0; k < n; k++) {
			if (run_slice(pr, &o->po_arms[order[k]], row != NULL ?
			    &row[order[k]] : &scratch) != 0) {
				pr->pr_stopped = "error";
				return;
			}
		}
		if (row == NULL)
			continue;
		(void) memcpy(&pr->pr_order[(size_t)idx * n], order,
		    n * sizeof (unsigned int));
		pr->pr_rstart[idx] = rstart - pr->pr_t0;
		for (k = 0; k < n; k++)
			o->po_arms[k].a_ios += row[k].s_ios;
		pr->pr_nrounds++;
	}
}

static uint64_t
elapsed_ns(const prun_t *pr)
{
	return (pr->pr_started ? pr->pr_last - pr->pr_t0 : 0);
}

static void
print_json(const popts_t *o, const prun_t *pr)
{
	const arm_t *a;
	const pslice_t *s;
	unsigned int i, k, n = o->po_narms;
	FILE *f = stdout;

	(void) fprintf(f, "{\"version\": %d, \"mode\": \"paired\", "
	    "\"target\": ", PAIRED_JSON_VERSION);
	json_string(f, o->po_target);
	(void) fprintf(f, ",\n \"options\": {\"rounds\": %u, "
	    "\"warmup_rounds\": %u, \"slice_s\": ", o->po_rounds,
	    o->po_warmup);
	/* Nanosecond precision: what the run rounds the seconds to. */
	json_double(f, o->po_slice_s, 9);
	(void) fprintf(f, ", \"min_ios\": %u, \"region\": %llu, "
	    "\"seed\": %llu, \"direct\": %s, \"backend\": ", o->po_min_ios,
	    (unsigned long long)o->po_region,
	    (unsigned long long)o->po_seed,
	    o->po_direct ? "true" : "false");
	json_string(f, o->po_backend->o_name);
	(void) fprintf(f, ", \"time_s\": ");
	json_double(f, o->po_time_s, 9);
	(void) fprintf(f, "},\n \"arms\": [");
	for (i = 0; i < n; i++) {
		a = &o->po_arms[i];
		(void) fprintf(f, "%s\n  {\"index\": %u, \"name\": ",
		    i == 0 ? "" : ",", i);
		json_string(f, a->a_name);
		(void) fprintf(f, ", \"bs\": %llu, \"offset\": %llu, "
		    "\"pattern\": \"%s\", \"flush\": \"%s\", \"rw\": \"%s\", "
		    "\"region_start\": %llu, \"region_bytes\": %llu, "
		    "\"blocks\": %llu, \"ios\": %llu",
		    (unsigned long long)a->a_bs,
		    (unsigned long long)a->a_offset,
		    a->a_pattern == PAT_RAND ? "rand" : "seq",
		    a->a_flush == FLUSH_EACH ? "each" : "none",
		    a->a_write ? "write" : "read",
		    (unsigned long long)a->a_start,
		    (unsigned long long)o->po_sub,
		    (unsigned long long)a->a_nblocks,
		    (unsigned long long)a->a_ios);
		if (a->a_nmix > 0) {
			/* The sizes written, after rounding to align. */
			(void) fprintf(f, ", \"align\": %llu, \"mix\": [",
			    (unsigned long long)a->a_align);
			for (k = 0; k < a->a_nmix; k++)
				(void) fprintf(f, "%s%llu", k == 0 ? "" : ", ",
				    (unsigned long long)a->a_mix[k]);
			(void) fprintf(f, "]");
		}
		(void) fprintf(f, "}");
	}
	(void) fprintf(f, "],\n \"rounds\": [");
	for (i = 0; i < pr->pr_nrounds; i++) {
		(void) fprintf(f, "%s\n  {\"index\": %u, \"start_ns\": %llu, "
		    "\"order\": [", i == 0 ? "" : ",", i,
		    (unsigned long long)pr->pr_rstart[i]);
		for (k = 0; k < n; k++)
			(void) fprintf(f, "%s%u", k == 0 ? "" : ", ",
			    pr->pr_order[(size_t)i * n + k]);
		(void) fprintf(f, "], \"slices\": [");
		for (k = 0; k < n; k++) {
			s = &pr->pr_slices[(size_t)i * n + k];
			(void) fprintf(f, "%s\n   {\"arm\": %u, \"ios\": %llu, "
			    "\"settle\": %llu, \"mean_ns\": ",
			    k == 0 ? "" : ",", k,
			    (unsigned long long)s->s_ios,
			    (unsigned long long)s->s_settle);
			json_double(f, s->s_mean, 3);
			(void) fprintf(f, ", \"median_ns\": %llu, "
			    "\"min_ns\": %llu, \"max_ns\": %llu, "
			    "\"elapsed_ns\": %llu}",
			    (unsigned long long)s->s_median,
			    (unsigned long long)s->s_min,
			    (unsigned long long)s->s_max,
			    (unsigned long long)s->s_elapsed);
		}
		(void) fprintf(f, "]}");
	}
	(void) fprintf(f, "],\n \"errors\": ");
	sdio_json_errors(f, &pr->pr_err, pr->pr_nerrs);
	(void) fprintf(f, ",\n \"elapsed_ns\": %llu, \"stopped\": \"%s\"}\n",
	    (unsigned long long)elapsed_ns(pr), pr->pr_stopped);
}

static void
print_human(const popts_t *o, const prun_t *pr)
{
	const arm_t *a;
	const pslice_t *row;
	double sum;
	unsigned int i, r, n = o->po_narms;

	(void) printf("%s: %s paired, %u arms, %u of %u rounds in %.3f s "
	    "(stopped: %s)\n", o->po_target, o->po_backend->o_name, n,
	    pr->pr_nrounds, o->po_rounds, (double)elapsed_ns(pr) / 1e9,
	    pr->pr_stopped);
	for (i = 0; i < n; i++) {
		a = &o->po_arms[i];
		sum = 0.0;
		for (r = 0; r < pr->pr_nrounds; r++) {
			row = &pr->pr_slices[(size_t)r * n];
			sum += (double)row[i].s_median;
		}
		(void) printf("  %-32s %10llu I/Os, mean of slice medians "
		    "%.2f us\n", a->a_name, (unsigned long long)a->a_ios,
		    pr->pr_nrounds == 0 ? 0.0 :
		    sum / (double)pr->pr_nrounds / 1e3);
	}
	if (pr->pr_nerrs > 0)
		(void) printf("  error: %s at offset %llu: %s\n",
		    sdio_op_name(pr->pr_err.e_op),
		    (unsigned long long)pr->pr_err.e_offset,
		    strerror(pr->pr_err.e_errno));
}

static void
prun_free(prun_t *pr)
{
	free(pr->pr_wbuf);
	free(pr->pr_rbuf);
	free(pr->pr_lat);
	free(pr->pr_slices);
	free(pr->pr_order);
	free(pr->pr_rstart);
}

/* Everything the run touches, allocated before the first clock read. */
static int
prun_alloc(prun_t *pr)
{
	popts_t *o = pr->pr_o;
	uint64_t maxbs = 0;
	size_t nslots = (size_t)o->po_rounds * o->po_narms;
	unsigned int i, nread = 0;

	for (i = 0; i < o->po_narms; i++) {
		if (o->po_arms[i].a_bs > maxbs)
			maxbs = o->po_arms[i].a_bs;
		if (!o->po_arms[i].a_write)
			nread++;
	}
	if (posix_memalign(&pr->pr_wbuf, 4096, (size_t)maxbs) != 0) {
		pr->pr_wbuf = NULL;
		return (-1);
	}
	sdio_fill_buffer(pr->pr_wbuf, (size_t)maxbs, -1, o->po_seed);
	if (nread > 0 &&
	    posix_memalign(&pr->pr_rbuf, 4096, (size_t)maxbs) != 0) {
		pr->pr_rbuf = NULL;
		return (-1);
	}
	pr->pr_latcap = o->po_min_ios > LAT_INIT ? o->po_min_ios : LAT_INIT;
	pr->pr_lat = malloc(pr->pr_latcap * sizeof (uint64_t));
	pr->pr_slices = calloc(nslots, sizeof (pslice_t));
	pr->pr_order = calloc(nslots, sizeof (unsigned int));
	pr->pr_rstart = calloc(o->po_rounds, sizeof (uint64_t));
	if (pr->pr_lat == NULL || pr->pr_slices == NULL ||
	    pr->pr_order == NULL || pr->pr_rstart == NULL)
		return (-1);
	return (0);
}

int
sdio_paired_main(int argc, char **argv)
{
	popts_t o;
	prun_t pr;
	sdio_dev_t dev;
	unsigned int i;
	int rc, wr = 0;

	if ((rc = parse_paired(argc, argv, &o)) != 0)
		return (rc);

	for (i = 0; i < o.po_narms; i++)
		if (o.po_arms[i].a_write)
			wr = 1;
	if ((rc = sdio_open_target(o.po_backend, &dev, o.po_target, wr,
	    o.po_direct)) != 0)
		return (rc);
	if ((rc = paired_setup(&o, &dev)) != 0) {
		o.po_backend->o_close(&dev);
		return (rc);
	}

	(void) memset(&pr, 0, sizeof (pr));
	pr.pr_o = &o;
	pr.pr_ops = o.po_backend;
	pr.pr_dev = &dev;
	/* Rounded, so that 0.03 s is 30000000 ns and not one less. */
	pr.pr_slice_ns = (uint64_t)(o.po_slice_s * 1e9 + 0.5);
	if (prun_alloc(&pr) != 0) {
		(void) fprintf(stderr, "sdio: cannot set up '%s': out of "
		    "memory\n", o.po_target);
		prun_free(&pr);
		o.po_backend->o_close(&dev);
		return (SDIO_EXIT_SETUP);
	}
	paired_run(&pr);
	o.po_backend->o_close(&dev);
	if (pr.pr_oom) {
		(void) fprintf(stderr, "sdio: cannot set up '%s': out of "
		    "memory during the run\n", o.po_target);
		prun_free(&pr);
		return (SDIO_EXIT_SETUP);
	}
	if (o.po_json)
		print_json(&o, &pr);
	else
		print_human(&o, &pr);
	rc = pr.pr_nerrs > 0 ? SDIO_EXIT_IO : SDIO_EXIT_OK;
	prun_free(&pr);
	if (fflush(stdout) != 0) {
		(void) fprintf(stderr, "sdio: cannot write output: %s\n",
		    strerror(errno));
		return (SDIO_EXIT_SETUP);
	}
	return (rc);
}

/*
 * Hidden test mode: sdio --selftest-median reads unsigned integers from
 * stdin and prints what a slice would report for them as latencies
 * (count, mean, lower median, min, max), for the tests to compare with
 * exact values.
 */
int
sdio_selftest_median(void)
{
	unsigned long long v;
	uint64_t *a = NULL, *na;
	size_t n = 0, cap = 0;
	pslice_t s;

	while (scanf("%llu", &v) == 1) {
		if (n == cap) {
			cap = cap == 0 ? 1024 : cap * 2;
			na = realloc(a, cap * sizeof (uint64_t));
			if (na == NULL) {
				free(a);
				return (SDIO_EXIT_SETUP);
			}
			a = na;
		}
		a[n++] = (uint64_t)v;
	}
	if (n == 0) {
		free(a);
		return (SDIO_EXIT_USAGE);
	}
	slice_stats(a, n, &s);
	(void) printf("{\"count\": %llu, \"mean\": %.17g, \"median\": %llu, "
	    "\"min\": %llu, \"max\": %llu}\n", (unsigned long long)s.s_ios,
	    s.s_mean, (unsigned long long)s.s_median,
	    (unsigned long long)s.s_min, (unsigned long long)s.s_max);
	free(a);
	return (SDIO_EXIT_OK);
}
