"""`sdtune disks`: the inventory as a table, `-H`/`-p` rows or JSON.

Fields (the OUTPUT FIELDS of the man page): NAME, KEY (the 24-byte
sd-config-list key, quoted in the table so its blanks show), SERIAL,
FIRMWARE, SIZE, LBS and PBS (logical and the kernel's physical block
size), SSD, POOL, ASHIFT (of the top-level vdev), FLUSH (does sd send
cache flushes), THROTTLE (max/min), DISKSORT, IN-USE (why certification
would refuse).
"""

from typing import TextIO

from .errors import EXIT_OK
from .host import Host
from .inventory.disks import Disk, take_inventory
from .report import nicenum, render_table, text_or_dash, to_json, yes_no


def _flush(d: Disk, _: bool) -> str:
    s = d.sd.suppress_cache_flush
    return "-" if s is None else ("off" if s else "on")


def _throttle(d: Disk, _: bool) -> str:
    if d.sd.throttle_max is None:
        return "-"
    return "%s/%s" % (d.sd.throttle_max, d.sd.throttle_min)


def _num(attr: str):
    return lambda d, p: text_or_dash(getattr(d, attr))


def _key(d: Disk, parsable: bool) -> str:
    if d.key is None:
        return "-"
    return d.key if parsable else '"%s"' % d.key


COLUMNS = [
    ("NAME", lambda d, p: d.name),
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


def cmd_disks(host: Host, out: TextIO, err: TextIO, scripted: bool = False,
              parsable: bool = False, as_json: bool = False) -> int:
    inv = take_inventory(host)
    for note in inv.notes:
        err.write("sdtune: warning: %s\n" % note)
    if as_json:
        out.write(to_json({"disks": [d.to_json() for d in inv.disks]}))
    else:
        out.write(render_table(COLUMNS, inv.disks, scripted, parsable))
    return EXIT_OK
