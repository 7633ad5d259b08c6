/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * sdemu: an nbdkit plugin that serves an emulated SSD with a timing model,
 * so that sdtune's measurements run for real (O_DIRECT, pwrite, fdatasync
 * through nbdfuse) against drives whose native page, cache and internal
 * parallelism are known.  See DESIGN.md, seam 5.
 *
 *	nbdkit -s ./sdemu.so logical=512 native=4096 cache=volatile \
 *	    channels=4 stats=/tmp/x/stats
 *
 * Parameters (time values are microseconds before scaling; every time is
 * multiplied by "scale", so the ratios stay those of the model while each
 * I/O stays well above the ~0.1 ms that the FUSE path adds):
 *
 *	size=BYTES		exported size (default 1G), kept in memory
 *	logical=512|4096	block size reported and enforced (EINVAL)
 *	native=512..16384	internal page size, a power of two >= logical
 *	cache=volatile|nonvolatile
 *	channels=N		requests serviced at once; more wait
 *	cmd=US			per-command overhead
 *	xfer_mbps=MB/S		transfer bandwidth (1 MB = 10^6 bytes)
 *	program=US		per native page written
 *	rmw=US			per native page only partly written
 *	read=US			per read command
 *	flush_volatile=US	flush that drains a volatile cache
 *	flush_page=US		... plus this per dirty native page
 *	cache_pages=N		... counting at most N dirty pages
 *	flush_nv=US		flush on a non-volatile cache
 *	scale=X			multiplier on every time above
 *	jitter=X		relative uniform noise on each service time
 *	spin=auto|US		sleep until this long before a deadline, then
 *				spin (not scaled); auto (default) learns it
 *				from how late the drive's sleeps end
 *	rt=1|0			serve requests in SCHED_FIFO threads (default
 *				1, ignored without the privilege), so that a
 *				deadline is met even with CPU hogs running
 *	seed=N			seed of the jitter generator
 *	fail=eio@OFFSET		any read or write touching OFFSET fails EIO
 *				(may be given up to 16 times)
 *	fail_after=N		every request after the Nth write fails EIO
 *	stats=PATH		counters, see struct sdemu_stats
 *	durable_image=PATH	keep the durable state in PATH and let the
 *				harness cut the power (SIGUSR1); see below
 *	durability=honest|lie_flush|lie_nv
 *				what flushes really do (default honest)
 *
 * The model.  A write of L bytes at offset O touches the native pages
 * O / native .. (O + L - 1) / native; a touched page that the write covers
 * only in part needs a read-modify-write.  Its service time is
 *
 *	cmd + L / bandwidth + program * pages + rmw * partial_pages
 *
 * so a write smaller than the native page, or one misaligned to it, costs
 * more per I/O than an aligned native-size write, while on a 512-native
 * drive the cost only falls as writes get smaller.  Both cache kinds
 * acknowledge writes from cache at that cost; they differ in what a flush
 * costs: on a volatile cache it drains the dirty pages (flush_volatile +
 * flush_page per dirty page, at most cache_pages of them), on a
 * non-volatile one it is nearly free (flush_nv).  A FUA write pays the
 * same drain for its own pages.  A read costs read + L / bandwidth.
 *
 * Defaults, in us before the default scale of 20: cmd 10, xfer_mbps 1000,
 * read 25, flush_volatile 150, flush_page 10, cache_pages 64, flush_nv 2,
 * channels 4, jitter 0.02, and per native page size program / rmw of
 * 3 / 6 (512), 20 / 40 (4096), 28 / 50 (8192) and 40 / 70 (16384).  So
 * on a 512e drive an aligned 4 KiB write takes 682 us, a 512-byte one
 * 1410 us, a 4 KiB one misaligned by 512 bytes 2682 us, a volatile flush
 * after one write 3200 us and a non-volatile one 40 us.
 *
 * Virtual clock.  The drive has "channels" virtual channels, each free from
 * some instant on.  A request arriving at T takes the channel that frees
 * first, starts at max(T, free) and ends after its service time; the
 * thread then sleeps until shortly before that deadline and spins on
 * CLOCK_MONOTONIC for the rest.  Queueing follows the model even when a
 * thread wakes late, and throughput saturates at "channels" requests.
 *
 * Durability (only with durable_image=PATH; without it the drive keeps
 * one image in memory, nothing is ever lost and SIGUSR1 is not handled).
 * The drive then has a durable image, the file PATH, and a volatile cache
 * of dirty native pages over it; reads see the newest data, cache over
 * durable, as a real drive's do.  The timing model above is untouched:
 * what a request costs and what it makes durable are separate questions.
 *
 *	durability=honest, cache=nonvolatile: every write is durable by the
 *	time it completes (the cache has capacitors behind it).
 *	durability=honest, cache=volatile: a write lands in the cache; a
 *	flush makes every dirty page durable before it completes; a FUA
 *	write makes its own pages durable.
 *	durability=lie_flush (cache=volatile): flushes and FUA complete at
 *	their usual cost and make nothing durable.
 *	durability=lie_nv (cache=nonvolatile): times and reports itself as
 *	a non-volatile cache (cheap flushes, volatile 0 in the stats) but
 *	keeps writes in a volatile cache that flushes and FUA ignore.
 *
 * Write-back.  The volatile cache holds at most cache_pages dirty native
 * pages (the same bound the flush cost counts).  A page joins the cache
 * when a write first dirties it and keeps its place while it is written
 * again (the newer data merges into the cached page); when a page must
 * join a full cache, the page that joined earliest is written back (made
 * durable) first, as a drive drains its write buffer in arrival order.
 * cache_pages=0 is a write-through cache: every write durable at once.
 *
 * Power cut.  SIGUSR1 to nbdkit cuts the power: a thread waiting in
 * sigwait() takes the durability lock at once, drops the dirty pages
 * (counted in lost_pages), and from then on every request, including one
 * in flight whose service time ends later, fails with EIO and nothing
 * more becomes durable.  A signal rather than a control file: the cut
 * happens when it is sent, even with no request arriving, with no thread
 * polling a file and nothing added to the request path to look for one,
 * and the harness knows it took effect when power reads 1 in the stats
 * file.  (Without durable_image= SIGUSR1 keeps its default action and
 * ends nbdkit.)  Power on is a new nbdkit on the same image: it loads
 * what was durable, nothing else.  Stopping nbdkit is a cut too: nothing
 * is written back at exit.  A FUA write cannot come through nbdfuse (the
 * kernel sends O_DSYNC to FUSE as a write and an fsync), so its path is
 * for NBD clients.
 *
 * The image file is the raw device image (sparse, size bytes); a page
 * becomes durable by one pwrite() of the whole native page from the newest
 * image, under the lock, so the file always holds, page by page, a state
 * the drive went through.  That survives a SIGKILL of nbdkit at any moment
 * without fdatasync: a completed pwrite is in the page cache, which
 * outlives the process, and the kernel copies each 4 KiB page of a
 * pwrite whole, so a killed write-back leaves each block old or new (an
 * 8 or 16 KiB native page may be left part old, part new, as on a drive
 * whose program was cut).  What the emulation does not model is the
 * test machine itself crashing, which fdatasync would be for.
 */

#ifdef __linux__
#define	_GNU_SOURCE	/* SEEK_DATA, SEEK_HOLE */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define	NBDKIT_API_VERSION	2
#include <nbdkit-plugin.h>

#define	THREAD_MODEL	NBDKIT_THREAD_MODEL_PARALLEL

/*
 * The counters file: a fixed array of native-endian uint64_t, index in the
 * comment.  tests/emu/drive.py reads it with the same layout; change both
 * together and bump SDEMU_MAGIC.  The parameter block (2-17) holds the
 * effective, scaled values, written once before the first request; 40 and
 * 41 are parameters too, and 42-43 gauges (appended to keep the indexes
 * of v1).
 */
#define	SDEMU_MAGIC	0x5344454d55000002ULL	/* "SDEMU" v2 */
#define	SDEMU_NSIZES	7	/* 512 1K 2K 4K 8K 16K other */

struct sdemu_stats {
	uint64_t	s_magic;		/* 0 */
	uint64_t	s_nfields;		/* 1 */
	uint64_t	s_size;			/* 2 bytes */
	uint64_t	s_logical;		/* 3 */
	uint64_t	s_native;		/* 4 */
	uint64_t	s_volatile;		/* 5 1 or 0 */
	uint64_t	s_channels;		/* 6 */
	uint64_t	s_cmd_ns;		/* 7 */
	uint64_t	s_xfer_ps;		/* 8 picoseconds per byte */
	uint64_t	s_program_ns;		/* 9 */
	uint64_t	s_rmw_ns;		/* 10 */
	uint64_t	s_read_ns;		/* 11 */
	uint64_t	s_flush_volatile_ns;	/* 12 */
	uint64_t	s_flush_page_ns;	/* 13 */
	uint64_t	s_flush_nv_ns;		/* 14 */
	uint64_t	s_cache_pages;		/* 15 */
	uint64_t	s_jitter_ppm;		/* 16 */
	uint64_t	s_spin_ns;		/* 17 0: auto */
	uint64_t	s_writes;		/* 18 */
	uint64_t	s_reads;		/* 19 */
	uint64_t	s_flushes;		/* 20 */
	uint64_t	s_bytes_written;	/* 21 */
	uint64_t	s_bytes_read;		/* 22 */
	uint64_t	s_wsize[SDEMU_NSIZES];	/* 23-29 writes by size */
	uint64_t	s_misaligned;		/* 30 offset % native != 0 */
	uint64_t	s_rmw;			/* 31 partial native pages */
	uint64_t	s_errors;		/* 32 injected EIO */
	uint64_t	s_max_inflight;		/* 33 */
	uint64_t	s_inflight;		/* 34 */
	uint64_t	s_rejected;		/* 35 EINVAL: not aligned */
	uint64_t	s_fua_writes;		/* 36 */
	uint64_t	s_late;			/* 37 ended > 50 us late */
	uint64_t	s_late_ns;		/* 38 sum of lateness */
	uint64_t	s_busy_ns;		/* 39 sum of service times */
	uint64_t	s_durability;		/* 40 0 honest, 1 lie_flush, */
						/* 2 lie_nv */
	uint64_t	s_durable;		/* 41 1: durable_image given */
	uint64_t	s_power;		/* 42 1: power cut */
	uint64_t	s_dirty;		/* 43 pages in volatile cache */
	uint64_t	s_durable_pages;	/* 44 pages made durable */
	uint64_t	s_writebacks;		/* 45 ... as the cache filled */
	uint64_t	s_durable_flushes;	/* 46 honest flushes */
	uint64_t	s_lost_pages;		/* 47 dropped at the cut */
	uint64_t	s_unpowered;		/* 48 EIO: the power was cut */
};

enum durability {
	DUR_HONEST = 0,
	DUR_LIE_FLUSH = 1,
	DUR_LIE_NV = 2
};

#define	SDEMU_NFIELDS	(sizeof (struct sdemu_stats) / sizeof (uint64_t))
#define	SDEMU_LATE_NS	50000
#define	SDEMU_SPIN_INIT_NS	100000
#define	SDEMU_SPIN_PAD_NS	10000
#define	SDEMU_SPIN_MIN_NS	20000
#define	SDEMU_SPIN_MAX_NS	300000
#define	SDEMU_MAXFAIL	16
#define	CHUNK_SHIFT	16
#define	CHUNK_SIZE	(1ULL << CHUNK_SHIFT)

/*
 * Default costs per native page size, microseconds before scaling: bigger
 * pages take longer to program and to read back for a partial write.
 */
static const struct page_default {
	uint32_t	pd_native;
	double		pd_program;
	double		pd_rmw;
} page_defaults[] = {
	{ 512, 3.0, 6.0 },
	{ 4096, 20.0, 40.0 },
	{ 8192, 28.0, 50.0 },
	{ 16384, 40.0, 70.0 }
};

/* Configuration. */
static uint64_t	cf_size = 1ULL << 30;
static uint32_t	cf_logical = 512;
static uint32_t	cf_native = 4096;
static int	cf_volatile = 1;
static uint32_t	cf_channels = 4;
static double	cf_cmd = 10.0;
static double	cf_xfer_mbps = 1000.0;
static double	cf_program = -1.0;
static double	cf_rmw = -1.0;
static double	cf_read = 25.0;
static double	cf_flush_volatile = 150.0;
static double	cf_flush_page = 10.0;
static double	cf_flush_nv = 2.0;
static uint64_t	cf_cache_pages = 64;
static double	cf_scale = 20.0;
static double	cf_jitter = 0.02;
static double	cf_spin = -1.0;
static uint64_t	cf_seed = 1;
static int	cf_rt = 1;
static uint64_t	cf_fail[SDEMU_MAXFAIL];
static int	cf_nfail;
static uint64_t	cf_fail_after;
static int	cf_fail_after_set;
static char	*cf_stats_path;
static char	*cf_durable_path;
static enum durability	cf_durability = DUR_HONEST;

/* Effective, scaled costs in nanoseconds. */
static double	ns_cmd, ns_xfer_byte, ns_program, ns_rmw, ns_read;
static double	ns_flush_volatile, ns_flush_page, ns_flush_nv, ns_spin;

/* State. */
static struct sdemu_stats	stats_anon;
static struct sdemu_stats	*st = &stats_anon;
static uint8_t		**chunks;
static uint64_t		nchunks;
static pthread_mutex_t	chan_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t		*chan_free;
static uint64_t		dirty_pages;
static uint64_t		write_seq;
static uint64_t		thread_seq;
static __thread uint64_t	rng_state;
static uint64_t		oversleep_mean;	/* ns; 0 until learnt */
static uint64_t		oversleep_dev;

/*
 * Durability state (durable_image= only), all under dur_lock but
 * power_off, which a request also reads without it.  The cache is a ring
 * of page numbers in the order they joined (at most cache_pages) and a
 * bitmap of the same pages, to find a page in it at once.
 */
static pthread_mutex_t	dur_lock = PTHREAD_MUTEX_INITIALIZER;
static int		dur_fd = -1;
static int		dur_volatile;	/* writes wait in the cache */
static uint8_t		*dirty_map;
static uint64_t		*dirty_ring;
static uint64_t		ring_head;
static uint64_t		ring_count;
static int		power_off;
static pthread_t	cut_thread;
static int		cut_thread_started;
static const uint8_t	zero_page[16384];

static int	durable_open(void);
static void	*cut_watch(void *);

static uint64_t
now_ns(void)
{
	struct timespec ts;

	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

static void
stat_add(uint64_t *p, uint64_t v)
{
	(void) __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

static void
stat_max(uint64_t *p, uint64_t v)
{
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > old && !__atomic_compare_exchange_n(p, &old, v, 0,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		continue;
}

static int
parse_us(const char *key, const char *value, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(value, &end);
	if (errno != 0 || end == value || *end != '\0' || !isfinite(d) ||
	    d < 0.0) {
		nbdkit_error("%s: not a non-negative number: %s", key, value);
		return (-1);
	}
	*out = d;
	return (0);
}

static int
is_pow2(uint64_t v)
{
	return (v != 0 && (v & (v - 1)) == 0);
}

static int
sdemu_config(const char *key, const char *value)
{
	int64_t r;

	if (strcmp(key, "size") == 0) {
		if ((r = nbdkit_parse_size(value)) == -1)
			return (-1);
		cf_size = (uint64_t)r;
	} else if (strcmp(key, "logical") == 0) {
		if (nbdkit_parse_uint32_t(key, value, &cf_logical) == -1)
			return (-1);
	} else if (strcmp(key, "native") == 0) {
		if (nbdkit_parse_uint32_t(key, value, &cf_native) == -1)
			return (-1);
	} else if (strcmp(key, "cache") == 0) {
		if (strcmp(value, "volatile") == 0) {
			cf_volatile = 1;
		} else if (strcmp(value, "nonvolatile") == 0) {
			cf_volatile = 0;
		} else {
			nbdkit_error("cache: volatile or nonvolatile: %s",
			    value);
			return (-1);
		}
	} else if (strcmp(key, "channels") == 0) {
		if (nbdkit_parse_uint32_t(key, value, &cf_channels) == -1)
			return (-1);
	} else if (strcmp(key, "cmd") == 0) {
		return (parse_us(key, value, &cf_cmd));
	} else if (strcmp(key, "xfer_mbps") == 0) {
		return (parse_us(key, value, &cf_xfer_mbps));
	} else if (strcmp(key, "program") == 0) {
		return (parse_us(key, value, &cf_program));
	} else if (strcmp(key, "rmw") == 0) {
		return (parse_us(key, value, &cf_rmw));
	} else if (strcmp(key, "read") == 0) {
		return (parse_us(key, value, &cf_read));
	} else if (strcmp(key, "flush_volatile") == 0) {
		return (parse_us(key, value, &cf_flush_volatile));
	} else if (strcmp(key, "flush_page") == 0) {
		return (parse_us(key, value, &cf_flush_page));
	} else if (strcmp(key, "flush_nv") == 0) {
		return (parse_us(key, value, &cf_flush_nv));
	} else if (strcmp(key, "cache_pages") == 0) {
		if (nbdkit_parse_uint64_t(key, value, &cf_cache_pages) == -1)
			return (-1);
	} else if (strcmp(key, "scale") == 0) {
		return (parse_us(key, value, &cf_scale));
	} else if (strcmp(key, "jitter") == 0) {
		return (parse_us(key, value, &cf_jitter));
	} else if (strcmp(key, "spin") == 0) {
		if (strcmp(value, "auto") == 0) {
			cf_spin = -1.0;
			return (0);
		}
		return (parse_us(key, value, &cf_spin));
	} else if (strcmp(key, "rt") == 0) {
		if ((cf_rt = nbdkit_parse_bool(value)) == -1)
			return (-1);
	} else if (strcmp(key, "seed") == 0) {
		if (nbdkit_parse_uint64_t(key, value, &cf_seed) == -1)
			return (-1);
	} else if (strcmp(key, "fail") == 0) {
		if (strncmp(value, "eio@", 4) != 0) {
			nbdkit_error("fail: expected eio@OFFSET: %s", value);
			return (-1);
		}
		if (cf_nfail == SDEMU_MAXFAIL) {
			nbdkit_error("fail: at most %d offsets", SDEMU_MAXFAIL);
			return (-1);
		}
		if ((r = nbdkit_parse_size(value + 4)) == -1)
			return (-1);
		cf_fail[cf_nfail++] = (uint64_t)r;
	} else if (strcmp(key, "fail_after") == 0) {
		if (nbdkit_parse_uint64_t(key, value, &cf_fail_after) == -1)
			return (-1);
		cf_fail_after_set = 1;
	} else if (strcmp(key, "stats") == 0) {
		free(cf_stats_path);
		if ((cf_stats_path = nbdkit_absolute_path(value)) == NULL)
			return (-1);
	} else if (strcmp(key, "durable_image") == 0) {
		free(cf_durable_path);
		if ((cf_durable_path = nbdkit_absolute_path(value)) == NULL)
			return (-1);
	} else if (strcmp(key, "durability") == 0) {
		if (strcmp(value, "honest") == 0) {
			cf_durability = DUR_HONEST;
		} else if (strcmp(value, "lie_flush") == 0) {
			cf_durability = DUR_LIE_FLUSH;
		} else if (strcmp(value, "lie_nv") == 0) {
			cf_durability = DUR_LIE_NV;
		} else {
			nbdkit_error("durability: honest, lie_flush or "
			    "lie_nv: %s", value);
			return (-1);
		}
	} else {
		nbdkit_error("unknown parameter '%s'", key);
		return (-1);
	}
	return (0);
}

/*
 * A lie needs a truth to differ from: the liars exist only with a durable
 * image, and each lies about one cache kind (lie_flush about a volatile
 * cache's flushes, lie_nv about having a non-volatile one).  SIGUSR1 is
 * blocked here, in the main thread before nbdkit starts any other, so
 * that every thread inherits the mask and only cut_watch() takes it.
 */
static int
durability_config(void)
{
	sigset_t set;

	if (cf_durability != DUR_HONEST && cf_durable_path == NULL) {
		nbdkit_error("durability=lie_flush or lie_nv needs "
		    "durable_image=PATH");
		return (-1);
	}
	if (cf_durability == DUR_LIE_FLUSH && !cf_volatile) {
		nbdkit_error("durability=lie_flush needs cache=volatile");
		return (-1);
	}
	if (cf_durability == DUR_LIE_NV && cf_volatile) {
		nbdkit_error("durability=lie_nv needs cache=nonvolatile");
		return (-1);
	}
	if (cf_durable_path == NULL)
		return (0);
	dur_volatile = cf_volatile || cf_durability == DUR_LIE_NV;
	(void) sigemptyset(&set);
	(void) sigaddset(&set, SIGUSR1);
	if ((errno = pthread_sigmask(SIG_BLOCK, &set, NULL)) != 0) {
		nbdkit_error("pthread_sigmask: %m");
		return (-1);
	}
	return (0);
}

static int
sdemu_config_complete(void)
{
	size_t i;

	if (cf_logical != 512 && cf_logical != 4096) {
		nbdkit_error("logical must be 512 or 4096");
		return (-1);
	}
	if (!is_pow2(cf_native) || cf_native < cf_logical ||
	    cf_native > 16384) {
		nbdkit_error("native must be a power of two from logical "
		    "to 16384");
		return (-1);
	}
	if (cf_size == 0 || cf_size % cf_native != 0) {
		nbdkit_error("size must be a non-zero multiple of native");
		return (-1);
	}
	if (cf_channels < 1 || cf_channels > 1024) {
		nbdkit_error("channels must be 1 to 1024");
		return (-1);
	}
	if (cf_xfer_mbps <= 0.0 || cf_scale <= 0.0 || cf_jitter >= 1.0) {
		nbdkit_error("xfer_mbps and scale must be > 0, jitter < 1");
		return (-1);
	}
	for (i = 0; i < sizeof (page_defaults) / sizeof (page_defaults[0]);
	    i++) {
		if (page_defaults[i].pd_native != cf_native)
			continue;
		if (cf_program < 0.0)
			cf_program = page_defaults[i].pd_program;
		if (cf_rmw < 0.0)
			cf_rmw = page_defaults[i].pd_rmw;
	}
	if (cf_program < 0.0 || cf_rmw < 0.0) {
		/* 1024 and 2048 native: the 4096 costs. */
		cf_program = cf_program < 0.0 ? 20.0 : cf_program;
		cf_rmw = cf_rmw < 0.0 ? 40.0 : cf_rmw;
	}
	if (durability_config() == -1)
		return (-1);

	ns_cmd = cf_cmd * cf_scale * 1000.0;
	ns_xfer_byte = cf_scale * 1000.0 / cf_xfer_mbps;
	ns_program = cf_program * cf_scale * 1000.0;
	ns_rmw = cf_rmw * cf_scale * 1000.0;
	ns_read = cf_read * cf_scale * 1000.0;
	ns_flush_volatile = cf_flush_volatile * cf_scale * 1000.0;
	ns_flush_page = cf_flush_page * cf_scale * 1000.0;
	ns_flush_nv = cf_flush_nv * cf_scale * 1000.0;
	ns_spin = cf_spin >= 0.0 ? cf_spin * 1000.0 : -1.0;
	return (0);
}

static int
stats_open(void)
{
	void *p;
	int fd;

	if (cf_stats_path == NULL)
		return (0);
	fd = open(cf_stats_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);
	if (fd == -1) {
		nbdkit_error("open %s: %m", cf_stats_path);
		return (-1);
	}
	if (ftruncate(fd, sizeof (struct sdemu_stats)) == -1) {
		nbdkit_error("ftruncate %s: %m", cf_stats_path);
		(void) close(fd);
		return (-1);
	}
	p = mmap(NULL, sizeof (struct sdemu_stats), PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0);
	(void) close(fd);
	if (p == MAP_FAILED) {
		nbdkit_error("mmap %s: %m", cf_stats_path);
		return (-1);
	}
	st = p;
	return (0);
}

static int
sdemu_get_ready(void)
{
	nchunks = (cf_size + CHUNK_SIZE - 1) >> CHUNK_SHIFT;
	chunks = calloc(nchunks, sizeof (uint8_t *));
	chan_free = calloc(cf_channels, sizeof (uint64_t));
	if (chunks == NULL || chan_free == NULL) {
		nbdkit_error("calloc: %m");
		return (-1);
	}
	if (stats_open() == -1)
		return (-1);
	if (cf_durable_path != NULL && dur_volatile && cf_cache_pages > 0) {
		dirty_map = calloc((cf_size / cf_native + 7) / 8, 1);
		dirty_ring = calloc(cf_cache_pages, sizeof (uint64_t));
		if (dirty_map == NULL || dirty_ring == NULL) {
			nbdkit_error("calloc: %m");
			return (-1);
		}
	}
	if (cf_durable_path != NULL && durable_open() == -1)
		return (-1);

	st->s_nfields = SDEMU_NFIELDS;
	st->s_size = cf_size;
	st->s_logical = cf_logical;
	st->s_native = cf_native;
	st->s_volatile = (uint64_t)cf_volatile;
	st->s_channels = cf_channels;
	st->s_cmd_ns = (uint64_t)llround(ns_cmd);
	st->s_xfer_ps = (uint64_t)llround(ns_xfer_byte * 1000.0);
	st->s_program_ns = (uint64_t)llround(ns_program);
	st->s_rmw_ns = (uint64_t)llround(ns_rmw);
	st->s_read_ns = (uint64_t)llround(ns_read);
	st->s_flush_volatile_ns = (uint64_t)llround(ns_flush_volatile);
	st->s_flush_page_ns = (uint64_t)llround(ns_flush_page);
	st->s_flush_nv_ns = (uint64_t)llround(ns_flush_nv);
	st->s_cache_pages = cf_cache_pages;
	st->s_jitter_ppm = (uint64_t)llround(cf_jitter * 1e6);
	st->s_spin_ns = ns_spin >= 0.0 ? (uint64_t)llround(ns_spin) : 0;
	st->s_durability = (uint64_t)cf_durability;
	st->s_durable = cf_durable_path != NULL ? 1 : 0;
	/* The magic goes last: a reader that sees it sees the rest. */
	__atomic_store_n(&st->s_magic, SDEMU_MAGIC, __ATOMIC_RELEASE);

	nbdkit_debug("sdemu: logical %u native %u %s channels %u, ns: cmd %.0f "
	    "program %.0f rmw %.0f read %.0f flush %.0f+%.0f/page nv %.0f",
	    cf_logical, cf_native, cf_volatile ? "volatile" : "nonvolatile",
	    cf_channels, ns_cmd, ns_program, ns_rmw, ns_read,
	    ns_flush_volatile, ns_flush_page, ns_flush_nv);
	return (0);
}

/* The power-cut thread starts after nbdkit forks (if it does). */
static int
sdemu_after_fork(void)
{
	int err;

	if (cf_durable_path == NULL)
		return (0);
	err = pthread_create(&cut_thread, NULL, cut_watch, NULL);
	if (err != 0) {
		errno = err;
		nbdkit_error("pthread_create: %m");
		return (-1);
	}
	cut_thread_started = 1;
	return (0);
}

static void
sdemu_unload(void)
{
	uint64_t i;

	if (cut_thread_started) {
		(void) pthread_cancel(cut_thread);
		(void) pthread_join(cut_thread, NULL);
	}
	if (dur_fd != -1)
		(void) close(dur_fd);
	free(dirty_map);
	free(dirty_ring);
	free(cf_durable_path);

	if (chunks != NULL) {
		for (i = 0; i < nchunks; i++)
			free(chunks[i]);
		free(chunks);
	}
	free(chan_free);
	if (st != &stats_anon)
		(void) munmap(st, sizeof (struct sdemu_stats));
	free(cf_stats_path);
}

static void *
sdemu_open(int readonly)
{
	/* One drive, shared by every connection: the handle is unused. */
	return (&stats_anon);
}

static int64_t
sdemu_get_size(void *h)
{
	return ((int64_t)cf_size);
}

static int
sdemu_block_size(void *h, uint32_t *minimum, uint32_t *preferred,
    uint32_t *maximum)
{
	*minimum = cf_logical;
	*preferred = cf_native;
	*maximum = 0xffffffffU;
	return (0);
}

static int
sdemu_can_flush(void *h)
{
	return (1);
}

static int
sdemu_can_fua(void *h)
{
	return (NBDKIT_FUA_NATIVE);
}

static int
sdemu_can_multi_conn(void *h)
{
	return (1);
}

/*
 * Per-thread setup on a thread's first request: seed its jitter generator
 * (xorshift64*, so threads never contend for one); on Linux, shrink its
 * timer slack, whose default of 50 us would eat the spin margin; with
 * rt=1 make it SCHED_FIFO, so that a timer wake-up preempts CPU hogs
 * instead of queueing behind them.  The spin is bounded, so a real-time
 * thread never holds a CPU for more than SDEMU_SPIN_MAX_NS at a time.
 */
static void
thread_setup(void)
{
	struct sched_param sp;
	uint64_t x;

	if (rng_state != 0)
		return;
	x = cf_seed * 0x9e3779b97f4a7c15ULL +
	    __atomic_add_fetch(&thread_seq, 1, __ATOMIC_RELAXED);
	rng_state = x != 0 ? x : 1;
#ifdef __linux__
	(void) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
	if (cf_rt) {
		(void) memset(&sp, 0, sizeof (sp));
		sp.sched_priority = 1;
		(void) pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
}

/* Uniform noise in [-jitter, +jitter]. */
static double
noise(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	x *= 0x2545f4914f6cdd1dULL;
	return (cf_jitter * ((double)(x >> 11) / 4503599627370496.0 - 1.0));
}

/*
 * Queue a request of the given service time on the channel that frees
 * first; return its completion deadline.
 */
static uint64_t
schedule(uint64_t arrival, double service)
{
	uint64_t svc, start, end;
	uint32_t i, best = 0;

	thread_setup();
	svc = (uint64_t)llround(service * (1.0 + noise()));
	(void) pthread_mutex_lock(&chan_lock);
	for (i = 1; i < cf_channels; i++) {
		if (chan_free[i] < chan_free[best])
			best = i;
	}
	start = chan_free[best] > arrival ? chan_free[best] : arrival;
	end = start + svc;
	chan_free[best] = end;
	(void) pthread_mutex_unlock(&chan_lock);
	stat_add(&st->s_busy_ns, svc);
	return (end);
}

/*
 * How long before a deadline to stop sleeping.  A fixed spin= is used as
 * given.  Otherwise the drive keeps a moving mean and mean deviation of
 * how late its sleeps end (on an idle virtual machine 40-130 us, while
 * busy 20-40 us) and stops sleeping that much plus four deviations early,
 * so it rarely wakes after the deadline and spins no longer than needed.
 * Threads share the estimate without a lock: a lost update is harmless.
 */
static uint64_t
spin_margin(void)
{
	uint64_t mean, m;

	if (ns_spin >= 0.0)
		return ((uint64_t)ns_spin);
	mean = __atomic_load_n(&oversleep_mean, __ATOMIC_RELAXED);
	if (mean == 0)
		return (SDEMU_SPIN_INIT_NS);
	m = mean + 4 * __atomic_load_n(&oversleep_dev, __ATOMIC_RELAXED) +
	    SDEMU_SPIN_PAD_NS;
	if (m < SDEMU_SPIN_MIN_NS)
		m = SDEMU_SPIN_MIN_NS;
	if (m > SDEMU_SPIN_MAX_NS)
		m = SDEMU_SPIN_MAX_NS;
	return (m);
}

static void
learn_oversleep(uint64_t o)
{
	int64_t mean = (int64_t)__atomic_load_n(&oversleep_mean,
	    __ATOMIC_RELAXED);
	int64_t dev = (int64_t)__atomic_load_n(&oversleep_dev,
	    __ATOMIC_RELAXED);
	int64_t d;

	if (mean == 0) {
		mean = (int64_t)o + 1;
		dev = (int64_t)o / 2;
	} else {
		d = (int64_t)o - mean;
		dev += ((d < 0 ? -d : d) - dev) / 16;
		mean += d / 16;
		if (mean < 1)
			mean = 1;
	}
	__atomic_store_n(&oversleep_mean, (uint64_t)mean, __ATOMIC_RELAXED);
	__atomic_store_n(&oversleep_dev, (uint64_t)dev, __ATOMIC_RELAXED);
}

static void
wait_until(uint64_t deadline)
{
	struct timespec ts;
	uint64_t now, wake, margin;

	margin = spin_margin();
	now = now_ns();
	if (deadline > now + margin) {
		wake = deadline - margin;
		ts.tv_sec = (time_t)(wake / 1000000000ULL);
		ts.tv_nsec = (long)(wake % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
		    NULL) == EINTR)
			continue;
		learn_oversleep(now_ns() - wake);
	}
	while ((now = now_ns()) < deadline) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	if (now - deadline > SDEMU_LATE_NS) {
		stat_add(&st->s_late, 1);
		stat_add(&st->s_late_ns, now - deadline);
	}
}

static void
inflight_enter(void)
{
	uint64_t n = __atomic_add_fetch(&st->s_inflight, 1, __ATOMIC_RELAXED);

	stat_max(&st->s_max_inflight, n);
}

static void
inflight_leave(void)
{
	(void) __atomic_sub_fetch(&st->s_inflight, 1, __ATOMIC_RELAXED);
}

static int
check_aligned(uint32_t count, uint64_t offset)
{
	if (offset % cf_logical != 0 || count % cf_logical != 0 ||
	    count == 0 || offset + count > cf_size) {
		stat_add(&st->s_rejected, 1);
		nbdkit_set_error(EINVAL);
		return (-1);
	}
	return (0);
}

/*
 * Whether a request that arrives now must fail: it touches a fail=eio@
 * offset, or the drive already took its fail_after=N writes.
 */
static int
must_fail(uint32_t count, uint64_t offset, uint64_t seq)
{
	int i;

	for (i = 0; i < cf_nfail; i++) {
		if (cf_fail[i] >= offset && cf_fail[i] - offset < count)
			return (1);
	}
	if (cf_fail_after_set) {
		if (seq == 0)
			seq = __atomic_load_n(&write_seq, __ATOMIC_RELAXED) +
			    1;
		if (seq > cf_fail_after)
			return (1);
	}
	return (0);
}

static int
fail_request(uint64_t arrival)
{
	stat_add(&st->s_errors, 1);
	wait_until(schedule(arrival, ns_cmd));
	inflight_leave();
	nbdkit_set_error(EIO);
	return (-1);
}

/* A request to a drive whose power was cut: it never answers but EIO. */
static int
fail_unpowered(void)
{
	stat_add(&st->s_unpowered, 1);
	inflight_leave();
	nbdkit_set_error(EIO);
	return (-1);
}

static uint8_t *
chunk_get(uint64_t idx, int create)
{
	uint8_t *p, *n, *expected = NULL;

	p = __atomic_load_n(&chunks[idx], __ATOMIC_ACQUIRE);
	if (p != NULL || !create)
		return (p);
	if ((n = calloc(1, CHUNK_SIZE)) == NULL)
		return (NULL);
	if (__atomic_compare_exchange_n(&chunks[idx], &expected, n, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return (n);
	free(n);
	return (expected);
}

static int
data_copy(uint8_t *buf, uint32_t count, uint64_t offset, int store)
{
	uint64_t idx, off, n;
	uint8_t *c;

	while (count > 0) {
		idx = offset >> CHUNK_SHIFT;
		off = offset & (CHUNK_SIZE - 1);
		n = CHUNK_SIZE - off;
		if (n > count)
			n = count;
		c = chunk_get(idx, store);
		if (store) {
			if (c == NULL) {
				nbdkit_set_error(ENOMEM);
				return (-1);
			}
			(void) memcpy(c + off, buf, n);
		} else if (c == NULL) {
			(void) memset(buf, 0, n);
		} else {
			(void) memcpy(buf, c + off, n);
		}
		buf += n;
		offset += n;
		count -= (uint32_t)n;
	}
	return (0);
}

/*
 * Make native page pg durable: one pwrite of the page as the newest image
 * holds it (a page never written is zeros).  The caller holds dur_lock.
 */
static int
durable_put(uint64_t pg)
{
	uint64_t offset = pg * cf_native;
	const uint8_t *c = chunk_get(offset >> CHUNK_SHIFT, 0);
	const uint8_t *p;
	size_t done = 0;
	ssize_t n;

	p = c != NULL ? c + (offset & (CHUNK_SIZE - 1)) : zero_page;
	while (done < cf_native) {
		n = pwrite(dur_fd, p + done, cf_native - done,
		    (off_t)(offset + done));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			nbdkit_error("durable image %s: pwrite: %m",
			    cf_durable_path);
			nbdkit_set_error(EIO);
			return (-1);
		}
		done += (size_t)n;
	}
	stat_add(&st->s_durable_pages, 1);
	return (0);
}

static int
map_test(uint64_t pg)
{
	return ((dirty_map[pg >> 3] >> (pg & 7)) & 1);
}

static void
map_set(uint64_t pg, int on)
{
	if (on)
		dirty_map[pg >> 3] |= (uint8_t)(1 << (pg & 7));
	else
		dirty_map[pg >> 3] &= (uint8_t)~(1 << (pg & 7));
}

/*
 * Page pg was written through the volatile cache: it joins the cache
 * unless it is in it already (then it keeps its place); a full cache
 * first writes back the page that joined earliest.  Caller holds dur_lock.
 */
static int
cache_add(uint64_t pg)
{
	uint64_t old;

	if (cf_cache_pages == 0)
		return (durable_put(pg));
	if (map_test(pg))
		return (0);
	if (ring_count == cf_cache_pages) {
		old = dirty_ring[ring_head];
		if (durable_put(old) == -1)
			return (-1);
		map_set(old, 0);
		ring_head = (ring_head + 1) % cf_cache_pages;
		ring_count--;
		stat_add(&st->s_writebacks, 1);
	}
	dirty_ring[(ring_head + ring_count) % cf_cache_pages] = pg;
	ring_count++;
	map_set(pg, 1);
	return (0);
}

/*
 * Make pg durable now (a FUA write on an honest volatile cache), taking
 * it out of the cache if it was there; the pages that joined after it
 * move up one place.  Caller holds dur_lock.
 */
static int
cache_put_now(uint64_t pg)
{
	uint64_t i, at, next;

	if (durable_put(pg) == -1)
		return (-1);
	if (cf_cache_pages == 0 || !map_test(pg))
		return (0);
	for (i = 0; i < ring_count; i++) {
		if (dirty_ring[(ring_head + i) % cf_cache_pages] == pg)
			break;
	}
	for (; i + 1 < ring_count; i++) {
		at = (ring_head + i) % cf_cache_pages;
		next = (ring_head + i + 1) % cf_cache_pages;
		dirty_ring[at] = dirty_ring[next];
	}
	ring_count--;
	map_set(pg, 0);
	return (0);
}

/* An honest flush: every dirty page durable, oldest first. */
static int
cache_drain(void)
{
	uint64_t pg;

	while (ring_count > 0) {
		pg = dirty_ring[ring_head];
		if (durable_put(pg) == -1)
			return (-1);
		map_set(pg, 0);
		ring_head = (ring_head + 1) % cf_cache_pages;
		ring_count--;
	}
	return (0);
}

static int
powered(void)
{
	return (__atomic_load_n(&power_off, __ATOMIC_ACQUIRE) == 0);
}

/*
 * The power goes: the dirty pages are dropped (the newest image still
 * holds them, but no request is ever served from it again), and from
 * now on nothing becomes durable and every request fails.
 */
static void
power_cut(void)
{
	uint64_t i;

	(void) pthread_mutex_lock(&dur_lock);
	if (powered()) {
		for (i = 0; i < ring_count; i++)
			map_set(dirty_ring[(ring_head + i) % cf_cache_pages],
			    0);
		st->s_lost_pages = ring_count;
		ring_count = 0;
		st->s_dirty = 0;
		__atomic_store_n(&power_off, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&st->s_power, 1, __ATOMIC_RELEASE);
		nbdkit_debug("sdemu: power cut, %" PRIu64 " dirty pages lost",
		    st->s_lost_pages);
	}
	(void) pthread_mutex_unlock(&dur_lock);
}

/* The only thread that takes SIGUSR1 (durability_config() blocks it). */
static void *
cut_watch(void *arg)
{
	sigset_t set;
	int sig;

	(void) sigemptyset(&set);
	(void) sigaddset(&set, SIGUSR1);
	for (;;) {
		if (sigwait(&set, &sig) == 0 && sig == SIGUSR1)
			power_cut();
	}
	/* NOTREACHED */
	return (arg);
}

/*
 * A write with durable_image=: store it in the newest image and do what
 * this drive does to make it durable, all under dur_lock, so that a
 * write-back never copies a page while another write is half into it,
 * and a cut falls between two writes, never inside one.
 */
static int
durable_write(const void *buf, uint32_t count, uint64_t offset,
    uint32_t flags)
{
	uint64_t pg, first = offset / cf_native;
	uint64_t last = (offset + count - 1) / cf_native;
	int rc = 0;

	(void) pthread_mutex_lock(&dur_lock);
	if (!powered()) {
		(void) pthread_mutex_unlock(&dur_lock);
		return (1);
	}
	if (data_copy((uint8_t *)buf, count, offset, 1) == -1) {
		(void) pthread_mutex_unlock(&dur_lock);
		return (-1);
	}
	for (pg = first; pg <= last && rc == 0; pg++) {
		if (!dur_volatile)
			rc = durable_put(pg);
		else if (cf_durability == DUR_HONEST &&
		    (flags & NBDKIT_FLAG_FUA))
			rc = cache_put_now(pg);
		else
			rc = cache_add(pg);
	}
	st->s_dirty = ring_count;
	(void) pthread_mutex_unlock(&dur_lock);
	return (rc);
}

/* A flush with durable_image=: only an honest one makes data durable. */
static int
durable_flush(void)
{
	int rc = 0;

	(void) pthread_mutex_lock(&dur_lock);
	if (!powered()) {
		(void) pthread_mutex_unlock(&dur_lock);
		return (1);
	}
	if (cf_durability == DUR_HONEST) {
		if (dur_volatile)
			rc = cache_drain();
		if (rc == 0)
			stat_add(&st->s_durable_flushes, 1);
	}
	st->s_dirty = ring_count;
	(void) pthread_mutex_unlock(&dur_lock);
	return (rc);
}

/*
 * Power on: open (or create, sparse) the image and load what it holds
 * into the newest image, reading only its data extents, so that a large
 * image written in a few places loads in a few reads.
 */
static int
durable_open(void)
{
	struct stat sb;
	uint8_t *buf;
	off_t off, end;
	ssize_t n;
	size_t want;

	dur_fd = open(cf_durable_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (dur_fd == -1 || fstat(dur_fd, &sb) == -1) {
		nbdkit_error("durable image %s: %m", cf_durable_path);
		return (-1);
	}
	if (sb.st_size == 0 && ftruncate(dur_fd, (off_t)cf_size) == -1) {
		nbdkit_error("durable image %s: ftruncate: %m",
		    cf_durable_path);
		return (-1);
	}
	if (sb.st_size != 0 && (uint64_t)sb.st_size != cf_size) {
		nbdkit_error("durable image %s: %jd bytes, not size=%" PRIu64,
		    cf_durable_path, (intmax_t)sb.st_size, cf_size);
		return (-1);
	}
	if ((buf = malloc(CHUNK_SIZE)) == NULL) {
		nbdkit_error("malloc: %m");
		return (-1);
	}
	off = 0;
	while ((uint64_t)off < cf_size) {
		if ((off = lseek(dur_fd, off, SEEK_DATA)) == -1) {
			if (errno == ENXIO)	/* no data after off */
				break;
			nbdkit_error("durable image %s: SEEK_DATA: %m",
			    cf_durable_path);
			free(buf);
			return (-1);
		}
		if ((end = lseek(dur_fd, off, SEEK_HOLE)) == -1)
			end = (off_t)cf_size;
		while (off < end) {
			want = (size_t)(end - off) < CHUNK_SIZE ?
			    (size_t)(end - off) : CHUNK_SIZE;
			if ((n = pread(dur_fd, buf, want, off)) <= 0) {
				nbdkit_error("durable image %s: pread: %m",
				    cf_durable_path);
				free(buf);
				return (-1);
			}
			if (data_copy(buf, (uint32_t)n, (uint64_t)off,
			    1) == -1) {
				free(buf);
				return (-1);
			}
			off += n;
		}
	}
	free(buf);
	return (0);
}

static int
size_class(uint32_t count)
{
	switch (count) {
	case 512:
		return (0);
	case 1024:
		return (1);
	case 2048:
		return (2);
	case 4096:
		return (3);
	case 8192:
		return (4);
	case 16384:
		return (5);
	default:
		return (6);
	}
}

static int
sdemu_pwrite(void *h, const void *buf, uint32_t count, uint64_t offset,
    uint32_t flags)
{
	uint64_t arrival = now_ns();
	uint64_t first, last, pages, partial, head, tail, seq;
	double svc;
	int rc;

	if (check_aligned(count, offset) == -1)
		return (-1);
	inflight_enter();
	seq = __atomic_add_fetch(&write_seq, 1, __ATOMIC_RELAXED);

	first = offset / cf_native;
	last = (offset + count - 1) / cf_native;
	pages = last - first + 1;
	head = offset % cf_native;
	tail = (offset + count) % cf_native;
	if (pages == 1)
		partial = (head != 0 || tail != 0) ? 1 : 0;
	else
		partial = (head != 0 ? 1 : 0) + (tail != 0 ? 1 : 0);

	stat_add(&st->s_writes, 1);
	stat_add(&st->s_bytes_written, count);
	stat_add(&st->s_wsize[size_class(count)], 1);
	if (head != 0)
		stat_add(&st->s_misaligned, 1);
	stat_add(&st->s_rmw, partial);
	if (flags & NBDKIT_FLAG_FUA)
		stat_add(&st->s_fua_writes, 1);

	if (must_fail(count, offset, seq))
		return (fail_request(arrival));

	svc = ns_cmd + ns_xfer_byte * count + ns_program * pages +
	    ns_rmw * partial;
	if (flags & NBDKIT_FLAG_FUA) {
		svc += cf_volatile ? ns_flush_volatile + ns_flush_page *
		    (pages < cf_cache_pages ? pages : cf_cache_pages) :
		    ns_flush_nv;
	} else if (cf_volatile) {
		stat_add(&dirty_pages, pages);
	}
	if (cf_durable_path == NULL)
		rc = data_copy((uint8_t *)buf, count, offset, 1);
	else if ((rc = durable_write(buf, count, offset, flags)) == 1)
		return (fail_unpowered());
	if (rc == -1) {
		inflight_leave();
		return (-1);
	}
	wait_until(schedule(arrival, svc));
	/* Cut before its service time ended: the write never completed. */
	if (cf_durable_path != NULL && !powered())
		return (fail_unpowered());
	inflight_leave();
	return (0);
}

static int
sdemu_pread(void *h, void *buf, uint32_t count, uint64_t offset,
    uint32_t flags)
{
	uint64_t arrival = now_ns();

	if (check_aligned(count, offset) == -1)
		return (-1);
	inflight_enter();
	stat_add(&st->s_reads, 1);
	stat_add(&st->s_bytes_read, count);
	if (must_fail(count, offset, 0))
		return (fail_request(arrival));
	if (cf_durable_path != NULL && !powered())
		return (fail_unpowered());
	(void) data_copy(buf, count, offset, 0);
	wait_until(schedule(arrival, ns_read + ns_xfer_byte * count));
	if (cf_durable_path != NULL && !powered())
		return (fail_unpowered());
	inflight_leave();
	return (0);
}

static int
sdemu_flush(void *h, uint32_t flags)
{
	uint64_t arrival = now_ns();
	uint64_t dirty;
	double svc;
	int rc;

	inflight_enter();
	stat_add(&st->s_flushes, 1);
	if (must_fail(0, UINT64_MAX, 0))
		return (fail_request(arrival));
	if (cf_durable_path != NULL) {
		if ((rc = durable_flush()) == 1)
			return (fail_unpowered());
		if (rc == -1) {
			inflight_leave();
			return (-1);
		}
	}
	if (cf_volatile) {
		dirty = __atomic_exchange_n(&dirty_pages, 0, __ATOMIC_RELAXED);
		if (dirty > cf_cache_pages)
			dirty = cf_cache_pages;
		svc = ns_flush_volatile + ns_flush_page * dirty;
	} else {
		svc = ns_flush_nv;
	}
	wait_until(schedule(arrival, svc));
	/* Cut before it completed: not acknowledged, whatever it did. */
	if (cf_durable_path != NULL && !powered())
		return (fail_unpowered());
	inflight_leave();
	return (0);
}

static struct nbdkit_plugin plugin = {
	.name = "sdemu",
	.version = "1",
	.longname = "sdtune emulated SSD",
	.description = "memory-backed drive with a native-page, cache and "
	    "queue timing model",
	.config = sdemu_config,
	.config_complete = sdemu_config_complete,
	.config_help =
	    "size=BYTES logical=512|4096 native=512..16384 "
	    "cache=volatile|nonvolatile channels=N\n"
	    "cmd= xfer_mbps= program= rmw= read= flush_volatile= "
	    "flush_page= flush_nv= (us) cache_pages=N scale= jitter= spin=\n"
	    "rt=1|0 seed=N fail=eio@OFFSET fail_after=N stats=PATH\n"
	    "durable_image=PATH durability=honest|lie_flush|lie_nv",
	.get_ready = sdemu_get_ready,
	.after_fork = sdemu_after_fork,
	.unload = sdemu_unload,
	.open = sdemu_open,
	.get_size = sdemu_get_size,
	.block_size = sdemu_block_size,
	.can_flush = sdemu_can_flush,
	.can_fua = sdemu_can_fua,
	.can_multi_conn = sdemu_can_multi_conn,
	.pread = sdemu_pread,
	.pwrite = sdemu_pwrite,
	.flush = sdemu_flush,
	.errno_is_preserved = 0
};

NBDKIT_REGISTER_PLUGIN(plugin)
