/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * cmdclient: run PYTHON ARG... through a fork server of tests/harness
 * (forkserver.py), whose Python has what the command needs already
 * loaded, instead of starting a Python (about 50 ms for a simulated
 * command, 100 ms for sdtune).
 *
 *	cmdclient SOCKET PYTHON ARG...
 *
 * Hands the server this process's standard input, output and error
 * (SCM_RIGHTS), its working directory, umask, environment, the signals it
 * ignores and blocks (what an exec would pass on), and ARG...
 * The server answers with the pid of the worker it forked (0: it will not
 * run this request, so this process execs PYTHON ARG... itself; -1: it
 * ran it itself, without a worker), then with the status.  Meanwhile
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT sent here are sent on to the
 * worker.  This process then ends the same
 * way as the worker: the exit status, or the same signal.  If this
 * process dies first, the server kills the worker.  When no server
 * answers (none running, or the socket's directory is not ours to enter)
 * it execs PYTHON ARG... as well.
 *
 *	#!/path/to/cmdclient --script
 *	SOCKET
 *	PYTHON
 *	ARG...
 *
 * A wrapper can also name this program as its interpreter, as above: one
 * word per line after the first, a line "$0" standing for the wrapper's
 * own path (the kernel runs `cmdclient --script WRAPPER ARG...`, and
 * WRAPPER is the path it was run by, sh's $0).  The words and then the
 * arguments the wrapper was given make the command line above: the
 * simulated commands then cost no shell (about 0.9 ms of CPU each,
 * measured).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int
fallback(char **argv)
{
	(void) execv(argv[2], argv + 2);
	(void) fprintf(stderr, "cmdclient: cannot run %s: %s\n", argv[2],
	    strerror(errno));
	return (127);
}

static int
send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		buf += n;
		len -= (size_t)n;
	}
	return (0);
}

/*
 * The worker's pid, once the server has said it; 0 before.  A signal that
 * comes before it is kept (the last one) and sent on when it is known.
 */
static volatile sig_atomic_t worker;
static volatile sig_atomic_t early;

static void
forward(int sig)
{
	if (worker > 0)
		(void) kill((pid_t)worker, sig);
	else
		early = sig;
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define	NFORWARDED	((int)(sizeof (forwarded) / sizeof (forwarded[0])))

/* Forward the signals not ignored here (those stay ignored, as they
 * would be); with SIG_DFL, stop forwarding. */
static void
forwarding(void (*handler)(int))
{
	struct sigaction act, old;
	int i;

	(void) memset(&act, 0, sizeof (act));
	act.sa_handler = handler;
	(void) sigemptyset(&act.sa_mask);
	for (i = 0; i < NFORWARDED; i++) {
		if (sigaction(forwarded[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			(void) sigaction(forwarded[i], &act, NULL);
	}
}

/* Run PYTHON ARG... here, first taking a signal that came meanwhile. */
static int
run_here(char **argv)
{
	forwarding(SIG_DFL);
	if (early != 0)
		(void) kill(getpid(), early);
	return (fallback(argv));
}

/* One answer from the server: 0 on success, -1 when it went away. */
static int
answer(int fd, int32_t *value)
{
	size_t off = 0;
	ssize_t n;

	while (off < sizeof (*value)) {
		n = recv(fd, (char *)value + off, sizeof (*value) - off, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		off += (size_t)n;
	}
	return (0);
}

/* Append a NUL-terminated word to the payload. */
static void
put(char *payload, size_t *off, const char *word)
{
	size_t len = strlen(word) + 1;

	(void) memcpy(payload + *off, word, len);
	*off += len;
}

extern char **environ;

/*
 * The signals this process ignores and blocks, one bit per signal (bit
 * n - 1 for signal n), as hex: what PYTHON would start with here.
 */
static void
signal_masks(char *ignored, char *blocked, size_t len)
{
	unsigned long long ign = 0, blk = 0;
	struct sigaction old;
	sigset_t set;
	int sig;

	(void) sigprocmask(SIG_BLOCK, NULL, &set);
	for (sig = 1; sig < 65 && sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			ign |= 1ULL << (sig - 1);
		if (sigismember(&set, sig) == 1)
			blk |= 1ULL << (sig - 1);
	}
	(void) snprintf(ignored, len, "%llx", ign);
	(void) snprintf(blocked, len, "%llx", blk);
}

/*
 * argv of a run as a wrapper's interpreter (cmdclient --script WRAPPER
 * ARG...): cmdclient, the wrapper's words, ARG...; exits 127 when the
 * wrapper cannot be read.
 */
static char **
script_argv(int *argcp, char **argv)
{
	static char text[65536];
	char **out, *line, *next;
	size_t len = 0;
	ssize_t n;
	int fd, words = 0, i, j;

	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	while (len < sizeof (text) - 1 &&
	    (n = read(fd, text + len, sizeof (text) - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			(void) close(fd);
			goto fail;
		}
		len += (size_t)n;
	}
	(void) close(fd);
	text[len] = '\0';
	for (i = 0; text[i] != '\0'; i++)
		words += text[i] == '\n';
	out = calloc((size_t)(words + *argcp), sizeof (char *));
	if (out == NULL)
		goto fail;
	out[0] = argv[0];
	j = 1;
	line = strchr(text, '\n');	/* past the #! line */
	for (line = line == NULL ? NULL : line + 1; line != NULL &&
	    *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		out[j++] = strcmp(line, "$0") == 0 ? argv[2] : line;
	}
	for (i = 3; i < *argcp; i++)
		out[j++] = argv[i];
	out[j] = NULL;
	*argcp = j;
	return (out);
fail:
	(void) fprintf(stderr, "cmdclient: cannot read %s: %s\n", argv[2],
	    strerror(errno));
	exit(127);
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sa;
	char cwd[PATH_MAX], mask[16], count[24], ignored[24], blocked[24];
	char *payload;
	size_t len, off, nenv;
	uint32_t head;
	int32_t pid, status;
	mode_t um;
	int fd, i, fds[3] = { 0, 1, 2 };
	struct msghdr msg;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof (fds))];
		struct cmsghdr align;
	} control;
	struct cmsghdr *cmsg;
	ssize_t n;

	if (argc >= 3 && strcmp(argv[1], "--script") == 0)
		argv = script_argv(&argc, argv);
	if (argc < 3) {
		(void) fprintf(stderr, "usage: cmdclient SOCKET PYTHON "
		    "[ARG...]\n");
		return (127);
	}
	signal_masks(ignored, blocked, sizeof (ignored));
	forwarding(forward);
	if (strlen(argv[1]) >= sizeof (sa.sun_path))
		return (run_here(argv));
	/* A closed standard descriptor cannot be handed over. */
	for (i = 0; i < 3; i++) {
		if (fcntl(i, F_GETFD) < 0)
			return (run_here(argv));
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return (run_here(argv));
	(void) memset(&sa, 0, sizeof (sa));
	sa.sun_family = AF_UNIX;
	(void) strcpy(sa.sun_path, argv[1]);
	if (connect(fd, (struct sockaddr *)&sa, sizeof (sa)) != 0) {
		(void) close(fd);
		return (run_here(argv));
	}

	/*
	 * The working directory, the umask, the ignored and blocked signals,
	 * the environment (a count, then
	 * the entries) and PYTHON's arguments, NUL after each.
	 */
	if (getcwd(cwd, sizeof (cwd)) == NULL)
		(void) strcpy(cwd, "/");
	um = umask(0);
	(void) umask(um);
	(void) snprintf(mask, sizeof (mask), "%o", (unsigned int)um);
	for (nenv = 0; environ[nenv] != NULL; nenv++)
		;
	(void) snprintf(count, sizeof (count), "%zu", nenv);
	len = strlen(cwd) + 1 + strlen(mask) + 1 + strlen(ignored) + 1 +
	    strlen(blocked) + 1 + strlen(count) + 1;
	for (i = 0; (size_t)i < nenv; i++)
		len += strlen(environ[i]) + 1;
	for (i = 3; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if ((payload = malloc(sizeof (head) + len)) == NULL)
		return (run_here(argv));
	head = (uint32_t)len;
	(void) memcpy(payload, &head, sizeof (head));
	off = sizeof (head);
	put(payload, &off, cwd);
	put(payload, &off, mask);
	put(payload, &off, ignored);
	put(payload, &off, blocked);
	put(payload, &off, count);
	for (i = 0; (size_t)i < nenv; i++)
		put(payload, &off, environ[i]);
	for (i = 3; i < argc; i++)
		put(payload, &off, argv[i]);

	/* The descriptors go with the first bytes. */
	(void) memset(&msg, 0, sizeof (msg));
	(void) memset(&control, 0, sizeof (control));
	iov.iov_base = payload;
	iov.iov_len = off;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof (control.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof (fds));
	(void) memcpy(CMSG_DATA(cmsg), fds, sizeof (fds));
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n <= 0 || send_all(fd, payload + n, off - (size_t)n) != 0) {
		(void) fprintf(stderr, "cmdclient: cannot reach the command "
		    "server at %s\n", argv[1]);
		return (127);
	}
	free(payload);

	/* The worker's pid, or word to run it here. */
	if (answer(fd, &pid) != 0) {
		(void) fprintf(stderr, "cmdclient: the command server "
		    "at %s went away\n", argv[1]);
		return (127);
	}
	if (pid == 0) {
		(void) close(fd);
		return (run_here(argv));
	}
	if (pid > 0) {
		worker = pid;
		if (early != 0)
			(void) kill((pid_t)pid, early);
	}

	/* The status: an exit code, or minus the signal that ended it. */
	if (answer(fd, &status) != 0) {
		(void) fprintf(stderr, "cmdclient: the command server "
		    "at %s went away\n", argv[1]);
		return (127);
	}
	/*
	 * Run in the server itself (pid -1): a signal that came meanwhile
	 * ends this process, as it would have ended the command.
	 */
	if (pid < 0 && early != 0 && status >= 0)
		status = -early;
	if (status < 0) {
		(void) signal(-status, SIG_DFL);
		(void) kill(getpid(), -status);
		return (128 - status);
	}
	return (status);
}
