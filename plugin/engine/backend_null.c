/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * backend_null.c: the null backend does no I/O at all.  It measures the
 * engine itself (threads, clock, histogram, intervals) and lets the tests
 * check the harness's accounting without a device.  The target path is
 * not opened; the region defaults to NULL_SIZE.
 */

#include "sdio.h"

#define	NULL_SIZE	(1ULL << 40)

static int
null_open(sdio_dev_t *d, const char *path, int flags)
{
	(void) flags;
	d->d_fd = -1;
	d->d_flags = 0;
	d->d_size = NULL_SIZE;
	d->d_path = path;
	return (0);
}

static void
null_close(sdio_dev_t *d)
{
	(void) d;
}

static int
null_io(sdio_dev_t *d, void *buf, size_t len, uint64_t off, int dir)
{
	(void) d;
	(void) buf;
	(void) len;
	(void) off;
	(void) dir;
	return (0);
}

static int
null_flush(sdio_dev_t *d)
{
	(void) d;
	return (0);
}

const sdio_ops_t sdio_null_ops = {
	.o_version = SDIO_OPS_VERSION,
	.o_name = "null",
	.o_flags = SDIO_OPS_NOIO,
	.o_open = null_open,
	.o_close = null_close,
	.o_io = null_io,
	.o_flush = null_flush
};
