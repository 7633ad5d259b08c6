#!/usr/sbin/dtrace -s
/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 *
 * sdtune-flush.d - cache-flush commands (SCSI SYNCHRONIZE CACHE) and their
 * latency per sd disk.
 *
 * What it measures
 *	@calls	calls of sd's cache-flush routine (ZFS asks for flushes
 *		with the DKIOCFLUSHWRITECACHE ioctl when a transaction group
 *		or a ZIL commit for synchronous writes must be stable)
 *	@sent	flushes sd really sent to the drive.  calls - sent is the
 *		number sd suppressed because un_f_suppress_cache_flush is
 *		set (sd.conf cache-nonvolatile:true or
 *		suppress-cache-flush:true): the routine tests that first and
 *		returns without a command.
 *	@lat	quantize() of each sent flush's latency in nanoseconds, from
 *		handing the command to sd until its completion routine ran
 *	@latsum	sum of those latencies (an exact mean is @latsum / @sent)
 *	@latmax	the slowest one
 *	A drive with a volatile write cache takes milliseconds per flush; one
 *	with power-loss protection (or that ignores flushes) answers in tens
 *	of microseconds.
 *
 * Probes, and why fbt
 *	The stable io provider does not see cache flushes: sd builds the
 *	flush buf itself and hands it to sd_uscsi_strategy() without
 *	bdev_strategy(), so io:::start never fires for it, and no stable
 *	probe exists for SYNCHRONIZE CACHE.  This script therefore uses fbt
 *	on three functions of the sd module, as found in
 *	usr/src/uts/common/io/scsi/targets/sd.c:
 *
 *	  static int sd_send_scsi_SYNCHRONIZE_CACHE(struct sd_lun *un,
 *	      struct dk_callback *dkc);
 *	  static int sd_uscsi_strategy(struct buf *bp);
 *	  static int sd_send_scsi_SYNCHRONIZE_CACHE_biodone(struct buf *bp);
 *
 *	fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry notes the disk in
 *	thread-local variables; the flush buf's sd_uscsi_strategy() call,
 *	made on the same thread before the routine returns, stamps the start
 *	time by buf address; ..._biodone:entry (called directly after
 *	biowait() for a synchronous flush, from biodone() as b_iodone for an
 *	asynchronous one such as ZFS's) ends it.  The :return probe clears
 *	the thread-local state, also when the flush was suppressed.
 *
 *	The disk's name is sd<instance>, the instance read from
 *	args[0]->un_sd->sd_dev (SD_DEVINFO(un) in sddef.h) as
 *	((struct dev_info *)...)->devi_instance, which is how the io
 *	provider's own devinfo_t translator finds it; no ddi_get_instance()
 *	call and no minor-number arithmetic (SDUNIT_SHIFT is 3 on SPARC and
 *	6 on x86), so the name matches the io provider's dev_statname.
 *
 * Kernels this was written against
 *	The signatures above, the suppress test at the top of the routine
 *	and the buf handling were read in illumos-gate sd.c (commit
 *	c98c5c83d5d2, and an older one) and in illumos-nexenta forks
 *	carrying NexentaStor's sd.c (jli128/illumos-nexenta 050a9a11c71d,
 *	cbtrident/illumos-nexenta 000c9643592d, the line with SCSI UNMAP
 *	support).  In all of them the first argument is a struct sd_lun *,
 *	not an sd_ssc_t *.  A kernel whose sd differs makes dtrace refuse
 *	the script at compile time ("does not match any probes", or a
 *	member error on args[0]); it cannot silently count the wrong thing.
 *	SPARC fibre-channel disks use ssd, the same source built with ssd_
 *	names, which this script does not probe.
 *
 * Usage
 *	dtrace -s sdtune-flush.d [DEVNAME [SECONDS]]
 *
 *	DEVNAME	an sd statname such as sd3; "all" or omitted traces every
 *		sd disk.
 *	SECONDS	stop after this many seconds (tick-1sec counter, exit(0),
 *		END prints); omitted or 0 traces until Ctrl-C.
 *
 *	sdtune runs "dtrace -s sdtune-flush.d DEVNAME|all SECONDS"
 *	("sdtune trace flush [-d DISK] [-t SECONDS]").
 *
 * Output (one marker line before each printa(), parsed by sdtune)
 *	sdtune-agg calls	@calls[statname] = count()
 *	sdtune-agg sent		@sent[statname] = count()
 *	sdtune-agg lat		@lat[statname] = quantize(ns)
 *	sdtune-agg latsum	@latsum[statname] = sum(ns)
 *	sdtune-agg latmax	@latmax[statname] = max(ns)
 *	sdtune-end NS		NS nanoseconds traced
 *	Flushes in flight when tracing starts or stops are not counted.
 */

#pragma D option quiet
#pragma D option defaultargs
#pragma D option dynvarsize=8m

BEGIN
{
	sdtune_start = timestamp;
	sdtune_ticks = 0;
}

/*
 * The instance is kept plus one so that 0 means "not in a flush": an int
 * thread-local reads 0 until set and is freed again by assigning 0.
 */
fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry
{
	self->inst = ((struct dev_info *)args[0]->un_sd->sd_dev)->devi_instance
	    + 1;
	this->dev = strjoin("sd", lltostr(self->inst - 1));
	self->want = $$1 == "" || $$1 == "all" || this->dev == $$1;
}

fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry
/self->want/
{
	@calls[strjoin("sd", lltostr(self->inst - 1))] = count();
}

/*
 * The routine issues exactly one uscsi command, the flush, so only the
 * first sd_uscsi_strategy() call of the thread inside it is taken.
 */
fbt:sd:sd_uscsi_strategy:entry
/self->want/
{
	sdtune_t0[arg0] = timestamp;
	sdtune_inst[arg0] = self->inst;
	@sent[strjoin("sd", lltostr(self->inst - 1))] = count();
	self->want = 0;
}

fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:return
{
	self->want = 0;
	self->inst = 0;
}

fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE_biodone:entry
/sdtune_t0[arg0]/
{
	this->ns = timestamp - sdtune_t0[arg0];
	this->dev = strjoin("sd", lltostr(sdtune_inst[arg0] - 1));
	@lat[this->dev] = quantize(this->ns);
	@latsum[this->dev] = sum(this->ns);
	@latmax[this->dev] = max(this->ns);
	sdtune_t0[arg0] = 0;
	sdtune_inst[arg0] = 0;
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
	printf("sdtune-agg calls\n");
	printa(@calls);
	printf("sdtune-agg sent\n");
	printa(@sent);
	printf("sdtune-agg lat\n");
	printa(@lat);
	printf("sdtune-agg latsum\n");
	printa(@latsum);
	printf("sdtune-agg latmax\n");
	printa(@latmax);
	printf("sdtune-end %d\n", timestamp - sdtune_start);
}
