/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * serve_dispatch.c: `sdio serve --root ROOT [--allow /POLICY]`: the table
 * of ops, the loop that answers each request with the op it names, the
 * signal handlers, and sdio_serve_main, the entry point sdio.c calls.
 *
 * Errors are err [CODE, DETAIL...]; a failed system call is
 * err [errno, STAGE, strerror, ERRNO-NUMBER].  Ops (fields -> ok fields):
 * 	hello []		[3, euid, user, pid, root, zone]
 * 				(zone: the zone's name on illumos, "" elsewhere)
 * 	read [path, limit]	[bytes]; toolarge [limit]
 * 	stat, lstat [path]	[mode, ino, dev, nlink, uid, gid, size,
 * 				atime_ns, mtime_ns, ctime_ns]
 * 	listdir [path]		names, sorted bytewise, no . and ..
 * 	readlink [path]		[target]
 * 	readlinks [dir]		name, target of every symlink, by name
 * 	samefile [a, b]		[1|0]
 * 	access [path, mode]	[1|0]
 * 	can_run [path]		[1|0]: absolute, a regular file, X_OK
 * 	create [path, mode, data]	[]; exists, symlink
 * 	replace [path, default_mode, data]	[]; notreg, perm, owner,
 * 				symlink, tmpexists, group, sync
 * 	check_replaceable [path]	[]; as replace, and dirnotwritable
 * 	mkdirs [path, mode]	[]
 * 	remove [path]		[]
 * 	rmdir [path]		[]: an empty directory
 * 	lock [path]		[]; locked
 * 	unlock [path]		[]; notlocked
 * 	run [path, timeout_ms, has_stdin, stdin, args...]
 * 				[exit_status, signal, stdout, stderr,
 * 				elapsed_ns]; timeout, toolarge
 * 	stream [path, timeout_ms, has_stdin, stdin, args...]
 * 				as run, but every piece of the command's
 * 				stdout (at most PART_MAX bytes) is sent as it
 * 				is read, flushed, as an answer "part 1 SEQ"
 * 				[bytes] (SEQ the stream request's); then run's
 * 				ok, its stdout "" (it went in parts, uncapped),
 * 				or run's err.  Only a stream gets parts.
 * 	now []			[realtime ns]
 * 	bye []			[], then exit 0
 * An unknown op or a wrong field count is err [usage, DESCRIPTION]; a
 * request the policy (serve_files.c) does not allow is err [denied, WHAT].
 */

#include "serve.h"

/* ROOT as served, for hello. */
static const char	*root;

/* -- session ops -------------------------------------------------------- */

static void
op_hello(req_t *q, resp_t *r)
{
	struct passwd *pw;

	(void) q;
	resp_str(r, PROTO_VERSION);
	resp_unum(r, (unsigned long long)geteuid());
	if ((pw = getpwuid(geteuid())) != NULL && pw->pw_name != NULL)
		resp_str(r, pw->pw_name);
	else
		resp_unum(r, (unsigned long long)geteuid());
	resp_num(r, (long long)getpid());
	resp_str(r, root);
	/*
	 * sd.conf and the disks belong to the global zone: the client
	 * refuses to tune from any other, as the launcher does locally.
	 */
#ifdef __sun
	{
		char zone[ZONENAME_MAX];

		if (getzonenamebyid(getzoneid(), zone, sizeof (zone)) < 0)
			(void) strlcpy(zone, "?", sizeof (zone));
		resp_str(r, zone);
	}
#else
	resp_str(r, "");
#endif
}

static void
op_now(req_t *q, resp_t *r)
{
	struct timespec ts;

	(void) q;
	(void) clock_gettime(CLOCK_REALTIME, &ts);
	resp_num(r, ts_ns(&ts));
}

static void
op_bye(req_t *q, resp_t *r)
{
	(void) q;
	(void) r;
}

/* -- the loop ----------------------------------------------------------- */

static const op_t ops[] = {
	{ "hello", 0, 0, op_hello },
	{ "read", 2, 2, op_read },
	{ "stat", 1, 1, op_stat },
	{ "lstat", 1, 1, op_lstat },
	{ "listdir", 1, 1, op_listdir },
	{ "readlink", 1, 1, op_readlink },
	{ "readlinks", 1, 1, op_readlinks },
	{ "samefile", 2, 2, op_samefile },
	{ "access", 2, 2, op_access },
	{ "can_run", 1, 1, op_can_run },
	{ "create", 3, 3, op_create },
	{ "replace", 3, 3, op_replace },
	{ "check_replaceable", 1, 1, op_check_replaceable },
	{ "mkdirs", 2, 2, op_mkdirs },
	{ "remove", 1, 1, op_remove },
	{ "rmdir", 1, 1, op_rmdir },
	{ "lock", 1, 1, op_lock },
	{ "unlock", 1, 1, op_unlock },
	{ "run", 4, -1, op_run },
	{ "stream", 4, -1, op_stream },
	{ "now", 0, 0, op_now },
	{ "bye", 0, 0, op_bye },
	{ NULL, 0, 0, NULL }
};

/* SIGTERM, SIGHUP, SIGINT: no temporary file, no command left behind. */
static void
on_signal(int sig)
{
	char *p = pending_tmp;
	pid_t c = pending_child;

	if (p != NULL)
		(void) unlink(p);
	if (c > 0)
		(void) kill(c, SIGKILL);
	_exit(128 + sig);
}

int
sdio_serve_main(int argc, char **argv)
{
	struct sigaction sa;
	req_t q;
	resp_t r;
	const op_t *op;
	char *rt;
	int i, fd, bye;

	if ((argc != 2 && argc != 4) || strcmp(argv[0], "--root") != 0 ||
	    argv[1][0] == '\0' || (argc == 4 && (strcmp(argv[2], "--allow") !=
	    0 || argv[3][0] != '/')))
		return (sdio_usage_error("serve: want --root ROOT "
		    "[--allow /POLICY]"));
	if ((rt = abspath(argv[1])) == NULL) {
		(void) fprintf(stderr, "sdio: out of memory\n");
		return (SDIO_EXIT_SETUP);
	}
	root = rt;
	if (confine_setup(rt, argc == 4 ? argv[3] : NULL) != 0) {
		confine_free();
		free(rt);
		return (SDIO_EXIT_SETUP);
	}
	locks_init();
	/*
	 * Descriptors 0 to 2 open, so that no pipe of a command becomes one
	 * of them and is lost to the child's dup2()s.
	 */
	for (i = 0; i < 3; i++) {
		if (fcntl(i, F_GETFD) >= 0)
			continue;
		if ((fd = open("/dev/null", O_RDWR)) >= 0 && fd != i) {
			(void) dup2(fd, i);
			(void) close(fd);
		}
	}

	(void) memset(&sa, 0, sizeof (sa));
	(void) sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	(void) sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	(void) sigaddset(&sa.sa_mask, SIGTERM);
	(void) sigaddset(&sa.sa_mask, SIGHUP);
	(void) sigaddset(&sa.sa_mask, SIGINT);
	(void) sigaction(SIGTERM, &sa, NULL);
	(void) sigaction(SIGHUP, &sa, NULL);
	(void) sigaction(SIGINT, &sa, NULL);

	(void) memset(&q, 0, sizeof (q));
	(void) memset(&r, 0, sizeof (r));
	while (req_read(&q)) {
		for (op = ops; op->op_name != NULL; op++)
			if (strcmp(op->op_name, q.q_op) == 0)
				break;
		if (op->op_name == NULL)
			resp_failf(&r, "usage", "unknown op '%s'", q.q_op);
		else if ((int)q.q_n < op->op_min ||
		    (op->op_max >= 0 && (int)q.q_n > op->op_max))
			resp_failf(&r, "usage", "%s takes %d fields, not %zu",
			    op->op_name, op->op_min, q.q_n);
		else
			op->op_fn(&q, &r);
		bye = op->op_fn == op_bye && !r.r_err;
		req_free(&q);
		resp_send(&r);
		if (bye)
			break;
	}
	release_all();
	free(q.q_f);
	free(r.r_f);
	confine_free();
	free(rt);
	return (SDIO_EXIT_OK);
}
