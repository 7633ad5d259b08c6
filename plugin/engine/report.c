/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * report.c: the run mode's result, rendered once at the end, as one JSON
 * document (--json, the contract with the Python side: DESIGN.md seam 3)
 * or as a few lines for a person.  Nothing is printed while the workload
 * runs, so that writing output never sits inside a measured I/O's time.
 * The errors array and the op names are shared with `sdio paired`.
 */

#include "sdio.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

#define	SDIO_JSON_VERSION	1

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

/* The run mode's output for r, as o asks (--json or not). */
void
sdio_report_run(const sdio_opts_t *o, const sdio_result_t *r)
{
	if (o->op_json)
		print_json(o, r);
	else
		print_human(o, r);
}
