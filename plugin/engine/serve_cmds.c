/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * serve_cmds.c: running commands for `sdio serve` (serve.h): can_run,
 * run and stream.  A command is an absolute path, never looked up in PATH
 * nor given to a shell, run with its argv, the fixed environment below,
 * "/" as its working directory, no descriptor of the server's but its
 * pipes, and a time bound; with a policy, only the paths its "run" lines
 * name (serve_may_run).  run answers with its output, capped at
 * RUN_OUT_MAX a stream; stream sends its stdout as it comes, in parts
 * (resp_part), and answers with its stderr, capped the same.  The signal
 * handler (serve_dispatch.c) kills a running command through
 * pending_child; a stream's command is killed too when the server's
 * stdout fails or hangs up, for nobody hears the parts any more.
 */

#include "serve.h"

static char		*const run_env[] = {
	"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "LANG=C", NULL
};

volatile pid_t		pending_child;

void
op_can_run(req_t *q, resp_t *r)
{
	const char *path;
	struct stat st;

	if ((path = fstr(q, 0, r)) == NULL)
		return;
	/* With a policy, what run would refuse cannot run. */
	resp_str(r, path[0] == '/' && serve_may_run(path) &&
	    stat(path, &st) == 0 &&
	    S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? "1" : "0");
}

/* -- commands ----------------------------------------------------------- */

static int
set_flag(int fd, int cmd_get, int cmd_set, int flag)
{
	int f = fcntl(fd, cmd_get);

	if (f < 0 || fcntl(fd, cmd_set, f | flag) < 0)
		return (-1);
	return (0);
}

/* A pipe whose ends the parent keeps are close-on-exec: 0, or errno. */
static int
make_pipe(int p[2])
{
	if (pipe(p) != 0)
		return (errno);
	if (set_flag(p[0], F_GETFD, F_SETFD, FD_CLOEXEC) != 0 ||
	    set_flag(p[1], F_GETFD, F_SETFD, FD_CLOEXEC) != 0)
		return (errno);
	return (0);
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void) close(*fd);
	*fd = -1;
}

/* In the child: becomes the command, or reports errno on ep and exits. */
static void
child_exec(char **argv, int in_fd, int out_fd, int err_fd, int ep)
{
	struct sigaction sa;
	sigset_t none;
	long max;
	int fd, e, sigs[] = { SIGPIPE, SIGTERM, SIGHUP, SIGINT };
	size_t i;

	(void) memset(&sa, 0, sizeof (sa));
	sa.sa_handler = SIG_DFL;
	(void) sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof (sigs) / sizeof (sigs[0]); i++)
		(void) sigaction(sigs[i], &sa, NULL);
	(void) sigemptyset(&none);
	(void) sigprocmask(SIG_SETMASK, &none, NULL);

	if (in_fd < 0)
		in_fd = open("/dev/null", O_RDONLY);
	if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 ||
	    dup2(err_fd, 2) < 0 || chdir("/") != 0)
		goto fail;
	/* Nothing else of the server's, nor of whoever started it. */
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > CLOSE_FDS_MAX)
		max = CLOSE_FDS_MAX;
	for (fd = 3; fd < max; fd++)
		if (fd != ep)
			(void) close(fd);
	(void) execve(argv[0], argv, run_env);
fail:
	e = errno;
	if (write(ep, &e, sizeof (e)) != (ssize_t)sizeof (e))
		_exit(126);
	_exit(127);
}

/*
 * A stream's command whose parts nobody hears (stdout failed or hung up):
 * killed and reaped, and the server ends as a failed answer ends it.
 */
static void
stream_lost(pid_t pid)
{
	int status;

	(void) kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		continue;
	pending_child = 0;
	_exit(1);
}

/*
 * run and stream: one way to run a command.  streaming: its stdout goes
 * to the client as it is read, in parts, and the answer's stdout field is
 * empty; otherwise it is collected into the answer.
 */
static void
run_command(req_t *q, resp_t *r, int streaming)
{
	const char *path;
	char **argv = NULL, *obuf[2] = { NULL, NULL }, *nb;
	static char part[PART_MAX];
	size_t olen[2] = { 0, 0 }, ocap[2] = { 0, 0 }, in_off = 0, i, nargs;
	long long tmo, has_in;
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int ep[2] = { -1, -1 }, e, status, k, nfds, idx[4];
	struct pollfd pfd[4];
	uint64_t start, deadline = 0, now;
	pid_t pid, w;
	ssize_t n;
	struct timespec nap = { 0, 5000000 };
	const field_t *input = &q->q_f[3];
	static const char *stream[2] = { "stdout", "stderr" };

	if ((path = fstr(q, 0, r)) == NULL ||
	    fnum(q, 1, 0, LLONG_MAX / 1000000, &tmo, r) != 0 ||
	    fnum(q, 2, 0, 1, &has_in, r) != 0)
		return;
	if (!serve_may_run(path)) {
		resp_failf(r, "denied", "'%s' is not a command this engine "
		    "runs", path);
		return;
	}
	nargs = q->q_n - 4;
	if ((argv = calloc(nargs + 2, sizeof (char *))) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		return;
	}
	argv[0] = (char *)path;
	for (i = 0; i < nargs; i++)
		if ((argv[i + 1] = (char *)fstr(q, i + 4, r)) == NULL)
			goto done;

	if ((e = make_pipe(ep)) != 0 || (e = make_pipe(outp)) != 0 ||
	    (e = make_pipe(errp)) != 0 || (has_in && (e = make_pipe(inp)) !=
	    0)) {
		resp_errno(r, "pipe", e);
		goto done;
	}
	start = sdio_now();
	if ((pid = fork()) < 0) {
		resp_errno(r, "fork", errno);
		goto done;
	}
	if (pid == 0)
		child_exec(argv, inp[0], outp[1], errp[1], ep[1]);
	pending_child = pid;
	close_fd(&inp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[1]);
	close_fd(&ep[1]);

	/* exec succeeded when the CLOEXEC pipe closes without a word. */
	do {
		n = read(ep[0], &e, sizeof (e));
	} while (n < 0 && errno == EINTR);
	close_fd(&ep[0]);
	if (n == (ssize_t)sizeof (e)) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			continue;
		pending_child = 0;
		resp_errno(r, "exec", e);
		goto done;
	}

	if (has_in && input->f_len == 0)
		close_fd(&inp[1]);
	if (inp[1] >= 0)
		(void) set_flag(inp[1], F_GETFL, F_SETFL, O_NONBLOCK);
	if (tmo > 0)
		deadline = start + (uint64_t)tmo * 1000000ULL;
	for (;;) {
		nfds = 0;
		if (inp[1] >= 0) {
			pfd[nfds].fd = inp[1];
			pfd[nfds].events = POLLOUT;
			idx[nfds++] = 2;
		}
		for (k = 0; k < 2; k++) {
			if ((k == 0 ? outp[0] : errp[0]) < 0)
				continue;
			pfd[nfds].fd = k == 0 ? outp[0] : errp[0];
			pfd[nfds].events = POLLIN;
			idx[nfds++] = k;
		}
		if (nfds == 0)
			break;
		/*
		 * A stream's parts go out as they come: the server's own
		 * stdout, watched for a hang-up alone (no events asked), says
		 * when nobody hears them any more.
		 */
		if (streaming) {
			pfd[nfds].fd = STDOUT_FILENO;
			pfd[nfds].events = 0;
			idx[nfds++] = 3;
		}
		k = -1;
		if (deadline != 0) {
			now = sdio_now();
			if (now >= deadline)
				goto timeout;
			/* Rounded up, so that the wait reaches the deadline. */
			k = (deadline - now) / 1000000 >= POLL_MAX_MS ?
			    POLL_MAX_MS :
			    (int)((deadline - now + 999999) / 1000000);
		}
		if (poll(pfd, (nfds_t)nfds, k) < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			goto kill;
		}
		for (i = 0; i < (size_t)nfds; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (idx[i] == 2) {
				n = write(inp[1], input->f_data + in_off,
				    input->f_len - in_off);
				if (n < 0 && (errno == EAGAIN ||
				    errno == EINTR))
					continue;
				/* EPIPE: it exited without reading. */
				if (n < 0)
					close_fd(&inp[1]);
				else if ((in_off += (size_t)n) == input->f_len)
					close_fd(&inp[1]);
				continue;
			}
			k = idx[i];
			if (k == 3) {
				if (pfd[i].revents & (POLLERR | POLLHUP |
				    POLLNVAL))
					stream_lost(pid);
				continue;
			}
			if (k == 0 && streaming) {
				n = read(pfd[i].fd, part, sizeof (part));
				if (n < 0 && (errno == EAGAIN ||
				    errno == EINTR))
					continue;
				if (n <= 0)
					close_fd(&outp[0]);
				else if (resp_part(part, (size_t)n) != 0)
					stream_lost(pid);
				continue;
			}
			if (olen[k] == ocap[k]) {
				ocap[k] = ocap[k] == 0 ? 65536 : ocap[k] * 2;
				if ((nb = realloc(obuf[k], ocap[k] + 1)) ==
				    NULL) {
					e = ENOMEM;
					goto kill;
				}
				obuf[k] = nb;
			}
			n = read(pfd[i].fd, obuf[k] + olen[k],
			    ocap[k] - olen[k]);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0) {
				close_fd(k == 0 ? &outp[0] : &errp[0]);
				continue;
			}
			if ((olen[k] += (size_t)n) > RUN_OUT_MAX) {
				(void) kill(pid, SIGKILL);
				while (waitpid(pid, &status, 0) < 0 &&
				    errno == EINTR)
					continue;
				pending_child = 0;
				resp_fail(r, "toolarge", stream[k]);
				goto done;
			}
		}
	}

	/* Its output is closed; it may still run, up to the deadline. */
	for (;;) {
		w = waitpid(pid, &status, deadline != 0 ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			e = errno;
			goto kill;
		}
		if (w == 0) {
			if (sdio_now() >= deadline)
				goto timeout;
			(void) nanosleep(&nap, NULL);
		}
	}
	pending_child = 0;
	now = sdio_now();
	if (WIFEXITED(status)) {
		resp_num(r, WEXITSTATUS(status));
		resp_num(r, 0);
	} else {
		resp_num(r, -1);
		resp_num(r, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	}
	for (k = 0; k < 2; k++) {
		if (obuf[k] == NULL)
			obuf[k] = malloc(1);
		resp_own(r, obuf[k], olen[k]);
		obuf[k] = NULL;
	}
	resp_unum(r, (unsigned long long)(now - start));
	goto done;

timeout:
	(void) kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		continue;
	pending_child = 0;
	resp_failf(r, "timeout", "%lld", tmo);
	goto done;
kill:
	(void) kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		continue;
	pending_child = 0;
	resp_errno(r, "poll", e);
done:
	close_fd(&inp[0]);
	close_fd(&inp[1]);
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&ep[0]);
	close_fd(&ep[1]);
	free(obuf[0]);
	free(obuf[1]);
	free(argv);
}

void
op_run(req_t *q, resp_t *r)
{
	run_command(q, r, 0);
}

void
op_stream(req_t *q, resp_t *r)
{
	run_command(q, r, 1);
}
