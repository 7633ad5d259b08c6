# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune disks`: the inventory of the disks behind sd and blkdev, as a
table, `-H`/`-p` rows or JSON.

Fields (the OUTPUT FIELDS of the man page): NAME, DRIVER (sd, or blkdev
for NVMe and virtio disks, on which sd.conf has no effect), KEY (the
24-byte sd-config-list key, quoted in the table so its blanks show; "-"
for a blkdev disk, which has none), SERIAL, FIRMWARE, SIZE, LBS and PBS
(logical and the kernel's physical block size: sd's, or for a blkdev
disk blkdev's, from which ZFS takes the ashift), SSD, POOL, ASHIFT (of
the top-level vdev), FLUSH (does sd send cache flushes), THROTTLE
(max/min), DISKSORT (the last three "-" for a blkdev disk), IN-USE (why
certification would refuse).
"""

import argparse

from ..errors import EXIT_OK
from ..tables import nicenum, render_table, text_or_dash, to_json, yes_no
from .base import Env, json_output

COMMANDS = ("disks",)


def _flush(d, _: bool) -> str:
    s = d.sd.suppress_cache_flush
    return "-" if s is None else ("off" if s else "on")


def _throttle(d, _: bool) -> str:
    if d.sd.throttle_max is None:
        return "-"
    return "%s/%s" % (d.sd.throttle_max, d.sd.throttle_min)


def _num(attr: str):
    return lambda d, p: text_or_dash(getattr(d, attr))


def _key(d, parsable: bool) -> str:
    if d.key is None:
        return "-"
    return d.key if parsable else '"%s"' % d.key


COLUMNS = [
    ("NAME", lambda d, p: d.name),
    ("DRIVER", lambda d, p: d.driver),
    ("KEY", _key),
    ("SERIAL", lambda d, p: text_or_dash(d.serial)),
    ("FIRMWARE", lambda d, p: text_or_dash(d.firmware and
                                           d.firmware.strip())),
    ("SIZE", lambda d, p: text_or_dash(d.size_bytes) if p
     else nicenum(d.size_bytes)),
    ("LBS", _num("logical_block_bytes")),
    ("PBS", _num("physical_block_bytes")),
    ("SSD", lambda d, p: yes_no(d.ssd)),
    ("POOL", lambda d, p: text_or_dash(d.pool)),
    ("ASHIFT", _num("vdev_ashift")),
    ("FLUSH", _flush),
    ("THROTTLE", _throttle),
    ("DISKSORT", lambda d, p: "-" if d.sd.disksort is None else
     ("on" if d.sd.disksort else "off")),
    ("IN-USE", lambda d, p: text_or_dash(d.in_use)),
]


def add_parser(sub, name: str) -> None:
    disks = sub.add_parser("disks", help="inventory of the disks behind "
                           "sd and blkdev: drivers, keys, sizes, block "
                           "sizes, pools, sd values, in-use state")
    disks.add_argument("-H", dest="scripted", action="store_true",
                       help="no header, fields separated by TABs")
    disks.add_argument("-p", dest="parsable", action="store_true",
                       help="exact numbers (bytes)")
    json_output(disks)


def run(args: argparse.Namespace, env: Env) -> int:
    # Imported here: the offline sd.conf tools need none of it.
    from ..inventory.disks import take_inventory
    inv = take_inventory(env.host)
    for note in inv.notes:
        env.err.write("sdtune: warning: %s\n" % note)
    # Its notes (sources that failed) are in the JSON.
    platform = env.tune_site(args).platform
    if args.output == "json":
        env.out.write(to_json({"disks": [d.to_json() for d in inv.disks],
                               "platform": platform.describe()}))
    else:
        env.out.write(render_table(COLUMNS, inv.disks, args.scripted,
                                   args.parsable))
        if not args.scripted:
            env.out.write(platform_line(platform))
    return EXIT_OK


def platform_line(platform) -> str:
    """The platform and the sd.conf the kernel reads, under the table."""
    info = platform.info
    shadowed = platform.copies.shadowed
    return "\nplatform: %s%s; sd.conf: %s%s\n" % (
        info.name, " (%s)" % info.release if info.release else "",
        platform.effective,
        " (shadows %s)" % ", ".join(shadowed) if shadowed else "")
