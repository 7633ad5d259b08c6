/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * serve_files.c: the file operations of `sdio serve` (serve.h): reading,
 * writing, replacing, directories and locks, and the confinement of every
 * path to ROOT and to the policy.  The rules each operation keeps, what
 * it refuses and with which error, are the Host contract, written once in
 * plugin/sdtune/host/base.py (its docstring and the Host methods) for this
 * file and for RealHost (plugin/sdtune/host/local.py) alike;
 * tests/contract/test_host_contract.py holds both to it.
 *
 * Errors are err [CODE, DETAIL...]; a failed system call is
 * err [errno, STAGE, strerror, ERRNO-NUMBER] (serve_dispatch.c lists the
 * codes of each op).
 *
 * Confinement.  Every path is first made absolute (relative to the
 * working directory) and lexically normal: "." and ".." components are
 * resolved as text, never climbing above "/".
 *  - Writes (create, replace, check_replaceable, mkdirs, remove, rmdir,
 *    lock, unlock) must name ROOT or a path below it, and no component below
 *    ROOT may be a symbolic link (which could lead the write anywhere).
 *    Modes with set-uid, set-gid or sticky bits are refused, and so is
 *    replacing a file that has them.
 *  - With a policy, reads (read, stat, lstat, listdir, readlink,
 *    readlinks, samefile, access, can_run) must name a path below ROOT,
 *    below a "read" tree of the policy or the engine's own dtrace/
 *    directories, or a "run" path; the real path (symbolic links
 *    resolved, for lstat and readlink all but the last component) must
 *    be below one of those too.  Without a policy, reads are not
 *    confined: the operator may name scratch files anywhere.
 *  - With a policy, run executes only the paths its "run" lines name
 *    (serve_may_run), and writes must also be below one of its "write"
 *    trees when it has any.  Without one, run executes any absolute path.
 * The policy is the file POLICY_NAME beside the engine's executable, or
 * the one --allow FILE names; it must be a regular file owned by root
 * (or by the user the engine runs as) and writable by nobody else, or
 * the server refuses to start.  Lines: "run PATH", "read DIR",
 * "write DIR", blank, or "#" comments.  A key whose authorized_keys
 * entry forces the command "sdio serve --root /" is confined only when a
 * policy is in place: without one, the server grants everything the ssh
 * user may do.  The checks and the operation are separate system calls:
 * a local user who can rename directories under ROOT between them is
 * not held by them (one who can do that is already privileged there).
 *
 * Writes.  replace writes a temporary file ".BASE.sdtune.PID.HEX8" in the
 * target's directory, gives it the old file's mode and owner, syncs it
 * and renames it over the target, then syncs the directory: readers see
 * the old file or the new one.  A temporary file (of replace or create)
 * is removed on any failure before the rename, and on SIGTERM, SIGHUP
 * or SIGINT (serve_dispatch.c's handler, through pending_tmp).
 *
 * Locks are POSIX record locks over the whole file, the ones Python's
 * fcntl.lockf() takes, so a local sdtune and a remote one exclude each
 * other.  They belong to the process and closing any descriptor of the
 * file drops them, so the server remembers what it holds and never opens
 * a held file a second time.
 */

#include "serve.h"

typedef struct held {
	int		h_fd;		/* -1: a free slot */
	dev_t		h_dev;
	ino_t		h_ino;
	char		*h_path;
} held_t;

/* ROOT, normal, no trailing slash (confine_setup). */
static const char	*root;
static held_t		held[MAX_LOCKS];

char *volatile		pending_tmp;

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/*
 * Lexically absolute and normal, as Python's os.path.abspath: relative
 * to the working directory, no "", "." or ".." components, no trailing
 * slash.  NULL when out of memory.
 */
char *
abspath(const char *path)
{
	char cwd[PATH_MAX], *full, *res, *comp, *save;
	size_t n, len;

	if (path[0] == '/') {
		full = strdup(path);
	} else {
		if (getcwd(cwd, sizeof (cwd)) == NULL)
			(void) strcpy(cwd, "/");
		n = strlen(cwd) + strlen(path) + 2;
		if ((full = malloc(n)) != NULL)
			(void) snprintf(full, n, "%s/%s", cwd, path);
	}
	if (full == NULL)
		return (NULL);
	if ((res = malloc(strlen(full) + 2)) == NULL) {
		free(full);
		return (NULL);
	}
	len = 0;
	for (comp = strtok_r(full, "/", &save); comp != NULL;
	    comp = strtok_r(NULL, "/", &save)) {
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			if (len > 0)
				len--;
			while (len > 0 && res[len] != '/')
				len--;
			continue;
		}
		res[len++] = '/';
		n = strlen(comp);
		(void) memcpy(res + len, comp, n);
		len += n;
	}
	if (len == 0)
		res[len++] = '/';
	res[len] = '\0';
	free(full);
	return (res);
}

/* The directory part of absolute normal path p (malloc'd), and base. */
static char *
dir_of(const char *p, const char **base)
{
	const char *s = strrchr(p, '/');
	char *d;
	size_t n = s == p ? 1 : (size_t)(s - p);

	*base = s + 1;
	if ((d = malloc(n + 1)) == NULL)
		return (NULL);
	(void) memcpy(d, p, n);
	d[n] = '\0';
	return (d);
}

static int check_symlinks(const char *, resp_t *);

/* -- confinement (see the comment at the top) --------------------------- */

enum { P_RUN, P_READ, P_WRITE, P_KINDS };

static const char *const p_word[P_KINDS] = { "run", "read", "write" };

static struct {
	int		p_on;		/* a policy file was read */
	char		**p_path[P_KINDS];	/* normal; real paths too */
	size_t		p_n[P_KINDS];
	size_t		p_cap[P_KINDS];
} policy;

/* The real path of the root, and the engine's dtrace/ directories. */
static char		*root_real;
static char		*engine_tree[2];

/* Whether normal path p is dir or below it (dir normal). */
static int
under(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return (1);
	return (strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/'));
}

static int
is_listed(int kind, const char *p, int tree)
{
	size_t i;

	for (i = 0; i < policy.p_n[kind]; i++)
		if (tree ? under(p, policy.p_path[kind][i]) :
		    strcmp(p, policy.p_path[kind][i]) == 0)
			return (1);
	return (0);
}

/* Whether a read may name normal path p. */
static int
readable(const char *p)
{
	int i;

	if (under(p, root) || (root_real != NULL && under(p, root_real)))
		return (1);
	for (i = 0; i < 2; i++)
		if (engine_tree[i] != NULL && under(p, engine_tree[i]))
			return (1);
	return (is_listed(P_READ, p, 1) || is_listed(P_RUN, p, 0));
}

/*
 * The real path of normal path p (follow 0: of its directory, with its
 * last component after it): realpath(3) of the longest prefix that
 * exists, with the rest appended.  malloc'd; NULL when out of memory.
 */
static char *
real_of(const char *p, int follow)
{
	char *pre, *res = NULL, *out;
	size_t end = strlen(p), n;
	int e;

	if ((pre = strdup(p)) == NULL)
		return (NULL);
	if (!follow)
		while (end > 0 && p[end] != '/')
			end--;
	for (;;) {
		pre[end == 0 ? 1 : end] = '\0';
		if ((res = realpath(pre, NULL)) != NULL)
			break;
		e = errno;
		if (e == ENOMEM || end == 0) {
			free(pre);
			return (e == ENOMEM ? NULL : strdup(p));
		}
		(void) memcpy(pre, p, strlen(p) + 1);
		while (--end > 0 && p[end] != '/')
			continue;
	}
	free(pre);
	n = strlen(res) + strlen(p + end) + 1;
	if ((out = malloc(n)) != NULL)
		(void) snprintf(out, n, "%s%s",
		    strcmp(res, "/") == 0 ? "" : res, p + end);
	free(res);
	return (out);
}

/*
 * Field i as the normal path a read may reach, malloc'd; NULL with r set
 * (usage, nomem, or denied).  Without a policy, the path as given.
 */
static char *
read_path(req_t *q, size_t i, int follow, resp_t *r)
{
	const char *p;
	char *n, *real;
	int ok;

	if ((p = fstr(q, i, r)) == NULL)
		return (NULL);
	if (!policy.p_on) {
		if ((n = strdup(p)) == NULL)
			resp_fail(r, "nomem", "out of memory");
		return (n);
	}
	if ((n = abspath(p)) == NULL || (real = real_of(n, follow)) == NULL) {
		free(n);
		resp_fail(r, "nomem", "out of memory");
		return (NULL);
	}
	ok = readable(n) && readable(real);
	free(real);
	if (!ok) {
		resp_failf(r, "denied", "'%s' is outside what this engine may "
		    "read", n);
		free(n);
		return (NULL);
	}
	return (n);
}

/*
 * Field i as the normal path a write may name: below the root (and a
 * write tree of the policy), with no symbolic link below the root
 * (check_symlinks, when links is set).  malloc'd; NULL with r set.
 */
static char *
write_path(req_t *q, size_t i, int links, resp_t *r)
{
	const char *p;
	char *n;

	if ((p = fstr(q, i, r)) == NULL)
		return (NULL);
	if ((n = abspath(p)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		return (NULL);
	}
	if (!under(n, root)) {
		resp_failf(r, "denied", "'%s' is outside the root %s", n, root);
	} else if (policy.p_n[P_WRITE] > 0 && !is_listed(P_WRITE, n, 1)) {
		resp_failf(r, "denied", "'%s' is outside what this engine may "
		    "write", n);
	} else if (!links || check_symlinks(n, r) == 0) {
		return (n);
	}
	free(n);
	return (NULL);
}

/* Field i as a file mode, without set-id or sticky bits: 0, or -1. */
static int
plain_mode(req_t *q, size_t i, long long *mode, resp_t *r)
{
	if (fnum(q, i, 0, 07777, mode, r) != 0)
		return (-1);
	if ((*mode & 07000) != 0) {
		resp_failf(r, "denied", "mode %04llo has set-id or sticky bits",
		    *mode);
		return (-1);
	}
	return (0);
}

static int
policy_add(int kind, const char *p)
{
	char **np, *n;

	if (policy.p_n[kind] == policy.p_cap[kind]) {
		policy.p_cap[kind] = policy.p_cap[kind] * 2 + 8;
		np = realloc(policy.p_path[kind], policy.p_cap[kind] *
		    sizeof (char *));
		if (np == NULL)
			return (-1);
		policy.p_path[kind] = np;
	}
	if ((n = strdup(p)) == NULL)
		return (-1);
	policy.p_path[kind][policy.p_n[kind]++] = n;
	return (0);
}

/* Parses one line of a policy: 0, or -1 (why set). */
static int
policy_line(char *line, const char **why)
{
	char *w = line, *p, *n, *real;
	size_t len;
	int kind, rc;

	while (*w == ' ' || *w == '\t')
		w++;
	if (*w == '\0' || *w == '#')
		return (0);
	for (p = w; *p != '\0' && *p != ' ' && *p != '\t'; p++)
		continue;
	if (*p != '\0')
		*p++ = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	len = strlen(p);
	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		p[--len] = '\0';
	for (kind = 0; kind < P_KINDS; kind++)
		if (strcmp(w, p_word[kind]) == 0)
			break;
	if (kind == P_KINDS) {
		*why = "a line is not 'run PATH', 'read DIR' or 'write DIR'";
		return (-1);
	}
	if (p[0] != '/') {
		*why = "a path is not absolute";
		return (-1);
	}
	if ((n = abspath(p)) == NULL) {
		*why = "out of memory";
		return (-1);
	}
	rc = policy_add(kind, n);
	/* A link's target is the same file: reads may name it too. */
	if (rc == 0 && kind != P_WRITE && (real = realpath(n, NULL)) != NULL) {
		if (strcmp(real, n) != 0)
			rc = policy_add(kind, real);
		free(real);
	}
	free(n);
	if (rc != 0)
		*why = "out of memory";
	return (rc);
}

/*
 * Reads the policy file: 0 when read, or absent and not required; -1
 * (said on stderr) when it is not a file the engine may trust or not a
 * policy.
 */
static int
policy_load(const char *file, int required)
{
	struct stat st;
	char *buf = NULL, *line, *nl;
	const char *why = NULL;
	ssize_t n;
	size_t len = 0, no = 0;
	int fd;

	if ((fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (errno == ENOENT && !required)
			return (0);
		(void) fprintf(stderr, "sdio: serve: cannot open policy %s: "
		    "%s\n", file, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != 0 && st.st_uid != geteuid())
		why = "owned by another user";
	else if ((st.st_mode & 022) != 0)
		why = "writable by its group or others";
	else if (st.st_size > POLICY_MAX)
		why = "too large";
	if (why != NULL || (buf = malloc(POLICY_MAX + 2)) == NULL) {
		(void) fprintf(stderr, "sdio: serve: refusing policy %s: %s\n",
		    file, why != NULL ? why : "out of memory");
		(void) close(fd);
		return (-1);
	}
	while (len <= POLICY_MAX && (n = read(fd, buf + len,
	    POLICY_MAX + 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			why = strerror(errno);
			break;
		}
		len += (size_t)n;
	}
	(void) close(fd);
	buf[len] = '\0';
	if (why == NULL && (len > POLICY_MAX || strlen(buf) != len))
		why = "too large, or holds a NUL byte";
	policy.p_on = 1;
	for (line = buf; why == NULL && *line != '\0'; line = nl) {
		no++;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = '\0';
		else
			nl = line + strlen(line);
		(void) policy_line(line, &why);
	}
	free(buf);
	if (why != NULL) {
		(void) fprintf(stderr, "sdio: serve: refusing policy %s: line "
		    "%zu: %s\n", file, no, why);
		return (-1);
	}
	return (0);
}

/* The engine's own executable, real path, malloc'd; NULL if unknown. */
static char *
engine_exe(void)
{
	char b[PATH_MAX];
	ssize_t n;

#ifdef __sun
	n = readlink("/proc/self/path/a.out", b, sizeof (b) - 1);
#else
	n = readlink("/proc/self/exe", b, sizeof (b) - 1);
#endif
	if (n <= 0 || b[0] != '/')
		return (NULL);
	b[n] = '\0';
	return (strdup(b));
}

/*
 * Sets up the confinement: the root's real path, the engine's dtrace/
 * directories (sdtune's SshHost.dtrace_dir), and the policy (the one
 * --allow names, else the one beside the engine), for the root
 * served (kept, not copied).  0, or -1 (said).
 */
int
confine_setup(const char *served, const char *allow)
{
	char *exe, *top, *s, *tree;
	size_t n;
	int i, rc;

	root = served;
	root_real = realpath(root, NULL);
	if ((exe = engine_exe()) == NULL && allow == NULL) {
		(void) fprintf(stderr, "sdio: serve: cannot find the engine's "
		    "own path to look for %s beside it: give --allow FILE\n",
		    POLICY_NAME);
		return (-1);
	}
	if (exe != NULL) {
		/* PREFIX/lib/sdtune/bin/sdio or TREE/plugin/engine/sdio */
		top = exe;
		for (i = 0; i < 3; i++) {
			if ((s = strrchr(top, '/')) != NULL && s != top)
				*s = '\0';
			if (i < 1)
				continue;
			n = strlen(top) + sizeof ("/dtrace");
			if ((tree = malloc(n)) != NULL)
				(void) snprintf(tree, n, "%s/dtrace", top);
			engine_tree[i - 1] = tree;
		}
		free(exe);
	}
	if (allow != NULL)
		return (policy_load(allow, 1));
	if ((exe = engine_exe()) == NULL)
		return (-1);
	s = strrchr(exe, '/');
	n = (size_t)(s - exe) + sizeof (POLICY_NAME) + 1;
	if ((tree = malloc(n)) == NULL) {
		free(exe);
		return (-1);
	}
	(void) snprintf(tree, n, "%.*s/%s", (int)(s - exe), exe, POLICY_NAME);
	free(exe);
	rc = policy_load(tree, 0);
	free(tree);
	return (rc);
}

void
confine_free(void)
{
	int k;
	size_t i;

	for (k = 0; k < P_KINDS; k++) {
		for (i = 0; i < policy.p_n[k]; i++)
			free(policy.p_path[k][i]);
		free(policy.p_path[k]);
	}
	free(root_real);
	free(engine_tree[0]);
	free(engine_tree[1]);
}

/* Whether the policy lets run execute path (no policy: any path). */
int
serve_may_run(const char *path)
{
	return (!policy.p_on || is_listed(P_RUN, path, 0));
}

void
op_read(req_t *q, resp_t *r)
{
	char *path;
	long long limit;
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0, want;
	ssize_t n;
	int fd;

	if (fnum(q, 1, 0, (long long)MAX_FIELD, &limit, r) != 0 ||
	    (path = read_path(q, 0, 1, r)) == NULL)
		return;
	/*
	 * O_NONBLOCK: a FIFO (one that replaced a file since the client's
	 * stat) reads as empty or fails with EAGAIN, instead of holding the
	 * server for ever; a regular file or a device reads as usual.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	free(path);
	if (fd < 0) {
		resp_errno(r, "open", errno);
		return;
	}
	/* Up to limit + 1 bytes: one more says the file is too large. */
	while (len <= (size_t)limit) {
		if (len == cap) {
			cap = cap == 0 ? 65536 : cap * 2;
			if (cap > (size_t)limit + 1)
				cap = (size_t)limit + 1;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				free(buf);
				(void) close(fd);
				resp_fail(r, "nomem", "out of memory");
				return;
			}
			buf = nb;
		}
		want = cap - len;
		n = read(fd, buf + len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			resp_errno(r, "read", errno);
			free(buf);
			(void) close(fd);
			return;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(void) close(fd);
	if (len > (size_t)limit) {
		free(buf);
		resp_failf(r, "toolarge", "%lld", limit);
		return;
	}
	if (buf == NULL)
		buf = malloc(1);
	resp_own(r, buf, len);
}

static void
stat_fields(resp_t *r, const struct stat *st)
{
	resp_unum(r, (unsigned long long)st->st_mode);
	resp_unum(r, (unsigned long long)st->st_ino);
	resp_unum(r, (unsigned long long)st->st_dev);
	resp_unum(r, (unsigned long long)st->st_nlink);
	resp_unum(r, (unsigned long long)st->st_uid);
	resp_unum(r, (unsigned long long)st->st_gid);
	resp_num(r, (long long)st->st_size);
	resp_num(r, ts_ns(&st->st_atim));
	resp_num(r, ts_ns(&st->st_mtim));
	resp_num(r, ts_ns(&st->st_ctim));
}

static void
do_stat(req_t *q, resp_t *r, int follow)
{
	char *path;
	struct stat st;
	int rc;

	if ((path = read_path(q, 0, follow, r)) == NULL)
		return;
	rc = follow ? stat(path, &st) : lstat(path, &st);
	free(path);
	if (rc != 0)
		resp_errno(r, "stat", errno);
	else
		stat_fields(r, &st);
}

void
op_stat(req_t *q, resp_t *r)
{
	do_stat(q, r, 1);
}

void
op_lstat(req_t *q, resp_t *r)
{
	do_stat(q, r, 0);
}

/*
 * The sorted names in a directory (without . and ..): an array of
 * malloc'd strings, or NULL with *err set (errno, or ENOMEM).
 */
static char **
dir_names(const char *path, size_t *np, int *err, const char **stage)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL, **nn;
	size_t n = 0, cap = 0;

	*stage = "opendir";
	if ((d = opendir(path)) == NULL) {
		*err = errno;
		return (NULL);
	}
	*stage = "readdir";
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0) {
				*err = errno;
				goto fail;
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			if ((nn = realloc(names, cap * sizeof (char *))) ==
			    NULL) {
				*err = ENOMEM;
				goto fail;
			}
			names = nn;
		}
		if ((names[n] = strdup(de->d_name)) == NULL) {
			*err = ENOMEM;
			goto fail;
		}
		n++;
	}
	(void) closedir(d);
	if (names == NULL && (names = malloc(sizeof (char *))) == NULL) {
		*err = ENOMEM;
		return (NULL);
	}
	qsort(names, n, sizeof (char *), cmp_str);
	*np = n;
	return (names);
fail:
	while (n > 0)
		free(names[--n]);
	free(names);
	(void) closedir(d);
	return (NULL);
}

void
op_listdir(req_t *q, resp_t *r)
{
	const char *stage;
	char **names, *path;
	size_t n, i;
	int e;

	if ((path = read_path(q, 0, 1, r)) == NULL)
		return;
	names = dir_names(path, &n, &e, &stage);
	free(path);
	if (names == NULL) {
		resp_errno(r, stage, e);
		return;
	}
	for (i = 0; i < n; i++)
		resp_own(r, names[i], strlen(names[i]));
	free(names);
}

/*
 * The target of the link name, relative to directory fd dfd (AT_FDCWD:
 * none): malloc'd, its length in *lenp; NULL with errno set.
 */
static char *
read_link(int dfd, const char *name, size_t *lenp)
{
	char *b = NULL, *nb;
	size_t cap = 256;
	ssize_t n;

	for (;;) {
		if ((nb = realloc(b, cap + 1)) == NULL) {
			free(b);
			errno = ENOMEM;
			return (NULL);
		}
		b = nb;
		if ((n = readlinkat(dfd, name, b, cap)) < 0) {
			free(b);
			return (NULL);
		}
		if ((size_t)n < cap) {
			b[n] = '\0';
			*lenp = (size_t)n;
			return (b);
		}
		cap *= 2;
	}
}

void
op_readlink(req_t *q, resp_t *r)
{
	char *t, *path;
	size_t len;

	if ((path = read_path(q, 0, 0, r)) == NULL)
		return;
	if ((t = read_link(AT_FDCWD, path, &len)) == NULL)
		resp_errno(r, "readlink", errno);
	else
		resp_own(r, t, len);
	free(path);
}

void
op_readlinks(req_t *q, resp_t *r)
{
	const char *stage;
	char **names, *t, *path;
	size_t n, i, len;
	int e, dfd;

	if ((path = read_path(q, 0, 1, r)) == NULL)
		return;
	if ((names = dir_names(path, &n, &e, &stage)) == NULL) {
		resp_errno(r, stage, e);
		free(path);
		return;
	}
	if ((dfd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		resp_errno(r, "open", errno);
		goto done;
	}
	for (i = 0; i < n; i++) {
		if ((t = read_link(dfd, names[i], &len)) == NULL) {
			/* Not a link, or gone since the listing. */
			if (errno == EINVAL || errno == ENOENT)
				continue;
			resp_errno(r, "readlink", errno);
			break;
		}
		resp_own(r, names[i], strlen(names[i]));
		names[i] = NULL;
		resp_own(r, t, len);
	}
	(void) close(dfd);
done:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(path);
}

void
op_samefile(req_t *q, resp_t *r)
{
	char *a, *b = NULL;
	struct stat sa, sb;

	if ((a = read_path(q, 0, 1, r)) != NULL &&
	    (b = read_path(q, 1, 1, r)) != NULL)
		resp_str(r, stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
		    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino ? "1" :
		    "0");
	free(a);
	free(b);
}

void
op_access(req_t *q, resp_t *r)
{
	char *path;
	long long mode;

	if (fnum(q, 1, 0, R_OK | W_OK | X_OK, &mode, r) != 0 ||
	    (path = read_path(q, 0, 1, r)) == NULL)
		return;
	resp_str(r, access(path, (int)mode) == 0 ? "1" : "0");
	free(path);
}

/* -- writing ------------------------------------------------------------ */

/*
 * Refuses (err symlink) when a component of path below the base (ROOT
 * when path is ROOT or under it, else /) is a symbolic link: a link
 * could redirect a root-owned write anywhere.  A missing component ends
 * the walk; the open that follows reports it.  0, or -1 with r set.
 */
static int
check_symlinks(const char *path, resp_t *r)
{
	size_t rl = strlen(root), base, j, len = strlen(path);
	struct stat st;
	char *pre;

	if (strcmp(root, "/") != 0 && strncmp(path, root, rl) == 0 &&
	    (path[rl] == '/' || path[rl] == '\0'))
		base = rl;
	else
		base = 0;
	if ((pre = malloc(len + 1)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		return (-1);
	}
	for (j = base + 1; j <= len; j++) {
		if (path[j] != '/' && path[j] != '\0')
			continue;
		(void) memcpy(pre, path, j);
		pre[j] = '\0';
		if (lstat(pre, &st) != 0) {
			if (errno == ENOENT)
				break;
			resp_errno(r, "stat", errno);
			free(pre);
			return (-1);
		}
		if (S_ISLNK(st.st_mode)) {
			resp_fail(r, "symlink", pre);
			free(pre);
			return (-1);
		}
	}
	free(pre);
	return (0);
}

/*
 * The regular file at path that a replace would replace: 1 with *old
 * filled in, 0 when there is none, -1 (r set) when it must not be
 * replaced.
 */
static int
existing(const char *path, struct stat *old, resp_t *r)
{
	uid_t euid = geteuid();

	if (check_symlinks(path, r) != 0)
		return (-1);
	if (lstat(path, old) != 0) {
		if (errno == ENOENT)
			return (0);
		resp_errno(r, "stat", errno);
		return (-1);
	}
	if (!S_ISREG(old->st_mode)) {
		resp_fail(r, "notreg", NULL);
		return (-1);
	}
	/* rename(2) needs only the directory's permission: not enough. */
	if (euid != 0 && access(path, W_OK) != 0) {
		resp_fail(r, "perm", strerror(errno));
		return (-1);
	}
	/* An ordinary user cannot give the new copy the old owner. */
	if (old->st_uid != euid && euid != 0) {
		resp_fail(r, "owner", NULL);
		resp_unum(r, (unsigned long long)old->st_uid);
		return (-1);
	}
	/*
	 * The new copy takes the old one's mode: never a set-id one.  Here,
	 * so that check_replaceable refuses what replace refuses.
	 */
	if ((old->st_mode & 07000) != 0) {
		resp_failf(r, "denied", "'%s' has set-id or sticky bits",
		    path);
		return (-1);
	}
	return (1);
}

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return (-1);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

static void
block_signals(sigset_t *old)
{
	sigset_t s;

	(void) sigemptyset(&s);
	(void) sigaddset(&s, SIGTERM);
	(void) sigaddset(&s, SIGHUP);
	(void) sigaddset(&s, SIGINT);
	(void) sigprocmask(SIG_BLOCK, &s, old);
}

static void
restore_signals(const sigset_t *old)
{
	(void) sigprocmask(SIG_SETMASK, old, NULL);
}

/* Forgets the pending temporary file; removes it too if unlink. */
static void
drop_pending(int unlink_it)
{
	sigset_t os;
	char *p;

	block_signals(&os);
	p = pending_tmp;
	pending_tmp = NULL;
	restore_signals(&os);
	if (p != NULL && unlink_it)
		(void) unlink(p);
	free(p);
}

/*
 * Creates path (it must not exist: EEXIST is returned, nothing set in r)
 * holding data, gives it old's mode and owner (or mode when old is NULL)
 * when keep is set, and syncs it.  Until drop_pending() the file is the
 * pending one, removed by the signal handlers; on any failure here it is
 * removed at once.  0; EEXIST; -1 with r set.
 */
static int
create_synced(const char *path, const field_t *data, int omode, int keep,
    const struct stat *old, long long mode, resp_t *r)
{
	sigset_t os;
	char *copy;
	int fd, e;
	const char *stage;

	if ((copy = strdup(path)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		return (-1);
	}
	block_signals(&os);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
	    (mode_t)omode);
	e = errno;
	if (fd >= 0)
		pending_tmp = copy;
	restore_signals(&os);
	if (fd < 0) {
		free(copy);
		if (e == EEXIST)
			return (EEXIST);
		resp_errno(r, "open", e);
		return (-1);
	}
	stage = "write";
	if (write_all(fd, data->f_data, data->f_len) != 0)
		goto fail;
	/*
	 * Owner before mode: chown(2) clears the set-id bits, which the
	 * mode must then bring back.
	 */
	if (keep) {
		stage = "chown";
		if (old != NULL && fchown(fd, old->st_uid, old->st_gid) != 0) {
			if (errno == EPERM) {
				(void) close(fd);
				drop_pending(1);
				resp_fail(r, "group", NULL);
				resp_unum(r, (unsigned long long)old->st_gid);
				return (-1);
			}
			goto fail;
		}
		stage = "chmod";
		if (fchmod(fd, old != NULL ? old->st_mode & 07777 :
		    (mode_t)mode) != 0)
			goto fail;
	}
	stage = "fsync";
	if (fsync(fd) != 0)
		goto fail;
	stage = "close";
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	return (0);
fail:
	e = errno;
	if (fd >= 0)
		(void) close(fd);
	drop_pending(1);
	resp_errno(r, stage, e);
	return (-1);
}

/* Makes a rename or a creation in directory durable: 0, or -1 (r set). */
static int
fsync_dir(const char *dir, resp_t *r)
{
	int fd, flags = O_RDONLY;

#ifdef O_DIRECTORY
	flags |= O_DIRECTORY;
#endif
	if ((fd = open(dir, flags | O_CLOEXEC)) < 0) {
		if (errno == EINVAL)
			return (0);
		resp_fail(r, "sync", dir);
		resp_str(r, strerror(errno));
		return (-1);
	}
	/* Some file systems cannot sync a directory; the data is there. */
	if (fsync(fd) != 0 && errno != EINVAL) {
		resp_fail(r, "sync", dir);
		resp_str(r, strerror(errno));
		(void) close(fd);
		return (-1);
	}
	(void) close(fd);
	return (0);
}

void
op_create(req_t *q, resp_t *r)
{
	const char *base;
	char *path = NULL, *dir = NULL;
	long long mode;
	int rc;

	if (plain_mode(q, 1, &mode, r) != 0 ||
	    (path = write_path(q, 0, 1, r)) == NULL)
		return;
	if ((dir = dir_of(path, &base)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		goto done;
	}
	rc = create_synced(path, &q->q_f[2], (int)mode, 0, NULL, 0, r);
	if (rc == EEXIST) {
		resp_fail(r, "exists", NULL);
		goto done;
	}
	if (rc != 0)
		goto done;
	drop_pending(0);
	(void) fsync_dir(dir, r);
done:
	free(path);
	free(dir);
}

/* 8 random hex digits for a temporary file's name. */
static void
random_hex(char *b)
{
	static uint64_t mix;
	uint32_t v = 0;
	struct timespec ts;
	int fd;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) < 0 ||
	    read(fd, &v, sizeof (v)) != (ssize_t)sizeof (v)) {
		(void) clock_gettime(CLOCK_REALTIME, &ts);
		mix ^= (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
		    ((uint64_t)getpid() << 16);
		v = (uint32_t)splitmix64(&mix);
	}
	if (fd >= 0)
		(void) close(fd);
	(void) snprintf(b, 9, "%08x", (unsigned int)v);
}

void
op_replace(req_t *q, resp_t *r)
{
	const char *base;
	char *path = NULL, *dir = NULL, *tmp = NULL, hex[9];
	struct stat old;
	long long mode;
	size_t n;
	sigset_t os;
	int rc, have, e;

	if (plain_mode(q, 1, &mode, r) != 0 ||
	    (path = write_path(q, 0, 0, r)) == NULL)
		return;
	if ((dir = dir_of(path, &base)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		goto done;
	}
	if ((have = existing(path, &old, r)) < 0)
		goto done;

	/* Same directory, so that the rename cannot cross file systems. */
	random_hex(hex);
	n = strlen(dir) + strlen(base) + 64;
	if ((tmp = malloc(n)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		goto done;
	}
	(void) snprintf(tmp, n, "%s/.%s.sdtune.%ld.%s",
	    strcmp(dir, "/") == 0 ? "" : dir, base, (long)getpid(), hex);
	rc = create_synced(tmp, &q->q_f[2], 0600, 1, have ? &old : NULL,
	    mode, r);
	if (rc == EEXIST) {
		resp_fail(r, "tmpexists", tmp);
		goto done;
	}
	if (rc != 0)
		goto done;
	block_signals(&os);
	rc = rename(tmp, path);
	e = errno;
	restore_signals(&os);
	if (rc != 0) {
		drop_pending(1);
		resp_errno(r, "rename", e);
		goto done;
	}
	drop_pending(0);
	(void) fsync_dir(dir, r);
done:
	free(path);
	free(dir);
	free(tmp);
}

void
op_check_replaceable(req_t *q, resp_t *r)
{
	const char *base;
	char *path = NULL, *dir = NULL;
	struct stat old;

	if ((path = write_path(q, 0, 0, r)) == NULL)
		return;
	if ((dir = dir_of(path, &base)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		goto done;
	}
	if (existing(path, &old, r) < 0)
		goto done;
	if (access(dir, W_OK | X_OK) != 0)
		resp_fail(r, "dirnotwritable", dir);
done:
	free(path);
	free(dir);
}

static int
is_dir(const char *p)
{
	struct stat st;

	return (stat(p, &st) == 0 && S_ISDIR(st.st_mode));
}

/* mkdir -p: the last directory gets mode, those above it 0777. */
void
op_mkdirs(req_t *q, resp_t *r)
{
	char *path;
	struct stat st;
	long long mode;
	size_t j, len, rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
	int last;

	if (plain_mode(q, 1, &mode, r) != 0 ||
	    (path = write_path(q, 0, 0, r)) == NULL)
		return;
	len = strlen(path);
	for (j = 1; j <= len; j++) {
		if (path[j] != '/' && path[j] != '\0')
			continue;
		last = path[j] == '\0';
		path[j] = '\0';
		/* Below the root, a link could lead the rest anywhere. */
		if (j > rl && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			resp_fail(r, "symlink", path);
			break;
		}
		/* Something else above: the next mkdir says ENOTDIR. */
		if (!is_dir(path) && mkdir(path, last ? (mode_t)mode : 0777) !=
		    0 && !(errno == EEXIST && (!last || is_dir(path)))) {
			resp_errno(r, "mkdir", errno);
			break;
		}
		if (!last)
			path[j] = '/';
	}
	free(path);
}

/* Removes a file; the removal is made durable like a rename. */
/* remove and rmdir: unlink a file or an empty directory, durably. */
static void
remove_entry(req_t *q, resp_t *r, int dir_entry)
{
	const char *base;
	char *path = NULL, *dir = NULL;

	if ((path = write_path(q, 0, 1, r)) == NULL)
		return;
	if (dir_entry && strcmp(path, root) == 0) {
		resp_failf(r, "denied", "'%s' is the root", path);
		goto done;
	}
	if ((dir = dir_of(path, &base)) == NULL) {
		resp_fail(r, "nomem", "out of memory");
		goto done;
	}
	if ((dir_entry ? rmdir(path) : unlink(path)) != 0) {
		resp_errno(r, dir_entry ? "rmdir" : "unlink", errno);
		goto done;
	}
	(void) fsync_dir(dir, r);
done:
	free(path);
	free(dir);
}

void
op_remove(req_t *q, resp_t *r)
{
	remove_entry(q, r, 0);
}

void
op_rmdir(req_t *q, resp_t *r)
{
	remove_entry(q, r, 1);
}

/* -- locks -------------------------------------------------------------- */

static held_t *
held_find(dev_t dev, ino_t ino)
{
	int i;

	for (i = 0; i < MAX_LOCKS; i++)
		if (held[i].h_fd >= 0 && held[i].h_dev == dev &&
		    held[i].h_ino == ino)
			return (&held[i]);
	return (NULL);
}

static int
setlk(int fd, short type)
{
	struct flock fl;

	(void) memset(&fl, 0, sizeof (fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = 0;
	fl.l_len = 0;
	return (fcntl(fd, F_SETLK, &fl));
}

static void
lock_at(const char *path, resp_t *r)
{
	struct stat st;
	held_t *h = NULL;
	char pid[32];
	int fd, i, e;

	/*
	 * Held already: refused before an open, whose close would drop the
	 * lock (POSIX locks are the process's, not the descriptor's).
	 */
	if (lstat(path, &st) == 0 && held_find(st.st_dev, st.st_ino) != NULL) {
		resp_fail(r, "locked", NULL);
		return;
	}
	for (i = 0; i < MAX_LOCKS && h == NULL; i++)
		if (held[i].h_fd < 0)
			h = &held[i];
	if (h == NULL) {
		resp_failf(r, "usage", "more than %d locks held", MAX_LOCKS);
		return;
	}
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0644)) < 0) {
		resp_errno(r, "open", errno);
		return;
	}
	if (fstat(fd, &st) != 0) {
		resp_errno(r, "stat", errno);
		(void) close(fd);
		return;
	}
	if (held_find(st.st_dev, st.st_ino) != NULL) {
		/*
		 * A held file renamed here since the lstat: closing fd would
		 * drop its lock, so fd is left open.
		 */
		resp_fail(r, "locked", NULL);
		return;
	}
	if (setlk(fd, F_WRLCK) != 0) {
		e = errno;
		(void) close(fd);
		if (e == EACCES || e == EAGAIN)
			resp_fail(r, "locked", NULL);
		else
			resp_errno(r, "lock", e);
		return;
	}
	/* The holder's pid helps the operator find a stuck process. */
	(void) snprintf(pid, sizeof (pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || write_all(fd, pid, strlen(pid)) != 0) {
		resp_errno(r, "write", errno);
		(void) close(fd);
		return;
	}
	if ((h->h_path = strdup(path)) == NULL) {
		(void) close(fd);
		resp_fail(r, "nomem", "out of memory");
		return;
	}
	h->h_fd = fd;
	h->h_dev = st.st_dev;
	h->h_ino = st.st_ino;
}

/*
 * No link below the root, the lock file itself included: a refusal
 * (symlink), as for every write, rather than O_NOFOLLOW's ELOOP, a
 * failure.  O_NOFOLLOW still guards the open.
 */
void
op_lock(req_t *q, resp_t *r)
{
	char *path;

	if ((path = write_path(q, 0, 1, r)) == NULL)
		return;
	lock_at(path, r);
	free(path);
}

static void
unlock_at(const char *path, resp_t *r)
{
	struct stat st;
	held_t *h = NULL;
	int i;

	for (i = 0; i < MAX_LOCKS && h == NULL; i++)
		if (held[i].h_fd >= 0 && strcmp(held[i].h_path, path) == 0)
			h = &held[i];
	if (h == NULL && lstat(path, &st) == 0)
		h = held_find(st.st_dev, st.st_ino);
	if (h == NULL) {
		resp_fail(r, "notlocked", path);
		return;
	}
	(void) setlk(h->h_fd, F_UNLCK);
	(void) close(h->h_fd);
	free(h->h_path);
	h->h_path = NULL;
	h->h_fd = -1;
}

void
op_unlock(req_t *q, resp_t *r)
{
	char *path;

	if ((path = write_path(q, 0, 0, r)) != NULL)
		unlock_at(path, r);
	free(path);
}

/* At the start of the session: no lock held, every slot free. */
void
locks_init(void)
{
	int i;

	for (i = 0; i < MAX_LOCKS; i++)
		held[i].h_fd = -1;
}

/* At the end of the session: every lock it still holds. */
void
release_all(void)
{
	int i;

	for (i = 0; i < MAX_LOCKS; i++) {
		if (held[i].h_fd < 0)
			continue;
		(void) setlk(held[i].h_fd, F_UNLCK);
		(void) close(held[i].h_fd);
		free(held[i].h_path);
		held[i].h_fd = -1;
	}
}
