/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * fuseshim: preloaded into nbdfuse (LD_PRELOAD) so that O_DIRECT writes from
 * several threads reach the emulated drive at the same time.
 *
 * Why: for a FUSE file the kernel holds the inode lock across a
 * synchronous direct write unless the server opened the file with
 * FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES.  nbdfuse (libnbd 1.14)
 * sets neither, and libfuse 3.14 has no field for the second, so N
 * threads doing pwrite() would reach the drive one at a time and no
 * queue-depth knee could ever show.  (Reads and AIO writes are not
 * serialized; this only matters for synchronous writes.)
 *
 * How: remember the unique id of every FUSE_OPEN request that libfuse
 * read()s from /dev/fuse, and OR both flags into the open_flags of the
 * matching fuse_open_out reply that it writev()s back.  The fd is learnt
 * from fuse_mount().  Nothing else is touched.  FOPEN_DIRECT_IO also
 * keeps the page cache out of the way, as on a raw disk.
 *
 * Second, libfuse's multi-threaded loop serves at most 10 requests at once
 * (its default max_threads, which nbdfuse cannot change), which would cap
 * the queue depth the drive sees at 10; fuse_loop_mt_32() is wrapped to
 * raise it to $SDEMU_FUSE_THREADS (default 64).
 *
 * The wire structures are those of <linux/fuse.h>, stable kernel ABI; the
 * libfuse entry points are looked up by their 3.12 symbol versions.
 */

#define	_GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define	FUSE_OPEN_OPCODE		14
#define	FOPEN_DIRECT_IO			(1U << 0)
#define	FOPEN_PARALLEL_DIRECT_WRITES	(1U << 6)
#define	NPENDING			64
#define	DEFAULT_THREADS			64

struct fuse;
struct fuse_session;
struct fuse_loop_config;
struct fuse_loop_config_v1;

struct shim_in_header {
	uint32_t	ih_len;
	uint32_t	ih_opcode;
	uint64_t	ih_unique;
	uint64_t	ih_nodeid;
	uint32_t	ih_uid;
	uint32_t	ih_gid;
	uint32_t	ih_pid;
	uint16_t	ih_total_extlen;
	uint16_t	ih_padding;
};

struct shim_open_reply {
	uint32_t	or_len;		/* struct fuse_out_header */
	int32_t		or_error;
	uint64_t	or_unique;
	uint64_t	or_fh;		/* struct fuse_open_out */
	uint32_t	or_open_flags;
	int32_t		or_backing_id;
};

static ssize_t	(*real_read)(int, void *, size_t);
static ssize_t	(*real_writev)(int, const struct iovec *, int);
static int	fuse_fd = -1;
static pthread_mutex_t	pending_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t	pending[NPENDING];
static unsigned int	npending;

static void
shim_init(void)
{
	if (real_read == NULL)
		real_read = (ssize_t (*)(int, void *, size_t))
		    dlsym(RTLD_NEXT, "read");
	if (real_writev == NULL)
		real_writev = (ssize_t (*)(int, const struct iovec *, int))
		    dlsym(RTLD_NEXT, "writev");
}

static void shim_ctor(void) __attribute__((constructor));

static void
shim_ctor(void)
{
	shim_init();
}

int
fuse_mount(struct fuse *f, const char *mountpoint)
{
	int (*mount_fn)(struct fuse *, const char *);
	struct fuse_session *(*session_fn)(struct fuse *);
	int (*fd_fn)(struct fuse_session *);
	int rc;

	mount_fn = (int (*)(struct fuse *, const char *))
	    dlvsym(RTLD_NEXT, "fuse_mount", "FUSE_3.0");
	session_fn = (struct fuse_session *(*)(struct fuse *))
	    dlvsym(RTLD_NEXT, "fuse_get_session", "FUSE_3.0");
	fd_fn = (int (*)(struct fuse_session *))
	    dlvsym(RTLD_NEXT, "fuse_session_fd", "FUSE_3.0");
	if (mount_fn == NULL)
		return (-1);
	rc = mount_fn(f, mountpoint);
	if (rc == 0 && session_fn != NULL && fd_fn != NULL)
		__atomic_store_n(&fuse_fd, fd_fn(session_fn(f)),
		    __ATOMIC_RELEASE);
	return (rc);
}

int
fuse_loop_mt_32(struct fuse *f, struct fuse_loop_config_v1 *v1)
{
	struct fuse_loop_config *(*create_fn)(void);
	void (*convert_fn)(struct fuse_loop_config *,
	    struct fuse_loop_config_v1 *);
	void (*max_fn)(struct fuse_loop_config *, unsigned int);
	void (*destroy_fn)(struct fuse_loop_config *);
	int (*loop_fn)(struct fuse *, struct fuse_loop_config *);
	struct fuse_loop_config *cfg;
	const char *env = getenv("SDEMU_FUSE_THREADS");
	long n = env != NULL ? strtol(env, NULL, 10) : DEFAULT_THREADS;
	int rc;

	create_fn = (struct fuse_loop_config *(*)(void))
	    dlvsym(RTLD_NEXT, "fuse_loop_cfg_create", "FUSE_3.12");
	convert_fn = (void (*)(struct fuse_loop_config *,
	    struct fuse_loop_config_v1 *))
	    dlvsym(RTLD_NEXT, "fuse_loop_cfg_convert", "FUSE_3.12");
	max_fn = (void (*)(struct fuse_loop_config *, unsigned int))
	    dlvsym(RTLD_NEXT, "fuse_loop_cfg_set_max_threads", "FUSE_3.12");
	destroy_fn = (void (*)(struct fuse_loop_config *))
	    dlvsym(RTLD_NEXT, "fuse_loop_cfg_destroy", "FUSE_3.12");
	loop_fn = (int (*)(struct fuse *, struct fuse_loop_config *))
	    dlvsym(RTLD_NEXT, "fuse_loop_mt_312", "FUSE_3.12");
	if (create_fn == NULL || convert_fn == NULL || max_fn == NULL ||
	    destroy_fn == NULL || loop_fn == NULL ||
	    (cfg = create_fn()) == NULL)
		return (-1);
	if (v1 != NULL)
		convert_fn(cfg, v1);
	max_fn(cfg, (unsigned int)(n > 0 && n <= 1024 ? n : DEFAULT_THREADS));
	rc = loop_fn(f, cfg);
	destroy_fn(cfg);
	return (rc);
}

ssize_t
read(int fd, void *buf, size_t count)
{
	struct shim_in_header ih;
	ssize_t r;

	shim_init();
	r = real_read(fd, buf, count);
	if (fd < 0 || fd != __atomic_load_n(&fuse_fd, __ATOMIC_ACQUIRE) ||
	    r < (ssize_t)sizeof (ih))
		return (r);
	(void) memcpy(&ih, buf, sizeof (ih));
	if (ih.ih_opcode == FUSE_OPEN_OPCODE) {
		(void) pthread_mutex_lock(&pending_lock);
		pending[npending++ % NPENDING] = ih.ih_unique;
		(void) pthread_mutex_unlock(&pending_lock);
	}
	return (r);
}

static int
take_pending(uint64_t unique)
{
	unsigned int i;
	int found = 0;

	(void) pthread_mutex_lock(&pending_lock);
	for (i = 0; i < NPENDING; i++) {
		if (pending[i] == unique && unique != 0) {
			pending[i] = 0;
			found = 1;
			break;
		}
	}
	(void) pthread_mutex_unlock(&pending_lock);
	return (found);
}

ssize_t
writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct shim_open_reply rep;
	struct iovec one;
	size_t total = 0, off = 0;
	int i;

	shim_init();
	if (fd < 0 || fd != __atomic_load_n(&fuse_fd, __ATOMIC_ACQUIRE))
		return (real_writev(fd, iov, iovcnt));
	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total != sizeof (rep))
		return (real_writev(fd, iov, iovcnt));
	for (i = 0; i < iovcnt; i++) {
		(void) memcpy((char *)&rep + off, iov[i].iov_base,
		    iov[i].iov_len);
		off += iov[i].iov_len;
	}
	if (rep.or_error != 0 || rep.or_len != sizeof (rep) ||
	    !take_pending(rep.or_unique))
		return (real_writev(fd, iov, iovcnt));
	rep.or_open_flags |= FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES;
	one.iov_base = &rep;
	one.iov_len = sizeof (rep);
	return (real_writev(fd, &one, 1));
}
