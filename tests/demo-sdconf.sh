#!/bin/sh
# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

# make demo-sdconf: sdtune's sd.conf tools on a NexentaStor-shaped sd.conf.
#
# Shows, on a scratch copy: what the kernel would ignore in a hand-edited
# sd.conf (check), what sd makes of each pair (show), a safe edit as a
# diff and then for real (set --write), and the semantic diff.  Nothing
# outside a temporary directory is touched.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
sh tests/deps.sh
SDTUNE_PYTHON=$(command -v "$PYTHON")
export SDTUNE_PYTHON

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# The shape of the sd.conf NexentaStor 5 ships (our own text).
{
	printf '#\n# sd.conf for the sdtune demo\n#\n'
	t=0
	while [ $t -lt 16 ]; do
		printf 'name="sd" class="scsi" target=%d lun=0;\n' $t
		t=$((t + 1))
	done
	printf 'name="sd" class="scsi-self-identifying";\n'
	printf 'ddi-forceattach=1;\nddi-devid-registrant=1;\n\n'
} >"$work/base.conf"
vmware() {
	printf 'sd-config-list=\n'
	printf '\t# timeouts for virtual disks\n'
	printf '\t"VMware  Virtual disk", "io-time:180,slow-io-threshold:0";\n'
}
{ cat "$work/base.conf"; vmware; } >"$work/sd.conf"

# The same file "tuned by hand" the way guides often suggest, with the
# usual mistakes: one blank between vendor and product, a misspelt name,
# a throttle the kernel's check undoes, 1 for true, the shipped list left
# below as a second statement (the kernel uses only the first), and a
# typographic quote pasted from a wiki.
{
	cat "$work/base.conf"
	printf '# added for the new SSDs\n'
	printf 'sd-config-list = "ATA INTEL SSDSC2BA40", '
	printf '"physical-block-size:4096, min-throttle:2, throttle-max:4",\n'
	printf '\t"ATA     SAMSUNG MZ7LM480", "cache-nonvolatile:1";\n'
	vmware
	printf 'ssd-note = \342\200\234pasted from the wiki\342\200\235;\n'
} >"$work/handmade.conf"

step() {
	shown=""
	for a in "$@"; do
		case $a in
		*" "*) shown="$shown \"$a\"" ;;
		*) shown="$shown $a" ;;
		esac
	done
	printf '\n$ sdtune%s\n' "$shown" | sed "s|$work/||g"
	# A refused step is part of the demo: show it and go on.
	bin/sdtune "$@" 2>&1 | sed "s|$work/||g" || true
}

step sdconf check "$work/handmade.conf"
step sdconf show "$work/sd.conf"
step sdconf set "$work/sd.conf" --vid ATA --pid "INTEL SSDSC2BA40" \
    physical-block-size=4096 cache-nonvolatile=true
step sdconf set "$work/sd.conf" --vid ATA --pid "INTEL SSDSC2BA40" \
    throttle-max=4
cp "$work/sd.conf" "$work/sd.conf.orig"
step sdconf set "$work/sd.conf" --vid ATA --pid "INTEL SSDSC2BA40" \
    physical-block-size=4096 cache-nonvolatile=true \
    throttle-min=2 throttle-max=32 --write
step sdconf check "$work/sd.conf"
step sdconf show "$work/sd.conf"
step sdconf diff "$work/sd.conf.orig" "$work/sd.conf"
step sdconf unset "$work/sd.conf" --vid ATA --pid "INTEL SSDSC2BA40" \
    --write
cmp -s "$work/sd.conf" "$work/sd.conf.orig"
printf '\nAfter unset the file is byte-identical to the original.\n'
