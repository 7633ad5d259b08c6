/*
 * sdio: the measuring core of sdtune.  argv in, one JSON document out
 * (DESIGN.md seam 3); Python never links it.
 *
 *	sdio [options] TARGET
 *	sdio paired [options] --arm SPEC [--arm SPEC ...] TARGET
 *	sdio scsi inquiry|vpd PAGE|readcap16|modesense PAGE DEVICE [--json]
 *
 * The workload runs qd threads of synchronous I/O on TARGET (a file or a
 * raw device) through a backend's ops table (sync: pread/pwrite; null: no
 * I/O, to measure the engine itself) and reports the latency histogram's
 * percentiles, Welford mean/stddev, min/max, per-interval statistics and
 * any I/O errors, rendered once at the end.  See run.c for the loop,
 * hist.c for the histogram and its error bound, scsi.c for the
 * pass-through subcommand.  `sdio paired` (paired.c) measures several
 * workloads ("arms") in alternating rounds in one thread, so that drift
 * and machine load hit them alike, and reports per-round, per-arm slice
 * statistics for paired comparison.  This file holds the option parsing
 * both modes share.
 *
 * Exit status (the contract with the Python side):
 *	0	success
 *	1	usage: bad option or value
 *	2	the target cannot be opened or set up (missing, no size,
 *		out of memory, no threads)
 *	3	an I/O error stopped the run (the JSON is still printed, the
 *		errors listed with op, offset and errno; sdio paired lists
 *		the rounds completed before it)
 *	4	a SCSI command failed or the target does not take SCSI
 *		commands (sdio scsi)
 */

#include "sdio.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "json.h"
#include "stats.h"

#define	SDIO_JSON_VERSION	1
#define	DEFAULT_TIME_S		10.0
#define	DEFAULT_MIN_IVALS	5
#define	MAX_QD			4096
#define	MIN_INTERVAL_S		0.001

static const char usage_text[] =
"usage: sdio [options] TARGET\n"
"       sdio paired [paired options] --arm SPEC [--arm SPEC ...] TARGET\n"
"       sdio scsi inquiry|vpd PAGE|readcap16|modesense PAGE DEVICE [--json]\n"
"\n"
"  --backend sync|null   I/O backend (default sync; null does no I/O)\n"
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
"                        [,rw=write|read]; 1 to 32 arms, NAME 1 to 32 of\n"
"                        A-Z a-z 0-9 . _ - and unique\n"
"  --rounds N            reported rounds (default 8)\n"
"  --warmup-rounds N     unreported rounds first (default 1)\n"
"  --slice SECONDS       least time per slice (default 0.03)\n"
"  --min-ios N           least timed I/Os per slice (default 8)\n"
"  --time SECONDS        stop after the round that passes it (default 0:\n"
"                        no bound)\n"
"  --backend, --direct, --seed, --region, --json as above\n"
"\n"
"exit status: 0 ok, 1 usage, 2 cannot open or set up the target,\n"
"             3 I/O error, 4 SCSI command failed or not supported\n";

#define	F(field)	offsetof(sdio_opts_t, field)

/* The options as data; order is the usage's. */
static const opt_def_t opt_defs[] = {
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
	(void) fputs(usage_text, f);
}

int
sdio_usage_error(const char *fmt, const char *a, const char *b)
{
	(void) fprintf(stderr, "sdio: ");
	(void) fprintf(stderr, fmt, a, b);
	(void) fprintf(stderr, "\n%s", usage_text);
	return (SDIO_EXIT_USAGE);
}

/* Unsigned integer with an optional binary suffix (k, m, g, t). */
static int
parse_u64(const char *s, uint64_t *out)
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
	uint64_t u;
	double x;

	switch (d->od_kind) {
	case OPT_BACKEND:
		if (strcmp(val, "sync") == 0)
			*(const sdio_ops_t **)p = &sdio_sync_ops;
		else if (strcmp(val, "null") == 0)
			*(const sdio_ops_t **)p = &sdio_null_ops;
		else
			return (-1);
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
		if (parse_u64(val, &u) != 0 || u < d->od_min || u > d->od_max)
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

/*
 * argv[*ip] starts with "--": find it in defs and its value ("--name=V",
 * "--name V", none for a flag), moving *ip past a separate value.
 * Returns 0, or SDIO_EXIT_USAGE after a message.
 */
int
sdio_next_option(int argc, char **argv, int *ip, const opt_def_t *defs,
    const opt_def_t **dp, const char **valp)
{
	const opt_def_t *d;
	const char *name, *eq;
	size_t nlen;
	int i = *ip;

	name = argv[i] + 2;
	eq = strchr(name, '=');
	nlen = eq != NULL ? (size_t)(eq - name) : strlen(name);
	for (d = defs; d->od_name != NULL; d++)
		if (strlen(d->od_name) == nlen &&
		    strncmp(d->od_name, name, nlen) == 0)
			break;
	if (d->od_name == NULL)
		return (sdio_usage_error("unknown option '%s'%s", argv[i],
		    ""));
	if (d->od_kind == OPT_FLAG) {
		if (eq != NULL)
			return (sdio_usage_error("option '--%s' takes no "
			    "value%s", d->od_name, ""));
		*valp = "";
	} else if (eq != NULL) {
		*valp = eq + 1;
	} else if (i + 1 < argc) {
		*valp = argv[++i];
	} else {
		return (sdio_usage_error("option '--%s' needs a value%s",
		    d->od_name, ""));
	}
	*dp = d;
	*ip = i;
	return (0);
}

/* Parse argv into o.  Returns 0, or an exit status after a message. */
static int
parse_args(int argc, char **argv, sdio_opts_t *o)
{
	const opt_def_t *d;
	const char *val;
	int i, rc, seen_min = 0, seen_stable = 0;

	(void) memset(o, 0, sizeof (*o));
	o->op_backend = &sdio_sync_ops;
	o->op_write = 1;
	o->op_pattern = PAT_SEQ;
	o->op_bs = 4096;
	o->op_qd = 1;
	o->op_flush = FLUSH_NONE;
	o->op_seed = 1;
	o->op_fill = -1;
	o->op_min_intervals = DEFAULT_MIN_IVALS;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			(void) fputs(usage_text, stdout);
			exit(SDIO_EXIT_OK);
		}
		if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
			if (o->op_target != NULL)
				return (sdio_usage_error("more than one "
				    "target: '%s' and '%s'", o->op_target,
				    argv[i]));
			o->op_target = argv[i];
			continue;
		}
		if ((rc = sdio_next_option(argc, argv, &i, opt_defs, &d,
		    &val)) != 0)
			return (rc);
		if (sdio_set_option(o, d, val) != 0)
			return (sdio_usage_error("bad value '%s' for --%s", val,
			    d->od_name));
		if (strcmp(d->od_name, "min-intervals") == 0)
			seen_min = 1;
		if (strcmp(d->od_name, "stable") == 0)
			seen_stable = 1;
	}

	if (o->op_target == NULL)
		return (sdio_usage_error("no target given%s%s", "", ""));
	/* Each interval costs a slot until the end; keep their number sane. */
	if (o->op_interval_s > 0.0 && o->op_interval_s < MIN_INTERVAL_S)
		return (sdio_usage_error("--interval is below 1 ms%s%s", "",
		    ""));
	if (o->op_stable_rel > 0.0 && o->op_interval_s <= 0.0)
		return (sdio_usage_error("--stable needs --interval%s%s", "",
		    ""));
	if (seen_min && !seen_stable)
		return (sdio_usage_error("--min-intervals needs --stable%s%s",
		    "", ""));
	if (o->op_time_s <= 0.0 && o->op_max_ios == 0)
		o->op_time_s = DEFAULT_TIME_S;
	if (o->op_region != 0 && o->op_region < o->op_bs)
		return (sdio_usage_error("--region is smaller than --bs%s%s",
		    "", ""));
	return (0);
}

const char *
sdio_op_name(int op)
{
	switch (op) {
	case SDIO_OP_READ:
		return ("read");
	case SDIO_OP_WRITE:
		return ("write");
	default:
		return ("flush");
	}
}

static const char *
stop_name(sdio_stop_t s)
{
	switch (s) {
	case STOP_TIME:
		return ("time");
	case STOP_STABLE:
		return ("stable");
	case STOP_IOS:
		return ("ios");
	default:
		return ("error");
	}
}

static double
per_second(uint64_t n, uint64_t ns)
{
	return (ns == 0 ? 0.0 : (double)n * 1e9 / (double)ns);
}

/* The errors array, shared with sdio paired: op, offset, errno, error. */
void
sdio_json_errors(FILE *f, const sdio_err_t *errs, unsigned int n)
{
	const sdio_err_t *e;
	unsigned int i;

	(void) fprintf(f, "[");
	for (i = 0; i < n; i++) {
		e = &errs[i];
		(void) fprintf(f, "%s{\"op\": \"%s\", \"offset\": %llu, "
		    "\"errno\": %d, \"error\": ", i == 0 ? "" : ", ",
		    sdio_op_name(e->e_op), (unsigned long long)e->e_offset,
		    e->e_errno);
		json_string(f, strerror(e->e_errno));
		(void) fprintf(f, "}");
	}
	(void) fprintf(f, "]");
}

static void
print_json(const sdio_opts_t *o, const sdio_result_t *r)
{
	const sdio_ival_t *iv;
	uint64_t i;
	FILE *f = stdout;

	(void) fprintf(f, "{\"version\": %d, \"target\": ", SDIO_JSON_VERSION);
	json_string(f, o->op_target);
	(void) fprintf(f, ", \"backend\": ");
	json_string(f, o->op_backend->o_name);

	(void) fprintf(f, ",\n \"options\": {\"rw\": \"%s\", \"pattern\": "
	    "\"%s\", \"bs\": %llu, \"qd\": %u, \"time_s\": ",
	    o->op_write ? "write" : "read",
	    o->op_pattern == PAT_RAND ? "rand" : "seq",
	    (unsigned long long)o->op_bs, o->op_qd);
	json_double(f, o->op_time_s, 6);
	(void) fprintf(f, ", \"interval_s\": ");
	json_double(f, o->op_interval_s, 6);
	(void) fprintf(f, ", \"offset\": %llu, \"region\": %llu, "
	    "\"flush\": \"%s\", \"direct\": %s, \"seed\": %llu},\n",
	    (unsigned long long)o->op_offset,
	    (unsigned long long)o->op_region,
	    o->op_flush == FLUSH_EACH ? "each" : "none",
	    o->op_direct ? "true" : "false",
	    (unsigned long long)o->op_seed);

	(void) fprintf(f, " \"summary\": {\"ios\": %llu, \"bytes\": %llu, "
	    "\"elapsed_ns\": %llu, \"iops\": ",
	    (unsigned long long)r->r_ios,
	    (unsigned long long)(r->r_ios * o->op_bs),
	    (unsigned long long)r->r_elapsed_ns);
	json_double(f, per_second(r->r_ios, r->r_elapsed_ns), 3);
	(void) fprintf(f, ", \"bw_bytes_per_s\": ");
	json_double(f, per_second(r->r_ios * o->op_bs, r->r_elapsed_ns), 3);
	(void) fprintf(f, ",\n  \"lat_ns\": {\"mean\": ");
	json_double(f, r->r_mean, 3);
	(void) fprintf(f, ", \"stddev\": ");
	json_double(f, r->r_stddev, 3);
	(void) fprintf(f, ", \"min\": %llu, \"max\": %llu, \"p50\": %llu, "
	    "\"p90\": %llu, \"p99\": %llu, \"p99_9\": %llu}},\n",
	    (unsigned long long)r->r_min, (unsigned long long)r->r_max,
	    (unsigned long long)r->r_p50, (unsigned long long)r->r_p90,
	    (unsigned long long)r->r_p99, (unsigned long long)r->r_p99_9);

	(void) fprintf(f, " \"intervals\": [");
	for (i = 0; i < r->r_nivals; i++) {
		iv = &r->r_ivals[i];
		(void) fprintf(f, "%s\n  {\"index\": %llu, \"start_ns\": %llu, "
		    "\"end_ns\": %llu, \"ios\": %llu, \"bytes\": %llu, "
		    "\"iops\": ", i == 0 ? "" : ",",
		    (unsigned long long)i,
		    (unsigned long long)iv->iv_start_ns,
		    (unsigned long long)iv->iv_end_ns,
		    (unsigned long long)iv->iv_ios,
		    (unsigned long long)(iv->iv_ios * o->op_bs));
		json_double(f, per_second(iv->iv_ios,
		    iv->iv_end_ns - iv->iv_start_ns), 3);
		(void) fprintf(f, ", \"lat_ns\": {\"mean\": ");
		json_double(f, iv->iv_mean, 3);
		(void) fprintf(f, ", \"stddev\": ");
		json_double(f, iv->iv_stddev, 3);
		(void) fprintf(f, ", \"min\": %llu, \"max\": %llu, "
		    "\"p50\": %llu, \"p90\": %llu, \"p99\": %llu}}",
		    (unsigned long long)iv->iv_min,
		    (unsigned long long)iv->iv_max,
		    (unsigned long long)iv->iv_p50,
		    (unsigned long long)iv->iv_p90,
		    (unsigned long long)iv->iv_p99);
	}
	(void) fprintf(f, "],\n \"errors\": ");
	sdio_json_errors(f, r->r_errs, r->r_nerrs);
	(void) fprintf(f, ",\n \"threads\": [");
	for (i = 0; i < r->r_nthreads; i++)
		(void) fprintf(f, "%s{\"ios\": %llu}", i == 0 ? "" : ", ",
		    (unsigned long long)r->r_threads[i]);
	(void) fprintf(f, "],\n \"stopped\": \"%s\"}\n",
	    stop_name(r->r_stopped));
}

static void
print_human(const sdio_opts_t *o, const sdio_result_t *r)
{
	unsigned int i;

	(void) printf("%s: %s %s %s, bs %llu, qd %u\n", o->op_target,
	    o->op_backend->o_name, o->op_pattern == PAT_RAND ? "random" :
	    "sequential", o->op_write ? "write" : "read",
	    (unsigned long long)o->op_bs, o->op_qd);
	(void) printf("  %llu I/Os in %.3f s: %.1f IOPS, %.1f MB/s "
	    "(stopped: %s)\n", (unsigned long long)r->r_ios,
	    (double)r->r_elapsed_ns / 1e9,
	    per_second(r->r_ios, r->r_elapsed_ns),
	    per_second(r->r_ios * o->op_bs, r->r_elapsed_ns) / 1e6,
	    stop_name(r->r_stopped));
	(void) printf("  latency us: mean %.2f, stddev %.2f, min %.2f, "
	    "p50 %.2f, p90 %.2f, p99 %.2f, p99.9 %.2f, max %.2f\n",
	    r->r_mean / 1e3, r->r_stddev / 1e3, (double)r->r_min / 1e3,
	    (double)r->r_p50 / 1e3, (double)r->r_p90 / 1e3,
	    (double)r->r_p99 / 1e3, (double)r->r_p99_9 / 1e3,
	    (double)r->r_max / 1e3);
	for (i = 0; i < r->r_nerrs; i++)
		(void) printf("  error: %s at offset %llu: %s\n",
		    sdio_op_name(r->r_errs[i].e_op),
		    (unsigned long long)r->r_errs[i].e_offset,
		    strerror(r->r_errs[i].e_errno));
}

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
			if (parse_u64(argv[++i], &u) != 0 || u < 1 || u > 64)
				return (SDIO_EXIT_USAGE);
			nsplit = (unsigned int)u;
		} else if (parse_u64(argv[i], &u) == 0 && u <= 1000000 &&
		    nppm < 64) {
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

int
main(int argc, char **argv)
{
	sdio_opts_t o;
	sdio_dev_t dev;
	sdio_result_t res;
	char msg[256];
	uint64_t size;
	int rc, flags;

	if (argc >= 2 && strcmp(argv[1], "scsi") == 0)
		return (sdio_scsi_main(argc - 2, argv + 2));
	if (argc >= 2 && strcmp(argv[1], "paired") == 0)
		return (sdio_paired_main(argc - 1, argv + 1));
	if (argc >= 2 && strcmp(argv[1], "--selftest-hist") == 0)
		return (sdio_selftest_hist(argc - 2, argv + 2));
	if (argc == 2 && strcmp(argv[1], "--selftest-median") == 0)
		return (sdio_selftest_median());
	if ((rc = parse_args(argc, argv, &o)) != 0)
		return (rc);

	(void) memset(&dev, 0, sizeof (dev));
	dev.d_fd = -1;
	flags = (o.op_write ? SDIO_OPEN_WRITE : 0) |
	    (o.op_direct ? SDIO_OPEN_DIRECT : 0);
	if ((rc = o.op_backend->o_open(&dev, o.op_target, flags)) != 0) {
		(void) fprintf(stderr, "sdio: cannot open '%s': %s\n",
		    o.op_target, rc == EINVAL && !o.op_direct ?
		    "not a file or device" : strerror(rc));
		return (SDIO_EXIT_SETUP);
	}

	size = dev.d_size;
	if (o.op_region == 0) {
		if (size <= o.op_offset || size - o.op_offset < o.op_bs) {
			(void) fprintf(stderr, "sdio: cannot set up '%s': "
			    "size %llu leaves no room for one %llu-byte I/O "
			    "after offset %llu; give --region\n", o.op_target,
			    (unsigned long long)size,
			    (unsigned long long)o.op_bs,
			    (unsigned long long)o.op_offset);
			o.op_backend->o_close(&dev);
			return (SDIO_EXIT_SETUP);
		}
		o.op_region = size - o.op_offset;
	}
	o.op_region -= o.op_region % o.op_bs;
	/* Past the end of a device or a file being read is always an error. */
	if (size > 0 && ((dev.d_flags & SDIO_DEV_RAW) || !o.op_write) &&
	    o.op_offset + o.op_region > size) {
		(void) fprintf(stderr, "sdio: --offset %llu + --region %llu "
		    "exceeds the size of '%s' (%llu)\n",
		    (unsigned long long)o.op_offset,
		    (unsigned long long)o.op_region, o.op_target,
		    (unsigned long long)size);
		o.op_backend->o_close(&dev);
		return (SDIO_EXIT_USAGE);
	}

	rc = sdio_run(&o, &dev, &res, msg, sizeof (msg));
	o.op_backend->o_close(&dev);
	if (rc != 0) {
		(void) fprintf(stderr, "sdio: cannot set up '%s': %s\n",
		    o.op_target, msg);
		return (rc);
	}
	if (o.op_json)
		print_json(&o, &res);
	else
		print_human(&o, &res);
	if (fflush(stdout) != 0) {
		(void) fprintf(stderr, "sdio: cannot write output: %s\n",
		    strerror(errno));
		return (SDIO_EXIT_SETUP);
	}
	rc = res.r_nerrs > 0 ? SDIO_EXIT_IO : SDIO_EXIT_OK;
	free(res.r_ivals);
	free(res.r_threads);
	free(res.r_errs);
	return (rc);
}
