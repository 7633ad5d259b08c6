/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * prove.c: `sdio prove`, what the disk driver answers on the two paths
 * ZFS uses, without writing a byte.
 *
 *	sdio prove [--flushes N] DEVICE
 *
 * DKIOCGMEDIAINFOEXT once (the physical block size vdev_disk.c turns
 * into the ashift), then DKIOCFLUSHWRITECACHE N times (default 64),
 * synchronous (NULL argument, as a user process must call it), each
 * timed on the monotonic clock.  sd answers a flush without sending
 * SYNCHRONIZE CACHE when cache-nonvolatile is in effect, so the time
 * per call says whether the drive saw it.  A flush writes no data: it
 * only makes earlier writes durable, so prove is safe on pool members.
 *
 * The device is opened read-only: sdioctl() checks no write permission
 * for either request (only USCSICMD asks for privilege).  Not O_NDELAY:
 * on a descriptor opened that way sd sends TEST UNIT READY to the drive
 * before each flush while the label is not valid, which would time a
 * drive round trip where sd answers the flush itself.
 *
 * Output, one JSON document:
 *	{"target", "media": {"lbsize_bytes", "pbsize_bytes",
 *	 "capacity_blocks"} or null, "media_error": null or the error,
 *	 "flush": {"calls", "median_ns", "p99_ns", "min_ns", "max_ns"} or
 *	 null, "flush_error": null or the error, "flush_calls_done"}
 * Exit: 0 both answered; 4 either request failed (the JSON is printed,
 * with the error: ENOTTY is a device that does not take it); 2 the
 * device cannot be opened or memory is short; 1 usage.
 */

#include "sdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "json.h"
#include "prove.h"

static int
prove_usage(void)
{
	(void) fprintf(stderr, "usage: sdio prove [--flushes N] DEVICE\n");
	return (SDIO_EXIT_USAGE);
}

static uint64_t
prove_now_ns(void)
{
	struct timespec ts;

	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

static int
prove_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y ? 1 : 0);
}

static void
prove_error(const char *key, int err)
{
	(void) printf(", \"%s\": ", key);
	if (err == 0)
		(void) printf("null");
	else
		json_string(stdout, strerror(err));
}

/*
 * The median is the lower middle value and p99 the nearest rank, so that
 * both are times a call really took.
 */
static void
prove_flush_json(uint64_t *ns, size_t n)
{
	size_t rank;

	qsort(ns, n, sizeof (uint64_t), prove_cmp);
	rank = (n * 99 + 99) / 100;
	(void) printf("{\"calls\": %lu, \"median_ns\": %llu, "
	    "\"p99_ns\": %llu, \"min_ns\": %llu, \"max_ns\": %llu}",
	    (unsigned long)n, (unsigned long long)ns[(n - 1) / 2],
	    (unsigned long long)ns[rank - 1], (unsigned long long)ns[0],
	    (unsigned long long)ns[n - 1]);
}

int
sdio_prove_main(int argc, char **argv)
{
	const char *dev = NULL;
	prove_minfo_ext_t mi;
	unsigned long flushes = PROVE_FLUSHES_DEFAULT;
	uint64_t *ns, t0;
	size_t done = 0;
	int i, fd, merr = 0, ferr = 0;
	char *end;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--flushes") == 0 && i + 1 < argc) {
			errno = 0;
			flushes = strtoul(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || flushes == 0 ||
			    flushes > PROVE_FLUSHES_MAX)
				return (prove_usage());
		} else if (argv[i][0] == '-' || dev != NULL) {
			return (prove_usage());
		} else {
			dev = argv[i];
		}
	}
	if (dev == NULL)
		return (prove_usage());
	if ((ns = calloc(flushes, sizeof (uint64_t))) == NULL) {
		(void) fprintf(stderr, "sdio: out of memory\n");
		return (SDIO_EXIT_SETUP);
	}
	if ((fd = open(dev, O_RDONLY)) < 0) {
		(void) fprintf(stderr, "sdio: cannot open '%s': %s\n", dev,
		    strerror(errno));
		free(ns);
		return (SDIO_EXIT_SETUP);
	}

	(void) memset(&mi, 0, sizeof (mi));
	if (ioctl(fd, PROVE_MEDIAINFOEXT, &mi) != 0)
		merr = errno;
	for (done = 0; done < flushes; done++) {
		t0 = prove_now_ns();
		if (ioctl(fd, PROVE_FLUSH, NULL) != 0) {
			ferr = errno;
			break;
		}
		ns[done] = prove_now_ns() - t0;
	}
	(void) close(fd);

	(void) printf("{\"target\": ");
	json_string(stdout, dev);
	(void) printf(", \"media\": ");
	if (merr == 0) {
		(void) printf("{\"lbsize_bytes\": %u, \"pbsize_bytes\": %u, "
		    "\"capacity_blocks\": %llu}", (unsigned int)mi.dki_lbsize,
		    (unsigned int)mi.dki_pbsize,
		    (unsigned long long)mi.dki_capacity);
	} else {
		(void) printf("null");
	}
	prove_error("media_error", merr);
	(void) printf(", \"flush\": ");
	if (ferr == 0)
		prove_flush_json(ns, done);
	else
		(void) printf("null");
	prove_error("flush_error", ferr);
	(void) printf(", \"flush_calls_done\": %lu}\n", (unsigned long)done);
	free(ns);
	if (fflush(stdout) != 0)
		return (SDIO_EXIT_SETUP);
	return (merr != 0 || ferr != 0 ? SDIO_EXIT_SCSI : SDIO_EXIT_OK);
}
