/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * prove.h: the two disk ioctls `sdio prove` calls.  On illumos they
 * come from <sys/dkio.h>.  Elsewhere (the Linux test build) the engine
 * defines them itself with illumos' request numbers and struct layout
 * (dkio.h: DKIOC is 0x04 << 8; DKIOCFLUSHWRITECACHE is DKIOC|34,
 * DKIOCGMEDIAINFOEXT is DKIOC|48; struct dk_minfo_ext is two uint_t, a
 * diskaddr_t and a uint_t), so that an LD_PRELOAD shim in the simulated
 * appliance can answer the very calls the engine makes on an appliance;
 * without such a shim a regular file or a Linux disk refuses them
 * (ENOTTY), which prove reports.
 */

#ifndef	_SDIO_PROVE_H
#define	_SDIO_PROVE_H

#include <stdint.h>

#ifdef __sun
#include <sys/dkio.h>

#define	PROVE_FLUSH		DKIOCFLUSHWRITECACHE
#define	PROVE_MEDIAINFOEXT	DKIOCGMEDIAINFOEXT
typedef struct dk_minfo_ext prove_minfo_ext_t;
#else
#define	PROVE_DKIOC		(0x04 << 8)
#define	PROVE_FLUSH		(PROVE_DKIOC | 34)
#define	PROVE_MEDIAINFOEXT	(PROVE_DKIOC | 48)

typedef struct prove_minfo_ext {
	uint32_t	dki_media_type;
	uint32_t	dki_lbsize;
	uint64_t	dki_capacity;	/* diskaddr_t: logical blocks */
	uint32_t	dki_pbsize;
} prove_minfo_ext_t;
#endif

/* The flush calls timed by default, and at most. */
#define	PROVE_FLUSHES_DEFAULT	64
#define	PROVE_FLUSHES_MAX	100000

extern int sdio_prove_main(int, char **);

#endif	/* _SDIO_PROVE_H */
