/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * sdio.h: types shared by the sdio engine's files.  Include it first:
 * it sets the feature-test macros before any system header is read.
 */

#ifndef	_SDIO_H
#define	_SDIO_H

#ifdef __linux__
#ifndef _GNU_SOURCE
#define	_GNU_SOURCE		/* O_DIRECT, pread/pwrite under -std=c99 */
#endif
#endif

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#ifdef __sun
#include <sys/time.h>		/* gethrtime() */
#endif

/*
 * The engine's version, printed by `sdio --version` as "sdio <version>";
 * certify stores it with every record (origin.engine_version), so that a
 * record exported to another appliance says which engine measured it.
 * Change it whenever what the engine measures or reports changes.
 */
#define	SDIO_VERSION		"0.1.0"

/* Exit codes: the contract with the Python side (see sdio.c). */
#define	SDIO_EXIT_OK		0
#define	SDIO_EXIT_USAGE		1
#define	SDIO_EXIT_SETUP		2
#define	SDIO_EXIT_IO		3
#define	SDIO_EXIT_SCSI		4

/*
 * A backend.  open() fills in the device (descriptor, size) or returns
 * an errno value; io() transfers len bytes at off and returns 0 or an
 * errno value (a short transfer is EIO); flush() makes earlier writes
 * durable and returns 0 or an errno value.  io() and flush() are called
 * concurrently from every worker thread on the same device and must not
 * take locks.
 */
typedef struct sdio_dev {
	int		d_fd;
	int		d_flags;	/* SDIO_DEV_* */
	uint64_t	d_size;		/* bytes; 0 when unknown */
	const char	*d_path;
} sdio_dev_t;

#define	SDIO_DEV_REG	0x1	/* a regular file */
#define	SDIO_DEV_RAW	0x2	/* a block or character device */

/*
 * Backends are found by name in one table (backend.c), the same for both
 * modes.  o_version is the SDIO_OPS_VERSION a backend was written
 * against: the lookup refuses a table of another version rather than
 * call through slots whose meaning has changed, so bump it whenever a
 * slot is added, removed or changes its contract.  o_flags says what the
 * engine must know of a backend without calling it (SDIO_OPS_*).
 */
#define	SDIO_OPS_VERSION	1

/* It does no I/O at all; the usage says so, from this flag. */
#define	SDIO_OPS_NOIO		0x1
/*
 * It honours SDIO_OPEN_DIRECT: --direct is passed on to o_open, whose
 * EINVAL may then be the file system refusing direct I/O.
 */
#define	SDIO_OPS_DIRECT		0x2

typedef struct sdio_ops {
	int		o_version;	/* SDIO_OPS_VERSION */
	const char	*o_name;
	uint32_t	o_flags;	/* SDIO_OPS_* */
	int		(*o_open)(sdio_dev_t *, const char *, int);
	void		(*o_close)(sdio_dev_t *);
	int		(*o_io)(sdio_dev_t *, void *, size_t, uint64_t, int);
	int		(*o_flush)(sdio_dev_t *);
} sdio_ops_t;

/* o_open flags and o_io direction */
#define	SDIO_OPEN_WRITE		0x1
#define	SDIO_OPEN_DIRECT	0x2
#define	SDIO_IO_READ		0
#define	SDIO_IO_WRITE		1

extern const sdio_ops_t sdio_sync_ops;
extern const sdio_ops_t sdio_null_ops;

extern const sdio_ops_t *sdio_backend_lookup(const char *);
extern void sdio_backend_usage(FILE *);
extern int sdio_open_target(const sdio_ops_t *, sdio_dev_t *, const char *,
    int, int);

typedef enum { PAT_SEQ, PAT_RAND } sdio_pattern_t;
typedef enum { FLUSH_NONE, FLUSH_EACH } sdio_flush_t;
typedef enum {
	STOP_TIME, STOP_STABLE, STOP_IOS, STOP_ERROR
} sdio_stop_t;

typedef struct sdio_opts {
	const sdio_ops_t *op_backend;
	const char	*op_target;
	int		op_write;	/* 1 write, 0 read */
	sdio_pattern_t	op_pattern;
	uint64_t	op_bs;
	unsigned int	op_qd;
	double		op_time_s;	/* 0: no time limit */
	double		op_interval_s;	/* 0: no intervals */
	uint64_t	op_offset;
	uint64_t	op_region;	/* 0: the target's size - offset */
	sdio_flush_t	op_flush;
	int		op_direct;
	uint64_t	op_seed;
	int		op_fill;	/* -1: pseudo-random contents */
	double		op_stable_rel;	/* 0: off */
	unsigned int	op_min_intervals;
	uint64_t	op_max_ios;	/* 0: no limit */
	int		op_json;
} sdio_opts_t;

/* One recorded I/O error. */
typedef struct sdio_err {
	int		e_op;		/* SDIO_OP_* */
	int		e_errno;
	uint64_t	e_offset;
} sdio_err_t;

#define	SDIO_OP_READ	0
#define	SDIO_OP_WRITE	1
#define	SDIO_OP_FLUSH	2

/* Finished statistics of one interval. */
typedef struct sdio_ival {
	uint64_t	iv_start_ns;
	uint64_t	iv_end_ns;
	uint64_t	iv_ios;
	double		iv_mean;
	double		iv_stddev;
	uint64_t	iv_min;
	uint64_t	iv_max;
	uint64_t	iv_p50;
	uint64_t	iv_p90;
	uint64_t	iv_p99;
} sdio_ival_t;

/* What a run produced; rendered once at the end (report.c). */
typedef struct sdio_result {
	uint64_t	r_ios;
	uint64_t	r_elapsed_ns;
	double		r_mean;
	double		r_stddev;
	uint64_t	r_min;
	uint64_t	r_max;
	uint64_t	r_p50;
	uint64_t	r_p90;
	uint64_t	r_p99;
	uint64_t	r_p99_9;
	sdio_ival_t	*r_ivals;
	uint64_t	r_nivals;
	uint64_t	*r_threads;	/* I/Os per worker thread */
	unsigned int	r_nthreads;
	sdio_err_t	*r_errs;
	unsigned int	r_nerrs;
	sdio_stop_t	r_stopped;
} sdio_result_t;

/*
 * Options as data (opts.c): the run mode and `sdio paired` describe
 * their options, and paired its --arm keys, in tables of opt_def_t, and
 * one parser reads argv against either table, so that every value is
 * parsed, bounded and refused the same way.
 */
typedef enum {
	OPT_BACKEND, OPT_RW, OPT_PATTERN, OPT_FLUSH,	/* words */
	OPT_BYTES, OPT_UINT, OPT_SECONDS, OPT_REL,	/* numbers */
	OPT_BOUND,	/* seconds, or 0 (any spelling) for none */
	OPT_FILL, OPT_FLAG,
	OPT_SPEC	/* a value the caller parses itself */
} opt_kind_t;

typedef struct opt_def {
	const char	*od_name;
	opt_kind_t	od_kind;
	size_t		od_off;		/* field in the caller's struct */
	uint64_t	od_min;		/* for numbers */
	uint64_t	od_max;
} opt_def_t;

/* A handler of OPT_SPEC values: 0, or an exit status after a message. */
typedef int (*opt_spec_fn_t)(void *, const opt_def_t *, const char *);

extern void sdio_usage(FILE *);
extern int sdio_usage_error(const char *, ...)
    __attribute__((format(printf, 1, 2)));
extern int sdio_parse_u64(const char *, uint64_t *);
extern const opt_def_t *sdio_find_option(const opt_def_t *, const char *,
    size_t);
extern int sdio_set_option(void *, const opt_def_t *, const char *);
extern int sdio_parse_argv(int, char **, const opt_def_t *, void *,
    const char **, uint64_t *, opt_spec_fn_t);
extern int sdio_parse_run(int, char **, sdio_opts_t *);
extern const char *sdio_op_name(int);
extern void sdio_json_errors(FILE *, const sdio_err_t *, unsigned int);
extern void sdio_report_run(const sdio_opts_t *, const sdio_result_t *);
extern void sdio_fill_buffer(uint8_t *, size_t, int, uint64_t);

extern int sdio_run(const sdio_opts_t *, sdio_dev_t *, sdio_result_t *,
    char *, size_t);
extern int sdio_paired_main(int, char **);
extern int sdio_selftest_hist(int, char **);
extern int sdio_selftest_median(void);
extern int sdio_scsi_main(int, char **);
extern int sdio_serve_main(int, char **);
extern int sdio_diskmgt_main(int, char **);
extern int sdio_powercut_main(int, char **);

/* splitmix64 (Steele, Lea, Flood): one add, three xor-shifts, two muls. */
static inline uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z;

	z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31));
}

/* Uniform in [0, n): the high word of x * n, no division. */
static inline uint64_t
scale64(uint64_t x, uint64_t n)
{
#ifdef __SIZEOF_INT128__
	return ((uint64_t)(((unsigned __int128)x * n) >> 64));
#else
	return (x % n);
#endif
}

/* Monotonic nanoseconds: one read per completed I/O. */
static inline uint64_t
sdio_now(void)
{
#ifdef __sun
	return ((uint64_t)gethrtime());
#else
	struct timespec ts;

	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
#endif
}

#endif	/* _SDIO_H */
