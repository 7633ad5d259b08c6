#!/usr/sbin/dtrace -s
/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 *
 * sdtune-align.d - writes smaller than, or misaligned to, 4 KiB per sd disk:
 * the read-modify-write exposure of a pool on 4 KiB-sector drives.
 *
 * What it measures
 *	For every write that starts on an sd disk:
 *	  @writes	all writes
 *	  @sub4k	writes shorter than 4096 bytes
 *	  @misaligned	writes whose first byte is not on a 4096-byte
 *			boundary ((b_blkno * 512) % 4096 != 0)
 *	  @rmw		writes a 4 KiB-sector drive cannot take without
 *			reading first: misaligned start, or a length that
 *			is not a multiple of 4096 (this includes sub4k)
 *	A drive with 4 KiB physical sectors behind 512-byte logical ones
 *	has to read, merge and rewrite a sector for each @rmw write; a
 *	pool with ashift=9 on such a drive shows them here.
 *
 *	b_blkno counts DEV_BSIZE (512-byte) units whatever the drive's
 *	logical block size, and is relative to the start of the slice or
 *	partition the I/O was issued to (sd adds the partition offset
 *	later).  "Aligned" therefore means aligned within the slice; the
 *	slice itself must start on a 4 KiB boundary too (prtvtoc shows it;
 *	ZFS whole-disk EFI labels start slice 0 at sector 256).
 *
 * Probes
 *	io:::start	stable io provider.
 *			args[0] bufinfo_t: b_flags (B_READ), b_bcount (bytes),
 *			b_blkno (512-byte units)
 *			args[1] devinfo_t: dev_name ("sd"), dev_statname ("sd3")
 *	profile:::tick-1sec	counts seconds for the optional time limit.
 *	No fbt probe: everything needed is in the stable io provider.
 *
 *	A buf without B_READ is a write: B_WRITE is a pseudo-flag (0x0100
 *	in illumos sys/buf.h) that not every issuer sets.
 *
 * Usage
 *	dtrace -s sdtune-align.d [DEVNAME [SECONDS]]
 *
 *	DEVNAME	an sd statname such as sd3; "all" or omitted traces every
 *		sd disk.
 *	SECONDS	stop after this many seconds (tick-1sec counter, exit(0),
 *		END prints); omitted or 0 traces until Ctrl-C.
 *
 *	sdtune runs "dtrace -s sdtune-align.d DEVNAME|all SECONDS"
 *	("sdtune trace align [-d DISK] [-t SECONDS]").
 *
 * Output (one marker line before each printa(), parsed by sdtune)
 *	sdtune-agg writes	@writes[statname] = count()
 *	sdtune-agg sub4k	@sub4k[statname] = sum(0 or 1)
 *	sdtune-agg misaligned	@misaligned[statname] = sum(0 or 1)
 *	sdtune-agg rmw		@rmw[statname] = sum(0 or 1)
 *	sdtune-end NS		NS nanoseconds traced
 *	The sums keep every written disk in every aggregation, with 0 where
 *	no write qualified.
 *
 * Written against the io provider translators of illumos-gate
 * (usr/src/lib/libdtrace/common/io.d), which NexentaStor shares.
 */

#pragma D option quiet
#pragma D option defaultargs

inline uint64_t SDTUNE_DEV_BSIZE = 512;
inline uint64_t SDTUNE_SECTOR = 4096;

BEGIN
{
	sdtune_start = timestamp;
	sdtune_ticks = 0;
}

io:::start
/!(args[0]->b_flags & B_READ) &&
    ((($$1 == "" || $$1 == "all") && args[1]->dev_name == "sd") ||
    args[1]->dev_statname == $$1)/
{
	this->dev = args[1]->dev_statname;
	this->off = args[0]->b_blkno * SDTUNE_DEV_BSIZE;
	this->len = (uint64_t)args[0]->b_bcount;
	this->mis = (this->off % SDTUNE_SECTOR) != 0 ? 1 : 0;
	@writes[this->dev] = count();
	@sub4k[this->dev] = sum(this->len < SDTUNE_SECTOR ? 1 : 0);
	@misaligned[this->dev] = sum(this->mis);
	@rmw[this->dev] = sum((this->mis ||
	    (this->len % SDTUNE_SECTOR) != 0) ? 1 : 0);
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
	printf("sdtune-agg writes\n");
	printa(@writes);
	printf("sdtune-agg sub4k\n");
	printa(@sub4k);
	printf("sdtune-agg misaligned\n");
	printa(@misaligned);
	printf("sdtune-agg rmw\n");
	printa(@rmw);
	printf("sdtune-end %d\n", timestamp - sdtune_start);
}
