# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Match sd-config-list keys against a disk's INQUIRY identity.

A model of `sd_sdconf_id_match()` and `sd_blank_cmp()` in sd.c (facts §4):
a case-insensitive prefix compare over vendor+product(+revision...),
a blank-compressed whole-string compare for keys that start and end with
a blank, and a case-sensitive `*substring*` search inside the product id
(with the kernel's off-by-one).  Also builds the exact 24-byte key from
INQUIRY bytes.  Pure: no I/O.
"""

from dataclasses import dataclass
from typing import Optional

VID_LEN = 8
PID_LEN = 16
REV_LEN = 4
KEY_LEN = VID_LEN + PID_LEN


@dataclass(frozen=True)
class Identity:
    """The INQUIRY bytes sd compares against, exactly as the disk sends
    them (blank padded, not NUL terminated)."""

    vid: str            # 8 bytes
    pid: str            # 16 bytes
    rev: str = "    "   # 4 bytes
    serial: str = ""    # vendor-specific area (12 bytes), rarely relevant

    def __post_init__(self) -> None:
        if len(self.vid) != VID_LEN or len(self.pid) != PID_LEN:
            raise ValueError("vendor must be 8 and product 16 characters")

    @property
    def inquiry(self) -> str:
        """The contiguous bytes starting at inq_vid."""
        return self.vid + self.pid + self.rev.ljust(REV_LEN)[:REV_LEN] + \
            self.serial.ljust(12)[:12]

    @property
    def key(self) -> str:
        return self.vid + self.pid

    @classmethod
    def of_key(cls, key: str) -> "Identity":
        """The disk a 24-byte sd-config-list key (or a shorter one,
        blank-padded) was written for; the one key to identity rule."""
        return cls(key[:VID_LEN], key[VID_LEN:VID_LEN + PID_LEN].ljust(
            PID_LEN))

    @classmethod
    def of_inquiry(cls, vid: str, pid: str,
                   rev: Optional[str]) -> "Identity":
        """A disk's identity from its INQUIRY fields (revision blank
        padded to 4 bytes when unknown)."""
        return cls(vid, pid, (rev or "").ljust(REV_LEN))


def make_key(vid: str, pid: str) -> str:
    """The 24-character key for a vendor and product as INQUIRY has them.

    Raises ValueError when a field is longer than its INQUIRY field, so
    an operator never silently gets a key that matches nothing.
    """
    if not vid.strip():
        raise ValueError("empty vendor id")
    if len(vid) > VID_LEN:
        raise ValueError("vendor id '%s' is longer than the 8 bytes of "
                         "INQUIRY; for SATA disks the vendor is 'ATA'" % vid)
    if len(pid) > PID_LEN:
        raise ValueError("product id '%s' is longer than the 16 bytes of "
                         "INQUIRY; sd compares '%s'" % (pid, pid[:PID_LEN]))
    for ch in vid + pid:
        if not " " <= ch <= "~" or ch in '"\\':
            raise ValueError("vendor/product contain %r, which INQUIRY "
                             "strings cannot" % ch)
    return vid.ljust(VID_LEN) + pid.ljust(PID_LEN)


def key_from_inquiry(vid: bytes, pid: bytes) -> str:
    """Key from the raw INQUIRY vendor (8) and product (16) bytes."""
    if len(vid) != VID_LEN or len(pid) != PID_LEN:
        raise ValueError("INQUIRY vendor is 8 bytes and product 16")
    return (vid + pid).decode("latin-1")


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                             "abcdefghijklmnopqrstuvwxyz")


def _fold(s: str) -> str:
    """The kernel's case folding: ASCII letters only."""
    return s.translate(_ASCII_LOWER)


def _prefix_match(inquiry: str, key: str) -> bool:
    # strncasecmp(inq_vid, key, strlen(key)); an empty key matches anything.
    if len(key) > len(inquiry):
        return False
    return _fold(inquiry[:len(key)]) == _fold(key)


def _blank_match(ident: Identity, key: str) -> bool:
    """sd_blank_cmp(): runs of blanks compare as one; the whole 24 bytes
    of vendor+product must be consumed and the key must end there."""
    vp = ident.key
    ikey = _fold(key)
    ivp = _fold(vp)
    p1 = p2 = 0
    cnt = KEY_LEN
    while True:
        while p1 < len(key) and key[p1] == " ":
            p1 += 1
        while cnt != 0 and vp[p2] == " ":
            p2 += 1
            cnt -= 1
        if cnt == 0 or p1 >= len(key) or ikey[p1] != ivp[p2]:
            break
        while cnt > 0 and p1 < len(key) and ikey[p1] == ivp[p2]:
            p1 += 1
            p2 += 1
            cnt -= 1
    return p1 >= len(key) and cnt == 0


def _wildcard_match(ident: Identity, key: str) -> bool:
    sub = key[1:-1]
    n = len(sub)
    if n > PID_LEN:
        return False
    # The kernel's loop stops one short: a substring ending at the last
    # product byte is never found (facts §4.2).
    for i in range(PID_LEN - n):
        if ident.pid[i:i + n] == sub:
            return True
    return False


def key_matches(key: str, ident: Identity) -> bool:
    """True when sd applies a pair with this key to the disk."""
    if _prefix_match(ident.inquiry, key):
        return True
    if key and key[0] == " " and key[-1] == " ":
        if _blank_match(ident, key):
            return True
    if len(key) >= 2 and key[0] == "*" and key[-1] == "*":
        if _wildcard_match(ident, key):
            return True
    return False


def key_form(key: str) -> str:
    """Which of the kernel's three compare forms a key selects."""
    if len(key) >= 2 and key[0] == "*" and key[-1] == "*":
        return "wildcard"
    if key[:1] == " " and key[-1:] == " ":
        return "blank"
    return "prefix"


def matches_everything(key: str) -> bool:
    """Keys that match every disk sd attaches: "" and "**"."""
    return key == "" or key == "**"


def broad_prefix(key: str) -> Optional[str]:
    """For a prefix key shorter than vendor+product: what it covers."""
    if key_form(key) != "prefix" or len(key) >= KEY_LEN:
        return None
    if len(key) <= VID_LEN:
        vendor = key.rstrip(" ")
        if key.upper().startswith("ATA"):
            return "every SATA disk (vendor 'ATA')"
        return "every disk whose vendor starts with '%s'" % vendor
    return "every product starting with '%s'" % key[VID_LEN:]
