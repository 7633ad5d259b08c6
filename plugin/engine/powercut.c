/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * powercut.c: `sdio powercut`, the engine's half of the power-cut check
 * (issue 30): the writer whose every completed write and flush a witness
 * on another machine logs as it happens, and, once the power is back,
 * the read-back of what the drive kept.  certify/powercut.py reads both
 * outputs and gives the verdict.
 *
 *	sdio powercut write --run HEX16 --slots N --block BYTES
 *	    [--offset BYTES] [--first-seq S] [--seconds T] [--seed X]
 *	    [--notice-ms M] [--flush-every-ms E] TARGET
 *	sdio powercut read --slots N --block BYTES [--offset BYTES] TARGET
 *
 * The region is slots blocks of block bytes (a power of two, 512 to
 * 1 MiB) from offset (a multiple of 512); slot k is the bytes
 * [offset + k * block, offset + (k + 1) * block).  It must lie within
 * the target (a regular file's size, a device's as backend_sync.c finds
 * it): the writer never extends a file.  --run is the 16 lowercase hex
 * digits the controller chose; --first-seq (default 1) continues the
 * numbering of a resumed run; --seconds (default 600) bounds the writer
 * on the monotonic clock; --seed (decimal, default derived from the run
 * and the first seq) makes the pattern reproducible.  --block and
 * --offset are BYTES as elsewhere in the engine (k, m, g, t suffixes);
 * the other numbers are decimal.
 *
 * write.  First the line "run RUNID SLOTS BLOCK", then bursts until the
 * time is up: a sequential burst (1 to 32 consecutive slots from a random
 * one, wrapping at the region's end, at most each slot once) or a random
 * one (1 to 32 slots drawn at random), each block written with pwrite(),
 * one at a time (QD1), "w SEQ SLOT" printed as each completes (SEQ from
 * --first-seq, one more per write).  After the first burst that ends
 * when at least a flush interval has passed since the last flush (the
 * interval drawn from half to one and a half times --flush-every-ms,
 * default 2000), a flush: first its notice "F SEQ", then --notice-ms
 * milliseconds (default 500) of nothing, then the flush, and when it
 * completes "f SEQ"; SEQ is the last write completed before it.  An
 * interval in time, not in writes, so that on any drive most of the run
 * is writing, with unflushed writes in the cache, whenever the power is
 * cut: a cut in a notice's wait tests only the flushes.  Every choice
 * comes from one splitmix64 stream, in a fixed order, so a seed gives the
 * same slots (and with --flush-every-ms 0 the same flushes) whatever the
 * drive's speed.
 *
 * Why the notice, and the wait after it.  A flush makes durable every
 * write before it, so a completed write tests the claim that the cache
 * survives a power cut (cache-nonvolatile) only if no flush came after
 * it.  The witness must know of every flush the drive may have carried
 * out before the cut, the one in flight included, whose "f" never
 * arrives.  The notice goes out first and the flush waits long enough
 * for it to reach the witness (far longer than a line takes over any
 * link), so that no flush is issued that the witness has not heard of.
 *
 * Why one write(2) per line, at once.  The witness logs each line as it
 * arrives, on another machine, because this one is about to lose its
 * power: a line still in a stdio buffer at the cut is an acknowledgement
 * the drive gave and nobody saw, which would let a lying drive pass.  A
 * line (under 40 bytes) is one write to the pipe (ssh), atomic, so a
 * signal never leaves half of one.  SIGPIPE is ignored, so that a
 * witness gone away is EPIPE, and the writer stops with exit 2 instead
 * of writing on unwitnessed.
 *
 * The flush is the kernel path ZFS uses, not the one the measuring
 * backend takes (backend_sync.c sends SYNCHRONIZE CACHE itself, to see
 * what the drive does): on a character device DKIOCFLUSHWRITECACHE
 * (prove.h), which sd may answer without the drive (cache-nonvolatile),
 * as it would for ZFS, and that is what the check puts to the test; on
 * anything else fdatasync(), which on the test suite's emulated drives
 * (files on FUSE) reaches the drive's flush.  Writes and reads bypass
 * the page cache: O_DIRECT on Linux, directio() on illumos (a raw device
 * is unbuffered anyway), as backend_sync.c opens with --direct; a file
 * system that refuses O_DIRECT (EINVAL at open) is used buffered, where
 * fdatasync() still makes the writes durable, but a write is then
 * acknowledged before it reaches the drive.  Buffers are 4 KiB aligned.
 *
 * A block (B bytes; integers little-endian, written byte by byte, so
 * that the layout is the same on every machine):
 *	0..6	magic "SDTPCUT"
 *	7	version, 1
 *	8..15	run id (the value of the 16 hex digits)
 *	16..23	seq
 *	24..31	slot
 *	32..B-9	filler: splitmix64 words from a seed mixed from run, seq
 *		and slot, so that two writes' blocks differ everywhere (a
 *		write torn at any sector boundary shows)
 *	B-8..B-1 FNV-1a 64 of bytes 0..B-9
 *
 * read.  The region in chunks of up to 1 MiB, one line per slot in slot
 * order: "SLOT RUNID SEQ" for a whole block (magic, version, checksum
 * right, its slot field SLOT; RUNID its own, which may be another run's:
 * the controller decides), "SLOT zero" for B zero bytes, "SLOT torn" for
 * anything else (a write cut half way, another slot's block, a seq no
 * writer gives).  A report, so stdio-buffered; a write error on it is
 * exit 2.
 *
 * Exit: 0 done (write: the time is up); 1 usage; 2 the target cannot be
 * opened, its size is unknown or the region does not fit, out of memory,
 * or stdout failed; 3 an I/O error (write, flush or read), after a
 * message on stderr naming the op, the byte offset and the error: the
 * writer prints nothing more, the read-back no slot from there on.
 */

#include "sdio.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "prove.h"

#define	PC_MAGIC		"SDTPCUT"
#define	PC_VERSION		1
#define	PC_HDR			32	/* magic, version, run, seq, slot */
#define	PC_SUM			8	/* the checksum at the block's end */
#define	PC_BURST_MAX		32
#define	PC_CHUNK		(1U << 20)
#define	PC_ALIGN		4096
#define	PC_SLOTS_MAX		16777216ULL
#define	PC_BLOCK_MIN		512ULL
#define	PC_BLOCK_MAX		1048576ULL
#define	PC_SECONDS_DEFAULT	600ULL
#define	PC_SECONDS_MAX		86400ULL
#define	PC_NOTICE_MS_DEFAULT	500ULL
#define	PC_FLUSH_EVERY_MS_DEFAULT	2000ULL
#define	PC_NOTICE_MS_MAX	60000ULL
/*
 * Seqs have at most 18 digits (certify/powercut.py); a writer started
 * below this cannot reach them in 86400 seconds.
 */
#define	PC_FIRST_SEQ_MAX	100000000000000000ULL
#define	PC_SEQ_LIMIT		1000000000000000000ULL
#define	PC_LINE			64

#define	FNV64_BASIS		0xcbf29ce484222325ULL
#define	FNV64_PRIME		0x100000001b3ULL

typedef struct pc_opts {
	uint64_t	pc_run;
	uint64_t	pc_slots;
	uint64_t	pc_block;
	uint64_t	pc_offset;
	uint64_t	pc_first_seq;
	uint64_t	pc_seconds;
	uint64_t	pc_seed;
	uint64_t	pc_notice_ms;
	uint64_t	pc_flush_every_ms;
	uint64_t	pc_given;	/* bit (field offset / 8): given */
	const char	*pc_target;
} pc_opts_t;

#define	F(field)	offsetof(pc_opts_t, field)

/*
 * The options of each mode, parsed by pc_option() (OPT_SPEC) into the
 * uint64_t field at od_off, bounded by od_min and od_max.
 */
static const opt_def_t pc_write_defs[] = {
	{ "run", OPT_SPEC, F(pc_run), 0, UINT64_MAX },
	{ "slots", OPT_SPEC, F(pc_slots), 1, PC_SLOTS_MAX },
	{ "block", OPT_SPEC, F(pc_block), PC_BLOCK_MIN, PC_BLOCK_MAX },
	{ "offset", OPT_SPEC, F(pc_offset), 0, UINT64_MAX >> 2 },
	{ "first-seq", OPT_SPEC, F(pc_first_seq), 1, PC_FIRST_SEQ_MAX },
	{ "seconds", OPT_SPEC, F(pc_seconds), 1, PC_SECONDS_MAX },
	{ "seed", OPT_SPEC, F(pc_seed), 0, UINT64_MAX },
	{ "notice-ms", OPT_SPEC, F(pc_notice_ms), 0, PC_NOTICE_MS_MAX },
	{ "flush-every-ms", OPT_SPEC, F(pc_flush_every_ms), 0,
	    PC_NOTICE_MS_MAX },
	{ NULL, OPT_FLAG, 0, 0, 0 }
};

static const opt_def_t pc_read_defs[] = {
	{ "slots", OPT_SPEC, F(pc_slots), 1, PC_SLOTS_MAX },
	{ "block", OPT_SPEC, F(pc_block), PC_BLOCK_MIN, PC_BLOCK_MAX },
	{ "offset", OPT_SPEC, F(pc_offset), 0, UINT64_MAX >> 2 },
	{ NULL, OPT_FLAG, 0, 0, 0 }
};

#define	GIVEN(o, field)	(((o)->pc_given >> (F(field) / 8)) & 1)

/* Decimal digits only, no sign, no suffix, no overflow. */
static int
pc_parse_dec(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return (-1);
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' ||
		    v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return (-1);
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return (0);
}

/* Exactly 16 lowercase hex digits. */
static int
pc_parse_run(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 16; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			v = v << 4 | (uint64_t)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			v = v << 4 | (uint64_t)(s[i] - 'a' + 10);
		else
			return (-1);
	}
	if (s[16] != '\0')
		return (-1);
	*out = v;
	return (0);
}

/* One option's value (opt_spec_fn_t): 0, or SDIO_EXIT_USAGE. */
static int
pc_option(void *arg, const opt_def_t *d, const char *val)
{
	pc_opts_t *o = arg;
	uint64_t bit = 1ULL << (d->od_off / 8), v;
	const char *why = NULL;
	int bad;

	if (o->pc_given & bit)
		return (sdio_usage_error("option '--%s' given twice",
		    d->od_name));
	o->pc_given |= bit;
	if (strcmp(d->od_name, "run") == 0)
		bad = pc_parse_run(val, &v);
	else if (strcmp(d->od_name, "block") == 0 ||
	    strcmp(d->od_name, "offset") == 0)
		bad = sdio_parse_u64(val, &v);
	else
		bad = pc_parse_dec(val, &v);
	if (bad == 0 && (v < d->od_min || v > d->od_max))
		bad = -1;
	if (strcmp(d->od_name, "run") == 0) {
		why = "16 lowercase hex digits";
	} else if (strcmp(d->od_name, "block") == 0) {
		why = "a power of two from 512 to 1048576";
		if (bad == 0 && (v & (v - 1)) != 0)
			bad = -1;
	} else if (strcmp(d->od_name, "offset") == 0) {
		why = "a multiple of 512";
		if (bad == 0 && v % 512 != 0)
			bad = -1;
	}
	if (bad != 0 && why != NULL)
		return (sdio_usage_error("bad value '%s' for --%s: %s", val,
		    d->od_name, why));
	if (bad != 0)
		return (sdio_usage_error("bad value '%s' for --%s: %llu to "
		    "%llu, decimal", val, d->od_name,
		    (unsigned long long)d->od_min,
		    (unsigned long long)d->od_max));
	*(uint64_t *)(void *)((char *)o + d->od_off) = v;
	return (0);
}

/* The splitmix64 finalizer of x: a seed from a value. */
static uint64_t
pc_mix(uint64_t x)
{
	return (splitmix64(&x));
}

static void
pc_put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
pc_get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (v);
}

static uint64_t
pc_fnv(const uint8_t *p, size_t len)
{
	uint64_t h = FNV64_BASIS;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV64_PRIME;
	}
	return (h);
}

/* Write seq's block for slot into buf (the layout above). */
static void
pc_fill(uint8_t *buf, size_t block, uint64_t run, uint64_t seq,
    uint64_t slot)
{
	uint64_t s = pc_mix(pc_mix(pc_mix(run) ^ seq) ^ slot);
	size_t i;

	(void) memcpy(buf, PC_MAGIC, 7);
	buf[7] = PC_VERSION;
	pc_put64(buf + 8, run);
	pc_put64(buf + 16, seq);
	pc_put64(buf + 24, slot);
	for (i = PC_HDR; i < block - PC_SUM; i += 8)
		pc_put64(buf + i, splitmix64(&s));
	pc_put64(buf + block - PC_SUM, pc_fnv(buf, block - PC_SUM));
}

/*
 * One whole line to fd 1 now, however many write() calls it takes.
 * 0, or an errno value.
 */
static int
pc_say(const char *line, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(STDOUT_FILENO, line, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return (errno);
		if (n == 0)
			return (EIO);
		line += n;
		len -= (size_t)n;
	}
	return (0);
}

static int
pc_say_failed(int err)
{
	(void) fprintf(stderr, "sdio: cannot write to stdout: %s\n",
	    strerror(err));
	return (SDIO_EXIT_SETUP);
}

/*
 * Open the target (read-write for write) with direct I/O when the file
 * system takes it, check that the region fits.  0, or an exit status
 * after a message.
 */
static int
pc_open(const pc_opts_t *o, const sdio_ops_t *ops, int wr, sdio_dev_t *dev,
    int *chr)
{
	uint64_t end;
	struct stat st;
	int rc;

	(void) memset(dev, 0, sizeof (*dev));
	dev->d_fd = -1;
	rc = ops->o_open(dev, o->pc_target, (wr ? SDIO_OPEN_WRITE : 0) |
	    SDIO_OPEN_DIRECT);
	if (rc == EINVAL &&
	    (rc = sdio_open_target(ops, dev, o->pc_target, wr, 0)) != 0)
		return (rc);
	if (rc != 0) {
		(void) fprintf(stderr, "sdio: cannot open '%s': %s\n",
		    o->pc_target, strerror(rc));
		return (SDIO_EXIT_SETUP);
	}
	if (fstat(dev->d_fd, &st) != 0) {
		(void) fprintf(stderr, "sdio: cannot stat '%s': %s\n",
		    o->pc_target, strerror(errno));
		ops->o_close(dev);
		return (SDIO_EXIT_SETUP);
	}
	*chr = S_ISCHR(st.st_mode);
	end = o->pc_offset + o->pc_slots * o->pc_block;
	if (dev->d_size == 0 && (dev->d_flags & SDIO_DEV_RAW)) {
		(void) fprintf(stderr, "sdio: cannot set up '%s': its size "
		    "is unknown\n", o->pc_target);
		ops->o_close(dev);
		return (SDIO_EXIT_SETUP);
	}
	if (end > dev->d_size) {
		(void) fprintf(stderr, "sdio: cannot set up '%s': --offset "
		    "%llu + %llu slots of %llu bytes ends at %llu, past its "
		    "size %llu\n", o->pc_target,
		    (unsigned long long)o->pc_offset,
		    (unsigned long long)o->pc_slots,
		    (unsigned long long)o->pc_block, (unsigned long long)end,
		    (unsigned long long)dev->d_size);
		ops->o_close(dev);
		return (SDIO_EXIT_SETUP);
	}
	return (0);
}

static void *
pc_buffer(size_t len)
{
	void *p;

	if (posix_memalign(&p, PC_ALIGN, len) != 0) {
		(void) fprintf(stderr, "sdio: out of memory\n");
		return (NULL);
	}
	return (p);
}

static int
pc_flush(int fd, int chr)
{
	if (chr) {
		if (ioctl(fd, PROVE_FLUSH, NULL) != 0)
			return (errno);
		return (0);
	}
	if (fdatasync(fd) != 0)
		return (errno);
	return (0);
}

/* Sleep ms milliseconds, whatever signals interrupt it. */
static void
pc_sleep_ms(uint64_t ms)
{
	struct timespec ts, rem;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
		ts = rem;
}

/* The writer's loop; its exit status. */
static int
pc_write(const pc_opts_t *o, int fd, int chr, uint8_t *buf)
{
	size_t block = (size_t)o->pc_block;
	uint64_t rng, deadline, seq, slot = 0, start = 0, off = 0, n, i;
	uint64_t next_flush, every = o->pc_flush_every_ms * 1000000ULL;
	char line[PC_LINE];
	ssize_t done;
	int len, seqburst, err;

	rng = pc_mix(o->pc_seed);
	seq = o->pc_first_seq;
	len = snprintf(line, sizeof (line), "run %016llx %llu %llu\n",
	    (unsigned long long)o->pc_run, (unsigned long long)o->pc_slots,
	    (unsigned long long)o->pc_block);
	if ((err = pc_say(line, (size_t)len)) != 0)
		return (pc_say_failed(err));
	deadline = sdio_now() + o->pc_seconds * 1000000000ULL;
	next_flush = sdio_now() + every / 2 + scale64(splitmix64(&rng),
	    every + 1);
	while (sdio_now() < deadline) {
		seqburst = scale64(splitmix64(&rng), 2) == 0;
		n = 1 + scale64(splitmix64(&rng), PC_BURST_MAX);
		if (seqburst) {
			start = scale64(splitmix64(&rng), o->pc_slots);
			if (n > o->pc_slots)
				n = o->pc_slots;
		}
		for (i = 0; i < n; i++, seq++) {
			slot = seqburst ? (start + i) % o->pc_slots :
			    scale64(splitmix64(&rng), o->pc_slots);
			off = o->pc_offset + slot * o->pc_block;
			pc_fill(buf, block, o->pc_run, seq, slot);
			do {
				done = pwrite(fd, buf, block, (off_t)off);
			} while (done < 0 && errno == EINTR);
			if (done != (ssize_t)block) {
				(void) fprintf(stderr, "sdio: write at "
				    "offset %llu of '%s' failed: %s\n",
				    (unsigned long long)off, o->pc_target,
				    strerror(done < 0 ? errno : EIO));
				return (SDIO_EXIT_IO);
			}
			len = snprintf(line, sizeof (line), "w %llu %llu\n",
			    (unsigned long long)seq, (unsigned long long)slot);
			if ((err = pc_say(line, (size_t)len)) != 0)
				return (pc_say_failed(err));
		}
		if (sdio_now() < next_flush)
			continue;
		len = snprintf(line, sizeof (line), "F %llu\n",
		    (unsigned long long)(seq - 1));
		if ((err = pc_say(line, (size_t)len)) != 0)
			return (pc_say_failed(err));
		pc_sleep_ms(o->pc_notice_ms);
		if ((err = pc_flush(fd, chr)) != 0) {
			(void) fprintf(stderr, "sdio: flush after the write at "
			    "offset %llu of '%s' failed: %s\n",
			    (unsigned long long)off, o->pc_target,
			    strerror(err));
			return (SDIO_EXIT_IO);
		}
		len = snprintf(line, sizeof (line), "f %llu\n",
		    (unsigned long long)(seq - 1));
		if ((err = pc_say(line, (size_t)len)) != 0)
			return (pc_say_failed(err));
		next_flush = sdio_now() + every / 2 +
		    scale64(splitmix64(&rng), every + 1);
	}
	return (SDIO_EXIT_OK);
}

/* One slot's report of the block at p (the layout above). */
static void
pc_report(const uint8_t *p, size_t block, uint64_t slot)
{
	uint64_t seq = pc_get64(p + 16);
	size_t i;

	if (memcmp(p, PC_MAGIC, 7) == 0 && p[7] == PC_VERSION &&
	    pc_get64(p + 24) == slot && seq != 0 && seq < PC_SEQ_LIMIT &&
	    pc_get64(p + block - PC_SUM) == pc_fnv(p, block - PC_SUM)) {
		(void) printf("%llu %016llx %llu\n", (unsigned long long)slot,
		    (unsigned long long)pc_get64(p + 8),
		    (unsigned long long)seq);
		return;
	}
	for (i = 0; i < block && p[i] == 0; i++)
		continue;
	(void) printf("%llu %s\n", (unsigned long long)slot,
	    i == block ? "zero" : "torn");
}

/* The read-back; its exit status. */
static int
pc_read(const pc_opts_t *o, int fd, uint8_t *buf, size_t chunk)
{
	size_t block = (size_t)o->pc_block, want, got, k;
	uint64_t slot, per = chunk / block, n, off;
	ssize_t r;

	for (slot = 0; slot < o->pc_slots; slot += n) {
		n = o->pc_slots - slot < per ? o->pc_slots - slot : per;
		want = (size_t)(n * block);
		off = o->pc_offset + slot * o->pc_block;
		for (got = 0; got < want; got += (size_t)r) {
			r = pread(fd, buf + got, want - got,
			    (off_t)(off + got));
			if (r < 0 && errno == EINTR) {
				r = 0;
				continue;
			}
			if (r <= 0) {
				(void) fprintf(stderr, "sdio: read at offset "
				    "%llu of '%s' failed: %s\n",
				    (unsigned long long)(off + got),
				    o->pc_target,
				    strerror(r < 0 ? errno : EIO));
				return (SDIO_EXIT_IO);
			}
		}
		for (k = 0; k < n; k++)
			pc_report(buf + k * block, block, slot + k);
		/* Nobody reads on: stop rather than read the rest. */
		if (ferror(stdout))
			break;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		(void) fprintf(stderr, "sdio: cannot write output: %s\n",
		    strerror(errno));
		return (SDIO_EXIT_SETUP);
	}
	return (SDIO_EXIT_OK);
}

/*
 * sdio powercut write|read [options] TARGET: argv[0] is the word.  Its
 * exit status.
 */
int
sdio_powercut_main(int argc, char **argv)
{
	const sdio_ops_t *ops;
	pc_opts_t o;
	sdio_dev_t dev;
	uint64_t seen;
	uint8_t *buf;
	size_t len;
	int wr, chr, rc;

	if (argc < 1 || (strcmp(argv[0], "write") != 0 &&
	    strcmp(argv[0], "read") != 0))
		return (sdio_usage_error("powercut needs 'write' or 'read'"));
	wr = strcmp(argv[0], "write") == 0;
	(void) memset(&o, 0, sizeof (o));
	o.pc_first_seq = 1;
	o.pc_seconds = PC_SECONDS_DEFAULT;
	o.pc_notice_ms = PC_NOTICE_MS_DEFAULT;
	o.pc_flush_every_ms = PC_FLUSH_EVERY_MS_DEFAULT;
	if ((rc = sdio_parse_argv(argc, argv, wr ? pc_write_defs :
	    pc_read_defs, &o, &o.pc_target, &seen, pc_option)) != 0)
		return (rc);
	if (wr && !GIVEN(&o, pc_run))
		return (sdio_usage_error("powercut write needs --run"));
	if (!GIVEN(&o, pc_slots))
		return (sdio_usage_error("powercut %s needs --slots",
		    argv[0]));
	if (!GIVEN(&o, pc_block))
		return (sdio_usage_error("powercut %s needs --block",
		    argv[0]));
	if (o.pc_target == NULL)
		return (sdio_usage_error("no target given"));
	if (!GIVEN(&o, pc_seed))
		o.pc_seed = pc_mix(o.pc_run ^ pc_mix(o.pc_first_seq));

	/* A witness gone away is EPIPE, not death by SIGPIPE. */
	(void) signal(SIGPIPE, SIG_IGN);
	/* Through the lookup, which refuses a table of another version. */
	if ((ops = sdio_backend_lookup("sync")) == NULL)
		return (SDIO_EXIT_SETUP);
	if ((rc = pc_open(&o, ops, wr, &dev, &chr)) != 0)
		return (rc);
	len = wr ? (size_t)o.pc_block : PC_CHUNK;
	if ((buf = pc_buffer(len)) == NULL) {
		ops->o_close(&dev);
		return (SDIO_EXIT_SETUP);
	}
	rc = wr ? pc_write(&o, dev.d_fd, chr, buf) :
	    pc_read(&o, dev.d_fd, buf, len);
	free(buf);
	ops->o_close(&dev);
	return (rc);
}
