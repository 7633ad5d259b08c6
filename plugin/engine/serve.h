/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * serve.h: what the four files of `sdio serve --root ROOT` share, and only
 * they (sdio.h declares the one entry point, sdio_serve_main).  The server
 * is a file and command server on stdin/stdout, so that sdtune on another
 * machine can use an appliance over one SSH session (ssh host --
 * /path/sdio serve --root /).  Each op keeps the Host contract that
 * sdtune's RealHost (plugin/sdtune/host/local.py) keeps on the machine
 * itself: the rules are written once, in plugin/sdtune/host/base.py, and
 * tests/contract/test_host_contract.py holds both hosts to them.
 *
 * The layers, one file each, each using only those above it:
 * 	serve_frame.c	framing: reading requests, writing answers, limits
 * 	serve_files.c	file operations, locks, and the confinement to ROOT
 * 			and the policy
 * 	serve_cmds.c	running commands
 * 	serve_dispatch.c	the table of ops, the loop, signals,
 * 			sdio_serve_main
 *
 * The wire constants are defined here alone: plugin/sdtune/host/wire.py
 * is the client's side, and tests/engine/test_wire_constants.py holds the
 * two to the same values (it reads this header) and to the same ops (the
 * table in serve_dispatch.c).
 */

#ifndef	_SERVE_H
#define	_SERVE_H

#include "sdio.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __sun
#include <zone.h>
#endif

#define	PROTO_VERSION	"3"
#define	MAX_SEQ		999999999999ULL	/* then the count starts at 1 */
#define	MAX_FIELDS	1000000
#define	MAX_FIELD	(80UL << 20)
#define	MAX_HEADER	64	/* bytes of a header line */
#define	MAX_LEN_LINE	24	/* bytes of a field's length line */
#define	IN_BUFSZ	65536
#define	OUT_BUFSZ	65536
#define	RUN_OUT_MAX	(64UL << 20)	/* a command's stdout, stderr */
#define	PART_MAX	65536	/* bytes of a stream's part */
#define	MAX_LOCKS	64
#define	CLOSE_FDS_MAX	65536	/* the child closes fds below it */
#define	POLL_MAX_MS	60000
#define	NS		1000000000LL
#define	POLICY_NAME	"sdio-serve.allow"
#define	POLICY_MAX	65536	/* bytes of a policy file */

/* One field of a request: len bytes and a NUL after them. */
typedef struct field {
	char		*f_data;
	size_t		f_len;
} field_t;

typedef struct req {
	char		q_op[MAX_HEADER];
	field_t		*q_f;
	size_t		q_n;
	size_t		q_cap;
} req_t;

/* A response being built; every field is malloc'd and owned. */
typedef struct resp {
	int		r_err;
	field_t		*r_f;
	size_t		r_n;
	size_t		r_cap;
	int		r_oom;
} resp_t;

typedef struct op {
	const char	*op_name;
	int		op_min;		/* fields */
	int		op_max;		/* -1: no upper bound */
	void		(*op_fn)(req_t *, resp_t *);
} op_t;

/*
 * Requests in, answers out (serve_frame.c).  A resp_* call that runs out
 * of memory marks the answer, which resp_send() then turns into err
 * [nomem]; resp_fail() and the like replace whatever the answer held.
 * resp_part() sends one part of a stream's answer at once (-1: the write
 * failed, and the server must end).
 */
extern int req_read(req_t *);
extern void req_free(req_t *);
extern void resp_send(resp_t *);
extern int resp_part(const void *, size_t);
extern void resp_own(resp_t *, char *, size_t);
extern void resp_mem(resp_t *, const void *, size_t);
extern void resp_str(resp_t *, const char *);
extern void resp_num(resp_t *, long long);
extern void resp_unum(resp_t *, unsigned long long);
extern void resp_fail(resp_t *, const char *, const char *);
extern void resp_failf(resp_t *, const char *, const char *, ...)
    __attribute__((format(printf, 3, 4)));
extern void resp_errno(resp_t *, const char *, int);
extern const char *fstr(req_t *, size_t, resp_t *);
extern int fnum(req_t *, size_t, long long, long long, long long *,
    resp_t *);

/* Nanoseconds of a timespec, as stat and now answer them. */
static inline long long
ts_ns(const struct timespec *ts)
{
	return ((long long)ts->tv_sec * NS + ts->tv_nsec);
}

/*
 * Files, locks and confinement (serve_files.c).  confine_setup() takes
 * ROOT (absolute, normal) and the policy file --allow names (NULL: the one
 * beside the engine); serve_may_run() is the policy's word on a command.
 */
extern char *abspath(const char *);
extern int confine_setup(const char *, const char *);
extern void confine_free(void);
extern int serve_may_run(const char *);
extern void locks_init(void);
extern void release_all(void);
extern void op_read(req_t *, resp_t *);
extern void op_stat(req_t *, resp_t *);
extern void op_lstat(req_t *, resp_t *);
extern void op_listdir(req_t *, resp_t *);
extern void op_readlink(req_t *, resp_t *);
extern void op_readlinks(req_t *, resp_t *);
extern void op_samefile(req_t *, resp_t *);
extern void op_access(req_t *, resp_t *);
extern void op_create(req_t *, resp_t *);
extern void op_replace(req_t *, resp_t *);
extern void op_check_replaceable(req_t *, resp_t *);
extern void op_mkdirs(req_t *, resp_t *);
extern void op_remove(req_t *, resp_t *);
extern void op_rmdir(req_t *, resp_t *);
extern void op_lock(req_t *, resp_t *);
extern void op_unlock(req_t *, resp_t *);

/* Commands (serve_cmds.c). */
extern void op_can_run(req_t *, resp_t *);
extern void op_run(req_t *, resp_t *);
extern void op_stream(req_t *, resp_t *);
/*
 * What the signal handlers (serve_dispatch.c) clean up: the temporary
 * file a replace or create is writing (serve_files.c), the command run or
 * stream is running (serve_cmds.c).
 */
extern char *volatile pending_tmp;
extern volatile pid_t pending_child;

#endif	/* _SERVE_H */
