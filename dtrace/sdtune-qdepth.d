#!/usr/sbin/dtrace -s
/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 *
 * sdtune-qdepth.d - outstanding I/O (queue depth) per sd disk.
 *
 * What it measures
 *	The number of I/Os started on a disk and not yet done, sampled each
 *	time an I/O starts (the count includes the starting I/O, so every
 *	sample is at least 1):
 *	  @depth	lquantize(outstanding, 0, 256, 1): how deep the queue
 *			was, one bucket per depth up to 255 (sd's default
 *			throttle, sd_max_throttle, is 256)
 *	  @ios		number of samples (I/Os started)
 *	  @depthsum	sum of the samples (exact mean = @depthsum / @ios)
 *	  @deepest	the largest sample
 *	It shows whether a workload keeps a drive's queue full enough to
 *	reach its rated IOPS, and whether throttle-max is the limit.
 *
 *	The depth is what reached sd's strategy routine, above sd's own wait
 *	queue and throttle: with more outstanding than throttle-max, the
 *	excess waits in sd, not in the drive.
 *
 * Probes
 *	io:::start	stable io provider; arg0 is the struct buf pointer,
 *			args[1] devinfo_t: dev_name ("sd"), dev_statname ("sd3")
 *	io:::done	the same buf completing (fired by biodone())
 *	profile:::tick-1sec	counts seconds for the optional time limit.
 *	No fbt probe: the stable io provider is enough.
 *
 *	Only bufs seen starting are counted down at io:::done, so I/Os that
 *	were in flight when tracing began do not make the count negative.
 *	D global variables are not updated atomically across CPUs: when two
 *	CPUs start or finish I/O on one disk in the same instant an update
 *	can be lost, so the depth is a close estimate, not an exact count
 *	(iostat's actv column is the kernel's exact time-averaged figure).
 *
 * Usage
 *	dtrace -s sdtune-qdepth.d [DEVNAME [SECONDS]]
 *
 *	DEVNAME	an sd statname such as sd3; "all" or omitted traces every
 *		sd disk.
 *	SECONDS	stop after this many seconds (tick-1sec counter, exit(0),
 *		END prints); omitted or 0 traces until Ctrl-C.
 *
 *	sdtune runs "dtrace -s sdtune-qdepth.d DEVNAME|all SECONDS"
 *	("sdtune trace qdepth [-d DISK] [-t SECONDS]").
 *
 * Output (one marker line before each printa(), parsed by sdtune)
 *	sdtune-agg depth	@depth[statname] = lquantize(...)
 *	sdtune-agg ios		@ios[statname] = count()
 *	sdtune-agg depthsum	@depthsum[statname] = sum(outstanding)
 *	sdtune-agg deepest	@deepest[statname] = max(outstanding)
 *	sdtune-end NS		NS nanoseconds traced
 *
 * Written against the io provider translators of illumos-gate
 * (usr/src/lib/libdtrace/common/io.d), which NexentaStor shares.
 */

#pragma D option quiet
#pragma D option defaultargs
#pragma D option dynvarsize=8m

BEGIN
{
	sdtune_start = timestamp;
	sdtune_ticks = 0;
}

io:::start
/(($$1 == "" || $$1 == "all") && args[1]->dev_name == "sd") ||
    args[1]->dev_statname == $$1/
{
	this->dev = args[1]->dev_statname;
	sdtune_busy[arg0] = 1;
	sdtune_out[this->dev]++;
	this->n = sdtune_out[this->dev];
	@depth[this->dev] = lquantize(this->n, 0, 256, 1);
	@ios[this->dev] = count();
	@depthsum[this->dev] = sum(this->n);
	@deepest[this->dev] = max(this->n);
}

io:::done
/sdtune_busy[arg0]/
{
	this->dev = args[1]->dev_statname;
	sdtune_busy[arg0] = 0;
	sdtune_out[this->dev] -= sdtune_out[this->dev] > 0 ? 1 : 0;
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
	printf("sdtune-agg depth\n");
	printa(@depth);
	printf("sdtune-agg ios\n");
	printa(@ios);
	printf("sdtune-agg depthsum\n");
	printa(@depthsum);
	printf("sdtune-agg deepest\n");
	printa(@deepest);
	printf("sdtune-end %d\n", timestamp - sdtune_start);
}
