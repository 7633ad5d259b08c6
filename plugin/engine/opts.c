/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * opts.c: options as data, and the one parser of them.
 *
 * Why tables.  The run mode (below) and `sdio paired` (paired.c) list
 * their options, and paired its --arm keys, in opt_def_t tables: a name,
 * a kind, a field and bounds.  One parser, sdio_parse_argv(), reads argv
 * against either table, and one function, sdio_set_option(), parses,
 * bounds and stores a value by its kind, so that a byte count, a number
 * of seconds or a backend name is read, checked and refused the same way
 * in every mode, with the same message.  Each mode then checks only what
 * ties its options together.  The usage text is here too, with its
 * --backend line printed from the backend table (backend.c).
 */

#include "sdio.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define	DEFAULT_TIME_S		10.0
#define	DEFAULT_MIN_IVALS	5
#define	MAX_QD			4096
#define	MIN_INTERVAL_S		0.001

/* Before and after the --backend line, which backend.c prints. */
static const char usage_head[] =
"usage: sdio [options] TARGET\n"
"       sdio paired [paired options] --arm SPEC [--arm SPEC ...] TARGET\n"
"       sdio scsi inquiry|vpd PAGE|readcap16|modesense PAGE DEVICE [--json]\n"
"       sdio serve --root ROOT [--allow /POLICY]\n"
"                                (file and command server on stdin/stdout,\n"
"                                for sdtune --host)\n"
"       sdio diskmgt --diskmgt LIBPATH --nvpair LIBPATH [--no-inuse]\n"
"                                (fixed disks and in-use state from\n"
"                                libdiskmgt, as JSON)\n"
"       sdio powercut write --run HEX16 --slots N --block BYTES\n"
"                [--offset BYTES] [--first-seq S] [--seconds T] [--seed X]\n"
"                [--notice-ms M] [--flush-every-ms E] TARGET\n"
"       sdio powercut read --slots N --block BYTES [--offset BYTES] TARGET\n"
"                                (the power-cut check's writer, each write\n"
"                                and flush a line as it completes, and its\n"
"                                read-back, a line per slot)\n"
"       sdio --version           (prints \"sdio VERSION\")\n"
"\n";
static const char usage_tail[] =
"  --rw write|read       direction (default write)\n"
"  --pattern seq|rand    offsets (default seq)\n"
"  --bs BYTES            I/O size (default 4096); BYTES may end in k, m,\n"
"                        g or t (binary multiples)\n"
"  --qd N                threads, each doing synchronous I/O (default 1)\n"
"  --time SECONDS        upper bound on the run (default 10 unless\n"
"                        --max-ios is given)\n"
"  --interval SECONDS    per-interval statistics, >= 0.001 (default: none)\n"
"  --offset BYTES        added to every I/O offset (misaligned probes)\n"
"  --region BYTES        offsets wrap in [0, region) (default: target\n"
"                        size - offset)\n"
"  --flush none|each     each: flush after every write (default none)\n"
"  --direct              O_DIRECT (Linux), directio (illumos)\n"
"  --stable REL          stop when the relative standard error of the\n"
"                        IOPS of the last N intervals is <= REL (0: off)\n"
"  --min-intervals N     N for --stable (default 5)\n"
"  --max-ios N           stop after N I/Os\n"
"  --seed N              random offsets and buffer contents (default 1)\n"
"  --fill BYTE           buffer contents (default: pseudo-random bytes)\n"
"  --json                one JSON document on stdout\n"
"\n"
"sdio paired: every round gives each arm one slice, in a new shuffled\n"
"order; the region is split into one sub-region per arm.\n"
"  --arm SPEC            name=NAME,bs=BYTES[,offset=BYTES]\n"
"                        [,pattern=seq|rand][,flush=none|each]\n"
"                        [,rw=write|read][,mix=S1:S2:...[,align=BYTES]];\n"
"                        1 to 32 arms, NAME 1 to 32 of A-Z a-z 0-9 . _ -\n"
"                        and unique; mix: up to 32 sizes written in\n"
"                        turn, packed, each rounded up to align\n"
"  --rounds N            reported rounds (default 8)\n"
"  --warmup-rounds N     unreported rounds first (default 1)\n"
"  --slice SECONDS       least time per slice (default 0.03)\n"
"  --min-ios N           least timed I/Os per slice (default 8)\n"
"  --time SECONDS        start no round after it (default 0: no bound)\n"
"  --backend, --direct, --seed, --region, --json as above\n"
"\n"
"sdio powercut: a region of N slots (1 to 16777216) of BYTES (a power of\n"
"two, 512 to 1m) from --offset (a multiple of 512, default 0).\n"
"  --run HEX16           the run's id, 16 lowercase hex digits\n"
"  --first-seq S         the first write's number (default 1)\n"
"  --seconds T           write for T seconds, 1 to 86400 (default 600)\n"
"  --seed X              decimal (default: from the run and first seq)\n"
"  --notice-ms M         say \"F SEQ\" M ms before each flush, 0 to 60000\n"
"                        (default 500)\n"
"  --flush-every-ms E    a flush after the first burst E/2 to 3E/2 ms after\n"
"                        the last, 0 to 60000 (default 2000)\n"
"\n"
"exit status: 0 ok, 1 usage, 2 cannot open or set up the target,\n"
"             3 I/O error, 4 SCSI command failed or not supported\n";

#define	F(field)	offsetof(sdio_opts_t, field)

/* The run mode's options; order is the usage's. */
static const opt_def_t run_defs[] = {
	{ "backend", OPT_BACKEND, F(op_backend), 0, 0 },
	{ "rw", OPT_RW, F(op_write), 0, 0 },
	{ "pattern", OPT_PATTERN, F(op_pattern), 0, 0 },
	{ "bs", OPT_BYTES, F(op_bs), 1, 1ULL << 30 },
	{ "qd", OPT_UINT, F(op_qd), 1, MAX_QD },
	{ "time", OPT_SECONDS, F(op_time_s), 0, 0 },
	{ "interval", OPT_SECONDS, F(op_interval_s), 0, 0 },
	{ "offset", OPT_BYTES, F(op_offset), 0, UINT64_MAX >> 2 },
	{ "region", OPT_BYTES, F(op_region), 1, UINT64_MAX >> 2 },
	{ "flush", OPT_FLUSH, F(op_flush), 0, 0 },
	{ "direct", OPT_FLAG, F(op_direct), 0, 0 },
	{ "stable", OPT_REL, F(op_stable_rel), 0, 0 },
	{ "min-intervals", OPT_UINT, F(op_min_intervals), 2, 1000000 },
	{ "max-ios", OPT_BYTES, F(op_max_ios), 1, UINT64_MAX >> 2 },
	{ "seed", OPT_BYTES, F(op_seed), 0, UINT64_MAX },
	{ "fill", OPT_FILL, F(op_fill), 0, 255 },
	{ "json", OPT_FLAG, F(op_json), 0, 0 },
	{ NULL, OPT_FLAG, 0, 0, 0 }
};

void
sdio_usage(FILE *f)
{
	(void) fputs(usage_head, f);
	sdio_backend_usage(f);
	(void) fputs(usage_tail, f);
}

int
sdio_usage_error(const char *fmt, ...)
{
	va_list ap;

	(void) fprintf(stderr, "sdio: ");
	va_start(ap, fmt);
	(void) vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void) fprintf(stderr, "\n");
	sdio_usage(stderr);
	return (SDIO_EXIT_USAGE);
}

/* Unsigned integer with an optional binary suffix (k, m, g, t). */
int
sdio_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (*s == '-' || *s == '\0')
		return (-1);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		return (-1);
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return (-1);
	}
	if (shift != 0 && *++end != '\0')
		return (-1);
	if (shift != 0 && v > (UINT64_MAX >> shift))
		return (-1);
	*out = (uint64_t)v << shift;
	return (0);
}

/* A number that is zero however spelt ("0", "0.0", "0e3"). */
static int
is_zero(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	return (errno == 0 && end != s && *end == '\0' && v == 0.0);
}

static int
parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0.0) ||
	    v > 1e9)
		return (-1);
	*out = v;
	return (0);
}

/*
 * Store val, parsed as d says, in the field of o (an sdio_opts_t, or any
 * struct d's table describes).  Returns 0, or -1 when val is bad.
 */
int
sdio_set_option(void *o, const opt_def_t *d, const char *val)
{
	void *p = (char *)o + d->od_off;
	const sdio_ops_t *ops;
	uint64_t u;
	double x;

	switch (d->od_kind) {
	case OPT_BACKEND:
		if ((ops = sdio_backend_lookup(val)) == NULL)
			return (-1);
		*(const sdio_ops_t **)p = ops;
		return (0);
	case OPT_RW:
		if (strcmp(val, "write") != 0 && strcmp(val, "read") != 0)
			return (-1);
		*(int *)p = strcmp(val, "write") == 0;
		return (0);
	case OPT_PATTERN:
		if (strcmp(val, "seq") == 0)
			*(sdio_pattern_t *)p = PAT_SEQ;
		else if (strcmp(val, "rand") == 0)
			*(sdio_pattern_t *)p = PAT_RAND;
		else
			return (-1);
		return (0);
	case OPT_FLUSH:
		if (strcmp(val, "none") == 0)
			*(sdio_flush_t *)p = FLUSH_NONE;
		else if (strcmp(val, "each") == 0)
			*(sdio_flush_t *)p = FLUSH_EACH;
		else
			return (-1);
		return (0);
	case OPT_BYTES:
	case OPT_UINT:
	case OPT_FILL:
		if (sdio_parse_u64(val, &u) != 0 || u < d->od_min ||
		    u > d->od_max)
			return (-1);
		if (d->od_kind == OPT_BYTES)
			*(uint64_t *)p = u;
		else if (d->od_kind == OPT_UINT)
			*(unsigned int *)p = (unsigned int)u;
		else
			*(int *)p = (int)u;
		return (0);
	case OPT_SECONDS:
		if (parse_double(val, &x) != 0)
			return (-1);
		*(double *)p = x;
		return (0);
	case OPT_REL:
		/* 0 turns the rule off, so callers can always pass it. */
		if (strcmp(val, "0") == 0) {
			*(double *)p = 0.0;
			return (0);
		}
		if (parse_double(val, &x) != 0 || x >= 1.0)
			return (-1);
		*(double *)p = x;
		return (0);
	case OPT_BOUND:
		/* 0 turns the bound off, so callers can always pass it. */
		if (is_zero(val)) {
			*(double *)p = 0.0;
			return (0);
		}
		if (parse_double(val, &x) != 0)
			return (-1);
		*(double *)p = x;
		return (0);
	case OPT_FLAG:
		*(int *)p = 1;
		return (0);
	case OPT_SPEC:
		break;
	}
	return (-1);
}

/* The entry of defs named by the len bytes at name, or NULL. */
const opt_def_t *
sdio_find_option(const opt_def_t *defs, const char *name, size_t len)
{
	const opt_def_t *d;

	for (d = defs; d->od_name != NULL; d++)
		if (strlen(d->od_name) == len &&
		    strncmp(d->od_name, name, len) == 0)
			return (d);
	return (NULL);
}

/*
 * argv[*ip] starts with "--": find it in defs and its value ("--name=V",
 * "--name V", none for a flag), moving *ip past a separate value.
 * Returns 0, or SDIO_EXIT_USAGE after a message.
 */
static int
next_option(int argc, char **argv, int *ip, const opt_def_t *defs,
    const opt_def_t **dp, const char **valp)
{
	const opt_def_t *d;
	const char *name, *eq;
	size_t nlen;
	int i = *ip;

	name = argv[i] + 2;
	eq = strchr(name, '=');
	nlen = eq != NULL ? (size_t)(eq - name) : strlen(name);
	if ((d = sdio_find_option(defs, name, nlen)) == NULL)
		return (sdio_usage_error("unknown option '%s'", argv[i]));
	if (d->od_kind == OPT_FLAG) {
		if (eq != NULL)
			return (sdio_usage_error("option '--%s' takes no "
			    "value", d->od_name));
		*valp = "";
	} else if (eq != NULL) {
		*valp = eq + 1;
	} else if (i + 1 < argc) {
		*valp = argv[++i];
	} else {
		return (sdio_usage_error("option '--%s' needs a value",
		    d->od_name));
	}
	*dp = d;
	*ip = i;
	return (0);
}

/*
 * The one argv parser of both modes.  argv[0] is the program or the
 * mode's name; every later word is --help (the usage, exit 0), an option
 * of defs, or the one TARGET (any word not starting with "--", and "--"
 * itself), stored in *targetp.  Values are stored into o by
 * sdio_set_option(), except those of OPT_SPEC options, which are handed
 * to spec (NULL when defs has none).  Bit i of *seenp is set when
 * defs[i] was given, for the modes' checks of options that go together
 * (so a table has at most 64 entries).  Returns 0, or an exit status
 * after a message.
 */
int
sdio_parse_argv(int argc, char **argv, const opt_def_t *defs, void *o,
    const char **targetp, uint64_t *seenp, opt_spec_fn_t spec)
{
	const opt_def_t *d = NULL;
	const char *val = NULL;
	int i, rc;

	*targetp = NULL;
	*seenp = 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			sdio_usage(stdout);
			exit(SDIO_EXIT_OK);
		}
		if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
			if (*targetp != NULL)
				return (sdio_usage_error("more than one "
				    "target: '%s' and '%s'", *targetp,
				    argv[i]));
			*targetp = argv[i];
			continue;
		}
		if ((rc = next_option(argc, argv, &i, defs, &d, &val)) != 0)
			return (rc);
		*seenp |= 1ULL << (d - defs);
		if (d->od_kind == OPT_SPEC) {
			if ((rc = spec(o, d, val)) != 0)
				return (rc);
		} else if (sdio_set_option(o, d, val) != 0) {
			return (sdio_usage_error("bad value '%s' for --%s", val,
			    d->od_name));
		}
	}
	return (0);
}

/* Whether the option called name of defs was given (seen as above). */
static int
given(const opt_def_t *defs, uint64_t seen, const char *name)
{
	const opt_def_t *d = sdio_find_option(defs, name, strlen(name));

	return (d != NULL && (seen & (1ULL << (d - defs))) != 0);
}

/*
 * The run mode: parse argv into o.  Returns 0, or an exit status after a
 * message.
 */
int
sdio_parse_run(int argc, char **argv, sdio_opts_t *o)
{
	uint64_t seen;
	int rc;

	(void) memset(o, 0, sizeof (*o));
	o->op_write = 1;
	o->op_pattern = PAT_SEQ;
	o->op_bs = 4096;
	o->op_qd = 1;
	o->op_flush = FLUSH_NONE;
	o->op_seed = 1;
	o->op_fill = -1;
	o->op_min_intervals = DEFAULT_MIN_IVALS;

	if ((rc = sdio_parse_argv(argc, argv, run_defs, o, &o->op_target,
	    &seen, NULL)) != 0)
		return (rc);

	if (o->op_target == NULL)
		return (sdio_usage_error("no target given"));
	/* Each interval costs a slot until the end; keep their number sane. */
	if (o->op_interval_s > 0.0 && o->op_interval_s < MIN_INTERVAL_S)
		return (sdio_usage_error("--interval is below 1 ms"));
	if (o->op_stable_rel > 0.0 && o->op_interval_s <= 0.0)
		return (sdio_usage_error("--stable needs --interval"));
	if (given(run_defs, seen, "min-intervals") &&
	    !given(run_defs, seen, "stable"))
		return (sdio_usage_error("--min-intervals needs --stable"));
	if (o->op_time_s <= 0.0 && o->op_max_ios == 0)
		o->op_time_s = DEFAULT_TIME_S;
	if (o->op_region != 0 && o->op_region < o->op_bs)
		return (sdio_usage_error("--region is smaller than --bs"));
	/*
	 * The default backend when none was chosen, looked up last: that can
	 * fail only on a mismatched ops version (backend.c), a setup error.
	 */
	if (o->op_backend == NULL &&
	    (o->op_backend = sdio_backend_lookup(NULL)) == NULL)
		return (SDIO_EXIT_SETUP);
	return (0);
}
