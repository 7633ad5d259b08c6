/*
 * cmdclient: run one command of the simulated appliance through the fork
 * server of tests/sim/cmdserver.py, whose Python has the simulator
 * already loaded, instead of starting a Python of its own (about 50 ms
 * each, a dozen per sdtune command).
 *
 *	cmdclient SOCKET PYTHON FAKECMD ARG...
 *
 * Hands the server this process's standard input, output and error
 * (SCM_RIGHTS), its working directory and the arguments of fakecmd.py;
 * the server forks a process that runs the command on those descriptors
 * and answers with its status.  This process then ends the same way: the
 * exit status, or the same signal.  If this process dies first, the
 * server kills the command.  When no server answers (none running, or
 * the socket's directory is not ours to enter) it becomes what the
 * wrapper ran before: exec PYTHON FAKECMD ARG...
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

int
main(int argc, char **argv)
{
	struct sockaddr_un sa;
	char cwd[PATH_MAX];
	char *payload;
	size_t len, off;
	uint32_t head;
	int32_t status;
	int fd, i, fds[3] = { 0, 1, 2 };
	struct msghdr msg;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof (fds))];
		struct cmsghdr align;
	} control;
	struct cmsghdr *cmsg;
	ssize_t n;

	if (argc < 4) {
		(void) fprintf(stderr, "usage: cmdclient SOCKET PYTHON "
		    "FAKECMD [ARG...]\n");
		return (127);
	}
	if (strlen(argv[1]) >= sizeof (sa.sun_path))
		return (fallback(argv));
	/* A closed standard descriptor cannot be handed over. */
	for (i = 0; i < 3; i++) {
		if (fcntl(i, F_GETFD) < 0)
			return (fallback(argv));
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return (fallback(argv));
	(void) memset(&sa, 0, sizeof (sa));
	sa.sun_family = AF_UNIX;
	(void) strcpy(sa.sun_path, argv[1]);
	if (connect(fd, (struct sockaddr *)&sa, sizeof (sa)) != 0) {
		(void) close(fd);
		return (fallback(argv));
	}

	/* The working directory, then fakecmd's arguments, NUL after each. */
	if (getcwd(cwd, sizeof (cwd)) == NULL)
		(void) strcpy(cwd, "/");
	len = strlen(cwd) + 1;
	for (i = 4; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if ((payload = malloc(sizeof (head) + len)) == NULL)
		return (fallback(argv));
	head = (uint32_t)len;
	(void) memcpy(payload, &head, sizeof (head));
	off = sizeof (head);
	(void) memcpy(payload + off, cwd, strlen(cwd) + 1);
	off += strlen(cwd) + 1;
	for (i = 4; i < argc; i++) {
		(void) memcpy(payload + off, argv[i], strlen(argv[i]) + 1);
		off += strlen(argv[i]) + 1;
	}

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

	/* The status: an exit code, or minus the signal that ended it. */
	off = 0;
	while (off < sizeof (status)) {
		n = recv(fd, (char *)&status + off, sizeof (status) - off, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			(void) fprintf(stderr, "cmdclient: the command server "
			    "at %s went away\n", argv[1]);
			return (127);
		}
		off += (size_t)n;
	}
	if (status < 0) {
		(void) signal(-status, SIG_DFL);
		(void) kill(getpid(), -status);
		return (128 - status);
	}
	return (status);
}
