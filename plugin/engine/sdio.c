/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * sdio: the measuring core of sdtune.  argv in, one JSON document out
 * (DESIGN.md seam 3); Python never links it.
 *
 *	sdio [options] TARGET
 *	sdio paired [options] --arm SPEC [--arm SPEC ...] TARGET
 *	sdio scsi inquiry|vpd PAGE|readcap16|modesense PAGE DEVICE [--json]
 *	sdio prove [--flushes N] DEVICE
 *	sdio serve --root ROOT [--allow /POLICY]
 *	sdio diskmgt --diskmgt LIBPATH --nvpair LIBPATH [--no-inuse]
 *	sdio powercut write --run HEX16 --slots N --block BYTES
 *	    [--offset BYTES] [--first-seq S] [--seconds T] [--seed X]
 *	    [--notice-ms M] [--flush-every-ms E] TARGET
 *	sdio powercut read --slots N --block BYTES [--offset BYTES] TARGET
 *	sdio --version
 *
 * The workload runs qd threads of synchronous I/O on TARGET (a file or a
 * raw device) through a backend's ops table (sync: pread/pwrite; null: no
 * I/O, to measure the engine itself) and reports the latency histogram's
 * percentiles, Welford mean/stddev, min/max, per-interval statistics and
 * any I/O errors, rendered once at the end.  `sdio paired` measures
 * several workloads ("arms") in alternating rounds in one thread, so that
 * drift and machine load hit them alike, and reports per-round, per-arm
 * slice statistics for paired comparison.
 *
 * This file only dispatches, and sets the run mode's target up; each
 * job has its file, so that each can be read alone:
 *	opts.c		options as data, the one argv parser, the usage
 *	backend.c	the backend table: lookup by name, opening the target
 *	backend_*.c	the backends (sync, null)
 *	run.c		the run mode's multi-thread measuring loop
 *	report.c	the run mode's JSON and human output
 *	paired.c	`sdio paired`
 *	scsi.c		`sdio scsi`, and the SCSI pass-through
 *	prove.c		`sdio prove`, DKIOCGMEDIAINFOEXT and timed
 *			DKIOCFLUSHWRITECACHE, writing nothing
 *	serve_*.c	`sdio serve`, sdtune's file and command server on
 *			stdin/stdout, for use over SSH
 *	diskmgt.c	`sdio diskmgt`, fixed disks and their in-use state from
 *			illumos libdiskmgt (dlopen()ed) as JSON
 *	powercut.c	`sdio powercut`, the power-cut check's writer (each
 *			completed write and flush a line on stdout at once)
 *			and its read-back of the region
 *	hist.c		the latency histogram and its error bound
 *	json.c		JSON writing helpers
 *	selftest.c	hidden test modes for tests/engine
 *
 * Exit status (the contract with the Python side):
 *	0	success
 *	1	usage: bad option or value
 *	2	the target cannot be opened or set up (missing, no size,
 *		out of memory, no threads)
 *	3	an I/O error stopped the run (the JSON is still printed, the
 *		errors listed with op, offset and errno; sdio paired lists
 *		the rounds completed before it; sdio powercut stops
 *		there, the error on stderr only)
 *	4	a SCSI command failed or the target does not take SCSI
 *		commands (sdio scsi); a disk ioctl failed (sdio prove: the
 *		JSON is still printed, with the error)
 * sdio powercut also exits 2 when the region does not fit in the target
 * or stdout fails (the witness is gone).
 * sdio diskmgt exits 0 also when libdiskmgt is unavailable (the JSON
 * says so), 2 only when out of memory or when it cannot write.
 */

#include "sdio.h"
#include "prove.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The run mode: options, the target opened and its region checked, the
 * workload (run.c), the report (report.c).  Returns the exit status.
 */
static int
run_mode(int argc, char **argv)
{
	sdio_opts_t o;
	sdio_dev_t dev;
	sdio_result_t res;
	char msg[256];
	uint64_t size;
	int rc;

	if ((rc = sdio_parse_run(argc, argv, &o)) != 0)
		return (rc);

	if ((rc = sdio_open_target(o.op_backend, &dev, o.op_target,
	    o.op_write, o.op_direct)) != 0)
		return (rc);

	size = dev.d_size;
	if (o.op_region == 0) {
		if (size <= o.op_offset || size - o.op_offset < o.op_bs) {
			(void) fprintf(stderr, "sdio: cannot set up '%s': "
			    "size %llu leaves no room for one %llu-byte I/O "
			    "after offset %llu; give --region\n", o.op_target,
			    (unsigned long long)size,
			    (unsigned long long)o.op_bs,
			    (unsigned long long)o.op_offset);
			o.op_backend->o_close(&dev);
			return (SDIO_EXIT_SETUP);
		}
		o.op_region = size - o.op_offset;
	}
	o.op_region -= o.op_region % o.op_bs;
	/* Past the end of a device or a file being read is always an error. */
	if (size > 0 && ((dev.d_flags & SDIO_DEV_RAW) || !o.op_write) &&
	    o.op_offset + o.op_region > size) {
		(void) fprintf(stderr, "sdio: --offset %llu + --region %llu "
		    "exceeds the size of '%s' (%llu)\n",
		    (unsigned long long)o.op_offset,
		    (unsigned long long)o.op_region, o.op_target,
		    (unsigned long long)size);
		o.op_backend->o_close(&dev);
		return (SDIO_EXIT_USAGE);
	}

	rc = sdio_run(&o, &dev, &res, msg, sizeof (msg));
	o.op_backend->o_close(&dev);
	if (rc != 0) {
		(void) fprintf(stderr, "sdio: cannot set up '%s': %s\n",
		    o.op_target, msg);
		return (rc);
	}
	sdio_report_run(&o, &res);
	if (fflush(stdout) != 0) {
		(void) fprintf(stderr, "sdio: cannot write output: %s\n",
		    strerror(errno));
		return (SDIO_EXIT_SETUP);
	}
	rc = res.r_nerrs > 0 ? SDIO_EXIT_IO : SDIO_EXIT_OK;
	free(res.r_ivals);
	free(res.r_threads);
	free(res.r_errs);
	return (rc);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		(void) printf("sdio %s\n", SDIO_VERSION);
		return (fflush(stdout) == 0 ? SDIO_EXIT_OK : SDIO_EXIT_SETUP);
	}
	if (argc >= 2 && strcmp(argv[1], "scsi") == 0)
		return (sdio_scsi_main(argc - 2, argv + 2));
	if (argc >= 2 && strcmp(argv[1], "prove") == 0)
		return (sdio_prove_main(argc - 2, argv + 2));
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return (sdio_serve_main(argc - 2, argv + 2));
	if (argc >= 2 && strcmp(argv[1], "powercut") == 0)
		return (sdio_powercut_main(argc - 2, argv + 2));
	if (argc >= 2 && strcmp(argv[1], "diskmgt") == 0)
		return (sdio_diskmgt_main(argc - 2, argv + 2));
	if (argc >= 2 && strcmp(argv[1], "paired") == 0)
		return (sdio_paired_main(argc - 1, argv + 1));
	if (argc >= 2 && strcmp(argv[1], "--selftest-hist") == 0)
		return (sdio_selftest_hist(argc - 2, argv + 2));
	if (argc == 2 && strcmp(argv[1], "--selftest-median") == 0)
		return (sdio_selftest_median());
	return (run_mode(argc, argv));
}
