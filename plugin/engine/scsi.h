/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * scsi.h: one SCSI command through the OS pass-through (USCSICMD on
 * illumos, SG_IO on Linux).
 */

#ifndef	_SDIO_SCSI_H
#define	_SDIO_SCSI_H

#include <stddef.h>
#include <stdint.h>

#define	SCSI_SENSE_MAX	252

typedef struct scsi_cmd {
	const uint8_t	*sc_cdb;
	unsigned int	sc_cdblen;
	void		*sc_buf;	/* data in (device to host) */
	size_t		sc_buflen;	/* 0: no data phase */
	unsigned int	sc_timeout_s;
	/* results */
	int		sc_status;	/* SCSI status byte */
	size_t		sc_resid;	/* data bytes not transferred */
	uint8_t		sc_sense[SCSI_SENSE_MAX];
	size_t		sc_senselen;
} scsi_cmd_t;

/*
 * Send sc to the device open on fd.  Returns 0 when the command reached
 * the device and completed with a status (sc_status, which may be CHECK
 * CONDITION with sense), or an errno value when the pass-through itself
 * failed: ENOTTY or EINVAL when the target does not take SCSI commands,
 * ENOTSUP on systems with no pass-through.
 */
extern int scsi_send(int, scsi_cmd_t *);

/* SYNCHRONIZE CACHE(10) of the whole medium; 0 or an errno value. */
extern int scsi_sync_cache(int);

#endif	/* _SDIO_SCSI_H */
