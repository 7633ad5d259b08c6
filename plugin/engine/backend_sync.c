/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * backend_sync.c: synchronous pread/pwrite on one file descriptor shared
 * by all worker threads (positional I/O needs no lock).
 *
 * --direct: O_DIRECT on Linux (the kernel then enforces its alignment
 * rules, which the misaligned-offset probes rely on: EINVAL is reported
 * as an I/O error with its offset); directio(fd, DIRECTIO_ON) on illumos,
 * where a raw (character) device is unbuffered anyway and a file system
 * without direct I/O (ZFS) refuses the advice, which is ignored.
 *
 * Flush: Linux fdatasync(), which on a block device also sends the
 * drive a cache flush.  illumos: on a device, SYNCHRONIZE CACHE(10)
 * through USCSICMD, because DKIOCFLUSHWRITECACHE returns without sending
 * anything when sd suppresses flushes (cache-nonvolatile) or believes
 * the write cache is off (illumos-facts 6.4), and the certification
 * must see what the drive does.  A disk that takes no SCSI commands
 * (blkdev: NVMe, virtio) refuses USCSICMD with ENOTTY or EINVAL; there
 * DKIOCFLUSHWRITECACHE is the flush, passed by blkdev to the device
 * (NVMe FLUSH) since no sd decides to skip it.  On a regular file,
 * fdatasync().
 */

#include "sdio.h"

#include <sys/stat.h>
#include <sys/ioctl.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#ifdef __sun
#include <sys/dkio.h>
#endif

#include "scsi.h"

/* Size in bytes of a block or character device, 0 when unknown. */
static uint64_t
device_size(int fd)
{
	off_t end;

#ifdef __sun
	struct dk_minfo_ext mie;
	struct dk_minfo mi;

	if (ioctl(fd, DKIOCGMEDIAINFOEXT, &mie) == 0)
		return ((uint64_t)mie.dki_lbsize * (uint64_t)mie.dki_capacity);
	if (ioctl(fd, DKIOCGMEDIAINFO, &mi) == 0)
		return ((uint64_t)mi.dki_lbsize * (uint64_t)mi.dki_capacity);
#endif
	end = lseek(fd, 0, SEEK_END);
	return (end > 0 ? (uint64_t)end : 0);
}

static int
sync_open(sdio_dev_t *d, const char *path, int flags)
{
	struct stat st;
	int oflags, fd;

	oflags = (flags & SDIO_OPEN_WRITE) ? O_RDWR : O_RDONLY;
#ifdef __linux__
	if (flags & SDIO_OPEN_DIRECT)
		oflags |= O_DIRECT;
#endif
	if ((fd = open(path, oflags)) < 0)
		return (errno);
	if (fstat(fd, &st) != 0) {
		int e = errno;

		(void) close(fd);
		return (e);
	}
	d->d_fd = fd;
	d->d_path = path;
	if (S_ISREG(st.st_mode)) {
		d->d_flags = SDIO_DEV_REG;
		d->d_size = (uint64_t)st.st_size;
	} else if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) {
		d->d_flags = SDIO_DEV_RAW;
		d->d_size = device_size(fd);
	} else {
		(void) close(fd);
		return (EINVAL);
	}
#ifdef __sun
	if (flags & SDIO_OPEN_DIRECT)
		(void) directio(fd, DIRECTIO_ON);
#endif
	return (0);
}

static void
sync_close(sdio_dev_t *d)
{
	if (d->d_fd >= 0)
		(void) close(d->d_fd);
	d->d_fd = -1;
}

static int
sync_io(sdio_dev_t *d, void *buf, size_t len, uint64_t off, int dir)
{
	ssize_t n;

	if (dir == SDIO_IO_WRITE)
		n = pwrite(d->d_fd, buf, len, (off_t)off);
	else
		n = pread(d->d_fd, buf, len, (off_t)off);
	if (n == (ssize_t)len)
		return (0);
	return (n < 0 ? errno : EIO);
}

static int
sync_flush(sdio_dev_t *d)
{
#ifdef __sun
	if (d->d_flags & SDIO_DEV_RAW) {
		int rc = scsi_sync_cache(d->d_fd);

		if (rc != ENOTTY && rc != EINVAL)
			return (rc);
		if (ioctl(d->d_fd, DKIOCFLUSHWRITECACHE, NULL) != 0)
			return (errno);
		return (0);
	}
#endif
	if (fdatasync(d->d_fd) != 0)
		return (errno);
	return (0);
}

/* sync_open() has direct I/O only here: O_DIRECT, directio(). */
#if defined(__linux__) || defined(__sun)
#define	SYNC_FLAGS	SDIO_OPS_DIRECT
#else
#define	SYNC_FLAGS	0
#endif

const sdio_ops_t sdio_sync_ops = {
	.o_version = SDIO_OPS_VERSION,
	.o_name = "sync",
	.o_flags = SYNC_FLAGS,
	.o_open = sync_open,
	.o_close = sync_close,
	.o_io = sync_io,
	.o_flush = sync_flush
};
