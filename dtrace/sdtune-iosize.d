#!/usr/sbin/dtrace -s
/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 *
 * sdtune-iosize.d - I/O size distribution per sd disk and direction.
 *
 * What it measures
 *	Every block I/O that starts on an sd disk: a power-of-two histogram
 *	of its size in bytes, per disk and direction, and the bytes moved.
 *	It shows which sizes a pool really sends to a drive, for instance
 *	how many writes are smaller than the drive's 4 KiB native sector.
 *
 * Probes
 *	io:::start	stable io provider, fired when a buf is handed to a
 *			block driver (bdev_strategy(), physio()).
 *			args[0] bufinfo_t: b_flags (B_READ), b_bcount (bytes)
 *			args[1] devinfo_t: dev_name ("sd"), dev_statname
 *			("sd3", the name iostat and kstat use)
 *	profile:::tick-1sec	counts seconds for the optional time limit.
 *	No fbt probe: everything needed is in the stable io provider.
 *
 *	A buf without B_READ is a write: B_WRITE is a pseudo-flag (0x0100
 *	in illumos sys/buf.h) that not every issuer sets.
 *
 * Usage
 *	dtrace -s sdtune-iosize.d [DEVNAME [SECONDS]]
 *
 *	DEVNAME	an sd statname such as sd3 (sd<instance>); "all" or
 *		omitted traces every sd disk.  Another driver's statname
 *		(blkdev0, cmdk1) also works when given explicitly.
 *	SECONDS	stop after this many seconds (the tick-1sec counter calls
 *		exit(0), so END runs and prints); omitted or 0 traces until
 *		Ctrl-C (SIGINT, which also runs END).
 *
 *	sdtune runs "dtrace -s sdtune-iosize.d DEVNAME|all SECONDS" through
 *	its Host seam ("sdtune trace iosize [-d DISK] [-t SECONDS]") and
 *	reads the END output below.
 *
 * Output (one marker line before each printa(), parsed by sdtune)
 *	sdtune-agg size		@size[statname, "R"|"W"] = quantize(b_bcount)
 *	sdtune-agg bytes	@bytes[statname, "R"|"W"] = sum(b_bcount)
 *	sdtune-end NS		NS nanoseconds traced; absent if dtrace was
 *				killed before END, which sdtune reports.
 *
 * Written against the io provider translators of illumos-gate
 * (usr/src/lib/libdtrace/common/io.d), which NexentaStor shares.
 */

#pragma D option quiet
#pragma D option defaultargs

BEGIN
{
	sdtune_start = timestamp;
	sdtune_ticks = 0;
}

io:::start
/(($$1 == "" || $$1 == "all") && args[1]->dev_name == "sd") ||
    args[1]->dev_statname == $$1/
{
	this->dir = args[0]->b_flags & B_READ ? "R" : "W";
	@size[args[1]->dev_statname, this->dir] = quantize(args[0]->b_bcount);
	@bytes[args[1]->dev_statname, this->dir] = sum(args[0]->b_bcount);
}

profile:::tick-1sec
{
	sdtune_ticks++;
}

profile:::tick-1sec
/$2 > 0 && sdtune_ticks >= $2/
{
	exit(0);
}

END
{
	printf("sdtune-agg size\n");
	printa(@size);
	printf("sdtune-agg bytes\n");
	printa(@bytes);
	printf("sdtune-end %d\n", timestamp - sdtune_start);
}
