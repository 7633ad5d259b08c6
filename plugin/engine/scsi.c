/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * scsi.c: SCSI pass-through and the `sdio scsi` subcommand.
 *
 *	sdio scsi inquiry DEVICE [--json]	INQUIRY (0x12), standard data
 *	sdio scsi vpd PAGE DEVICE [--json]	INQUIRY with EVPD, page PAGE
 *	sdio scsi readcap16 DEVICE [--json]	READ CAPACITY(16) (0x9E/0x10)
 *	sdio scsi modesense PAGE DEVICE [--json]  MODE SENSE(10) (0x5A),
 *						current values, no DBD
 *
 * The output is the raw exchange, {"command", "status", "sense_hex",
 * "data_hex"}; decoding is Python's job (certify/), so this file knows
 * CDB layouts and nothing about the answers.
 *
 * Exit: 0 when the command completed with GOOD status; 4 when it
 * completed with another status (the JSON is still printed, with the
 * sense data) or the target does not take SCSI commands (a regular
 * file, or ENOTTY/EINVAL from the pass-through ioctl; a message on
 * stderr, no JSON); 2 when the device cannot be opened; 1 on usage.
 *
 * illumos: USCSICMD (facts section 7); the ioctl fails with EIO when the
 * status is not GOOD but still fills in uscsi_status and the sense, so
 * a status is recognised by uscsi_status having changed from -1.
 * Linux: SG_IO on a block or sg device; it returns 0 with the status in
 * the header.
 */

#include "sdio.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/ioctl.h>
#ifdef __sun
#include <sys/scsi/impl/uscsi.h>
#endif
#ifdef __linux__
#include <scsi/sg.h>
#endif

#include "json.h"
#include "scsi.h"

#define	SCSI_DATA_MAX	4096

int
scsi_send(int fd, scsi_cmd_t *sc)
{
#if defined(__sun)
	struct uscsi_cmd uc;
	int rc;

	(void) memset(&uc, 0, sizeof (uc));
	uc.uscsi_flags = USCSI_SILENT | USCSI_RQENABLE |
	    (sc->sc_buflen > 0 ? USCSI_READ : USCSI_WRITE);
	uc.uscsi_status = -1;
	uc.uscsi_timeout = (short)sc->sc_timeout_s;
	uc.uscsi_cdb = (caddr_t)sc->sc_cdb;
	uc.uscsi_cdblen = (uchar_t)sc->sc_cdblen;
	uc.uscsi_bufaddr = (caddr_t)sc->sc_buf;
	uc.uscsi_buflen = sc->sc_buflen;
	uc.uscsi_rqbuf = (caddr_t)sc->sc_sense;
	uc.uscsi_rqlen = (uchar_t)SCSI_SENSE_MAX;

	rc = ioctl(fd, USCSICMD, &uc);
	if (rc != 0 && (errno != EIO || uc.uscsi_status == -1))
		return (errno);
	sc->sc_status = uc.uscsi_status & 0xff;
	sc->sc_resid = uc.uscsi_resid;
	sc->sc_senselen = 0;
	if (uc.uscsi_rqstatus == 0 && uc.uscsi_rqlen >= uc.uscsi_rqresid)
		sc->sc_senselen = uc.uscsi_rqlen - uc.uscsi_rqresid;
	return (0);
#elif defined(__linux__)
	sg_io_hdr_t io;

	(void) memset(&io, 0, sizeof (io));
	io.interface_id = 'S';
	io.dxfer_direction = sc->sc_buflen > 0 ? SG_DXFER_FROM_DEV :
	    SG_DXFER_NONE;
	io.cmd_len = (unsigned char)sc->sc_cdblen;
	io.cmdp = (unsigned char *)(uintptr_t)sc->sc_cdb;
	io.dxferp = sc->sc_buf;
	io.dxfer_len = (unsigned int)sc->sc_buflen;
	io.sbp = sc->sc_sense;
	io.mx_sb_len = SCSI_SENSE_MAX;
	io.timeout = sc->sc_timeout_s * 1000U;

	if (ioctl(fd, SG_IO, &io) != 0)
		return (errno);
	/* A transport failure has no SCSI status to report. */
	if (io.host_status != 0 && io.status == 0)
		return (EIO);
	sc->sc_status = io.status;
	sc->sc_resid = io.resid > 0 ? (size_t)io.resid : 0;
	if (sc->sc_resid > sc->sc_buflen)
		sc->sc_resid = sc->sc_buflen;
	sc->sc_senselen = io.sb_len_wr;
	return (0);
#else
	(void) fd;
	(void) sc;
	return (ENOTSUP);
#endif
}

int
scsi_sync_cache(int fd)
{
	uint8_t cdb[10];
	scsi_cmd_t sc;
	int rc;

	(void) memset(cdb, 0, sizeof (cdb));
	cdb[0] = 0x35;		/* SYNCHRONIZE CACHE(10), whole medium */
	(void) memset(&sc, 0, sizeof (sc));
	sc.sc_cdb = cdb;
	sc.sc_cdblen = sizeof (cdb);
	sc.sc_timeout_s = 60;
	if ((rc = scsi_send(fd, &sc)) != 0)
		return (rc);
	return (sc.sc_status == 0 ? 0 : EIO);
}

static int
scsi_usage(void)
{
	(void) fprintf(stderr,
	    "usage: sdio scsi inquiry DEVICE [--json]\n"
	    "       sdio scsi vpd PAGE DEVICE [--json]\n"
	    "       sdio scsi readcap16 DEVICE [--json]\n"
	    "       sdio scsi modesense PAGE DEVICE [--json]\n");
	return (SDIO_EXIT_USAGE);
}

static int
parse_page(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v > max)
		return (-1);
	*out = (unsigned int)v;
	return (0);
}

int
sdio_scsi_main(int argc, char **argv)
{
	const char *pos[3], *cmd, *dev, *what;
	uint8_t cdb[16], data[SCSI_DATA_MAX];
	unsigned int cdblen, page = 0, npos = 0, alloc;
	scsi_cmd_t sc;
	struct stat st;
	size_t n, i;
	int json = 0, fd, rc, i_arg;

	for (i_arg = 0; i_arg < argc; i_arg++) {
		if (strcmp(argv[i_arg], "--json") == 0)
			json = 1;
		else if (npos < 3)
			pos[npos++] = argv[i_arg];
		else
			return (scsi_usage());
	}
	if (npos < 2)
		return (scsi_usage());
	cmd = pos[0];
	(void) memset(cdb, 0, sizeof (cdb));
	if (strcmp(cmd, "inquiry") == 0 && npos == 2) {
		what = "INQUIRY";
		alloc = 255;
		cdb[0] = 0x12;
		cdb[4] = (uint8_t)alloc;
		cdblen = 6;
	} else if (strcmp(cmd, "vpd") == 0 && npos == 3) {
		if (parse_page(pos[1], 0xff, &page) != 0)
			return (scsi_usage());
		what = "INQUIRY (VPD)";
		alloc = 255;
		cdb[0] = 0x12;
		cdb[1] = 0x01;		/* EVPD */
		cdb[2] = (uint8_t)page;
		cdb[4] = (uint8_t)alloc;
		cdblen = 6;
	} else if (strcmp(cmd, "readcap16") == 0 && npos == 2) {
		what = "READ CAPACITY(16)";
		alloc = 32;
		cdb[0] = 0x9e;		/* SERVICE ACTION IN(16) */
		cdb[1] = 0x10;		/* READ CAPACITY(16) */
		cdb[13] = (uint8_t)alloc;
		cdblen = 16;
	} else if (strcmp(cmd, "modesense") == 0 && npos == 3) {
		if (parse_page(pos[1], 0x3f, &page) != 0)
			return (scsi_usage());
		what = "MODE SENSE(10)";
		alloc = 1020;
		cdb[0] = 0x5a;
		cdb[2] = (uint8_t)page;	/* PC 0: current values */
		cdb[7] = (uint8_t)(alloc >> 8);
		cdb[8] = (uint8_t)(alloc & 0xff);
		cdblen = 10;
	} else {
		return (scsi_usage());
	}
	dev = pos[npos - 1];

	if ((fd = open(dev, O_RDONLY | O_NONBLOCK)) < 0) {
		(void) fprintf(stderr, "sdio: cannot open '%s': %s\n", dev,
		    strerror(errno));
		return (SDIO_EXIT_SETUP);
	}
	if (fstat(fd, &st) == 0 && !S_ISCHR(st.st_mode) &&
	    !S_ISBLK(st.st_mode)) {
		(void) fprintf(stderr, "sdio: cannot send %s to '%s': "
		    "not a SCSI device (%s)\n", what, dev,
		    S_ISREG(st.st_mode) ? "a regular file" : "not a device");
		(void) close(fd);
		return (SDIO_EXIT_SCSI);
	}

	(void) memset(&sc, 0, sizeof (sc));
	(void) memset(data, 0, sizeof (data));
	sc.sc_cdb = cdb;
	sc.sc_cdblen = cdblen;
	sc.sc_buf = data;
	sc.sc_buflen = alloc;
	sc.sc_timeout_s = 30;
	rc = scsi_send(fd, &sc);
	(void) close(fd);
	if (rc != 0) {
		(void) fprintf(stderr, "sdio: cannot send %s to '%s': %s%s\n",
		    what, dev, strerror(rc), rc == ENOTTY || rc == EINVAL ||
		    rc == ENOTSUP ? " (the target does not take SCSI "
		    "commands)" : "");
		return (SDIO_EXIT_SCSI);
	}

	n = alloc - (sc.sc_resid < alloc ? sc.sc_resid : alloc);
	if (json) {
		(void) printf("{\"command\": ");
		json_string(stdout, cmd);
		(void) printf(", \"status\": %d, \"sense_hex\": ",
		    sc.sc_status);
		json_hex(stdout, sc.sc_sense, sc.sc_senselen);
		(void) printf(", \"data_hex\": ");
		json_hex(stdout, data, n);
		(void) printf("}\n");
	} else {
		(void) printf("%s %s: status 0x%02x, %zu data bytes\n", what,
		    dev, sc.sc_status, n);
		if (sc.sc_senselen > 0) {
			(void) printf("sense:");
			for (i = 0; i < sc.sc_senselen; i++)
				(void) printf(" %02x", sc.sc_sense[i]);
			(void) printf("\n");
		}
		for (i = 0; i < n; i++) {
			if (i % 16 == 0)
				(void) printf("%04zx:", i);
			(void) printf(" %02x", data[i]);
			if (i % 16 == 15 || i + 1 == n)
				(void) printf("\n");
		}
	}
	if (sc.sc_status != 0) {
		(void) fprintf(stderr, "sdio: %s on '%s' failed: SCSI status "
		    "0x%02x\n", what, dev, sc.sc_status);
		return (SDIO_EXIT_SCSI);
	}
	return (SDIO_EXIT_OK);
}
