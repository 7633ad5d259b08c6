/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * dkioshim.c: the simulated sd's answer to the two disk ioctls ZFS
 * uses, as an LD_PRELOAD library for the real engine (`sdio prove`).
 *
 * tests/sim/sdio.py decides, from the sd_lun the simulated kernel
 * attached the disk with, what sd would do, and passes it in
 * SDTUNE_SIM_DKIO="LBSIZE PBSIZE CAPACITY FLUSH":
 *
 *	DKIOCGMEDIAINFOEXT	fills struct dk_minfo_ext with the logical
 *				size, PBSIZE and CAPACITY (logical blocks)
 *	DKIOCFLUSHWRITECACHE	FLUSH "drive": fdatasync() on the descriptor,
 *				so that the emulated drive behind the device
 *				node (tests/emu) really sees the flush and
 *				charges its cost; "none": returns at once,
 *				as sd does when flushes are suppressed
 *				(cache-nonvolatile) or the write cache is off
 *
 * Every other ioctl goes to libc's.  The request numbers and the struct
 * layout are illumos' (dkio.h, facts section 7), written here from the
 * facts and not taken from the engine, so that the two are checked
 * against each other.
 */

#define	_GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define	SIM_DKIOC		(0x04 << 8)
#define	SIM_FLUSH		(SIM_DKIOC | 34)
#define	SIM_MEDIAINFOEXT	(SIM_DKIOC | 48)

struct sim_minfo_ext {
	unsigned int		dki_media_type;
	unsigned int		dki_lbsize;
	unsigned long long	dki_capacity;
	unsigned int		dki_pbsize;
};

#define	SIM_DK_FIXED_DISK	0x10001	/* dkio.h DK_FIXED_DISK */

typedef int (*ioctl_fn_t)(int, unsigned long, ...);

static int
sim_config(unsigned int *lb, unsigned int *pb, unsigned long long *cap,
    int *flush)
{
	const char *env = getenv("SDTUNE_SIM_DKIO");
	char how[16];

	if (env == NULL || sscanf(env, "%u %u %llu %15s", lb, pb, cap,
	    how) != 4)
		return (-1);
	*flush = strcmp(how, "drive") == 0;
	return (0);
}

int
ioctl(int fd, unsigned long req, ...)
{
	static ioctl_fn_t real;
	struct sim_minfo_ext *mi;
	unsigned long long cap;
	unsigned int lb, pb;
	int flush;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if ((req == SIM_FLUSH || req == SIM_MEDIAINFOEXT) &&
	    sim_config(&lb, &pb, &cap, &flush) == 0) {
		if (req == SIM_FLUSH)
			return (flush ? fdatasync(fd) : 0);
		mi = arg;
		(void) memset(mi, 0, sizeof (*mi));
		mi->dki_media_type = SIM_DK_FIXED_DISK;
		mi->dki_lbsize = lb;
		mi->dki_pbsize = pb;
		mi->dki_capacity = cap;
		return (0);
	}
	if (real == NULL)
		real = (ioctl_fn_t)dlsym(RTLD_NEXT, "ioctl");
	if (real == NULL) {
		errno = ENOSYS;
		return (-1);
	}
	return (real(fd, req, arg));
}
