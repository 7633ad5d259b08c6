# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.sdconf.match: the model of sd_sdconf_id_match() and
sd_blank_cmp() (facts §4), and the 24-byte keys sdtune builds."""

import pytest

from sdtune.sdconf.match import (KEY_LEN, Identity, key_form,
                                 key_from_inquiry, key_matches, make_key,
                                 matches_everything)

# The three devices of facts §4.3, exactly as given there.
A = Identity("ATA     ", "INTEL SSDSC2BA40", "0270")
B = Identity("HGST    ", "HUS724040ALS640 ", "A1C4")
C = Identity("ATA     ", "SAMSUNG MZ7LM480", "403Q")
DEVICES = {"A": A, "B": B, "C": C}


# -- facts §4.3, every worked example -----------------------------------------

WORKED_EXAMPLES = [
    ("ATA     INTEL SSDSC2BA40", "A"),        # stage 1, exact vid+pid
    ("ata     intel ssdsc2ba40", "A"),        # stage 1 is case-insensitive
    ("ATA     INTEL SSDSC2BA400270", "A"),    # runs into inq_revision
    ("ATA     INTEL SSDSC2BA", "A"),          # prefix
    ("ATA", "AC"),                            # every SATA disk
    ("", "ABC"),                              # strncasecmp(..., 0) == 0
    ("ATA INTEL SSDSC2BA40", ""),             # one blank: no stage matches
    (" ATA INTEL SSDSC2BA40 ", "A"),          # stage 2 collapses pad blanks
    (" ATA INTEL ", ""),                      # stage 2 must consume 24 bytes
    (" HGST HUS724040ALS640 ", "B"),          # stage 2, trailing pad absorbed
    ("HGST    HUS724040ALS640 ", "B"),        # stage 1 exact, pad kept
    ("*SSDSC2BA*", "A"),                      # stage 3 at pid offset 6
    ("*ssdsc2ba*", ""),                       # stage 3 is case-sensitive
    ("*BA40*", ""),                           # offset 12 = 16 - 4: excluded
    ("**", "ABC"),                            # n = 0: bcmp of 0 bytes
]


@pytest.mark.parametrize("key,expected", WORKED_EXAMPLES,
                         ids=[repr(k) for k, _ in WORKED_EXAMPLES])
def test_worked_examples_of_facts_4_3(key, expected):
    matched = "".join(name for name, dev in sorted(DEVICES.items())
                      if key_matches(key, dev))
    assert matched == expected


def test_worked_example_devices_are_as_given():
    assert A.inquiry[:28] == "ATA     INTEL SSDSC2BA400270"
    assert B.key == "HGST    HUS724040ALS640 "
    assert C.key == "ATA     SAMSUNG MZ7LM480"
    assert len(A.key) == len(B.key) == len(C.key) == KEY_LEN


# -- stage 1: case-insensitive prefix -----------------------------------------

@pytest.mark.parametrize("key", ["AtA     InTeL sSdSc2bA40",
                                 "ATA     intel SSDSC2BA40",
                                 "ata     INTEL ssdsc2ba400270"])
def test_stage1_ignores_ascii_case(key):
    assert key_matches(key, A)


def test_stage1_is_a_prefix_compare_not_equality():
    assert key_matches("ATA     INTEL SSD", A)
    assert not key_matches("ATA     INTEL SSD", C)
    assert not key_matches("ATA     INTEL SSDSC2BA41", A)


@pytest.mark.parametrize("key,rev,expected", [
    ("ATA     INTEL SSDSC2BA40" + "0", "0270", True),       # 25 chars
    ("ATA     INTEL SSDSC2BA40" + "0", "1270", False),
    ("ATA     INTEL SSDSC2BA40" + "02", "0299", True),      # 26 chars
    ("ATA     INTEL SSDSC2BA40" + "02", "0170", False),
    ("ATA     INTEL SSDSC2BA40" + "027", "0271", True),     # 27 chars
    ("ATA     INTEL SSDSC2BA40" + "0270", "0270", True),    # 28 chars
    ("ATA     INTEL SSDSC2BA40" + "0270", "0271", False),
    ("ATA     INTEL SSDSC2BA40" + "0270", "027", False),    # space padded
    ("ata     intel ssdsc2ba40" + "a1c4", "A1C4", True),    # still no case
])
def test_keys_of_25_to_28_chars_constrain_the_revision(key, rev, expected):
    ident = Identity("ATA     ", "INTEL SSDSC2BA40", rev)
    assert key_matches(key, ident) is expected


def test_key_longer_than_28_compares_vendor_specific_bytes():
    ident = Identity("ATA     ", "INTEL SSDSC2BA40", "0270", "BTTV12345")
    assert key_matches("ATA     INTEL SSDSC2BA400270BTTV", ident)
    assert not key_matches("ATA     INTEL SSDSC2BA400270XXXX", ident)


# -- stage 2: blank-compressed whole-string compare ---------------------------

@pytest.mark.parametrize("key,expected", [
    (" ATA INTEL SSDSC2BA40 ", True),
    ("   ATA   INTEL    SSDSC2BA40   ", True),   # any run of blanks is one
    (" ata intel ssdsc2ba40 ", True),            # letters upper-cased
    (" ATA INTEL ", False),                      # 24 bytes not consumed
    (" ATA INTEL SSDSC2BA ", False),             # not a prefix compare
    (" ATA INTEL SSDSC2BA40 0270 ", False),      # never reaches the rev
    (" ATA INTEL SSDSC2BA40 X ", False),         # key must be used up too
    (" ATA INTEL SSDSC2BA40", False),            # no trailing blank: stage 1
    ("ATA INTEL SSDSC2BA40 ", False),            # no leading blank
    (" ATAINTEL SSDSC2BA40 ", True),             # blanks skipped, not needed
    (" ATAINTELSSDSC2BA40 ", True),
    (" ATA INTEL SSDSC2 BA40 ", True),           # nor are they required
    (" ATA INTEL SSDSC2BA40X ", False),          # in the same places
])
def test_blank_compressed_form(key, expected):
    assert key_matches(key, A) is expected


def test_blank_compressed_form_ignores_the_revision():
    for rev in ("0270", "9999", "    "):
        assert key_matches(" ATA INTEL SSDSC2BA40 ",
                           Identity("ATA     ", "INTEL SSDSC2BA40", rev))


def test_blank_compressed_form_with_blanks_inside_the_product():
    # B's product is "HUS724040ALS640 " and C's "SAMSUNG MZ7LM480".
    assert key_matches(" SAMSUNG MZ7LM480 ", Identity(
        "SAMSUNG ", "MZ7LM480        ", "0001"))
    assert key_matches(" ATA SAMSUNG MZ7LM480 ", C)
    assert not key_matches(" ATA SAMSUNG  ", C)


def test_single_blank_key_matches_only_an_all_blank_identity():
    assert key_matches(" ", Identity(" " * 8, " " * 16, "0001"))
    assert not key_matches(" ", A)


# -- stage 3: wildcard --------------------------------------------------------

@pytest.mark.parametrize("key,ident,expected", [
    ("*SSDSC2BA*", A, True),
    ("*SSDSC2BA*", Identity("FOO     ", "X SSDSC2BA40    ", "0001"), True),
    ("*ssdsc2ba*", A, False),               # case-sensitive (bcmp)
    ("*Ssdsc2ba*", A, False),
    ("*ATA*", A, False),                    # the vendor is not searched
    ("*INTEL*", A, True),                   # offset 0
    ("*BA4*", A, True),                     # offset 12 = 16 - 4 + 0: in range
    ("*BA40*", A, False),                   # ends at the last PID byte
    ("*0*", A, False),                      # last byte only: excluded
    ("*4*", A, True),                       # the earlier '4' at offset 14
    ("*INTEL SSDSC2BA4*", A, True),         # n = 15, i = 0 only
    ("*INTEL SSDSC2BA40*", A, False),       # n = 16: loop runs 0 times
    ("*INTEL SSDSC2BA40X*", A, False),      # n > 16
    ("*ALS640*", B, True),                  # offset 9, ends at byte 15
    ("*ALS640 *", B, False),                # ends at the last (pad) byte
    ("*", A, False),                        # one star is not a wildcard
])
def test_wildcard_form(key, ident, expected):
    assert key_matches(key, ident) is expected


def test_key_form_and_matches_everything():
    assert key_form("ATA     INTEL SSDSC2BA40") == "prefix"
    assert key_form(" ATA INTEL SSDSC2BA40 ") == "blank"
    assert key_form("*SSDSC2BA*") == "wildcard"
    assert key_form("*") == "prefix"
    assert key_form("") == "prefix"
    assert matches_everything("") and matches_everything("**")
    assert not matches_everything("*") and not matches_everything(" ")


# -- Identity -----------------------------------------------------------------

def test_identity_inquiry_bytes_are_contiguous_and_padded():
    ident = Identity("ATA     ", "INTEL SSDSC2BA40", "27", "SER")
    assert ident.inquiry == "ATA     INTEL SSDSC2BA4027  SER         "
    assert len(ident.inquiry) == 8 + 16 + 4 + 12


@pytest.mark.parametrize("vid,pid", [("ATA", "INTEL SSDSC2BA40"),
                                     ("ATA      ", "INTEL SSDSC2BA40"),
                                     ("ATA     ", "INTEL SSDSC2BA4"),
                                     ("ATA     ", "INTEL SSDSC2BA400")])
def test_identity_refuses_unpadded_fields(vid, pid):
    with pytest.raises(ValueError):
        Identity(vid, pid)


# -- make_key -----------------------------------------------------------------

@pytest.mark.parametrize("vid,pid,key", [
    ("ATA", "INTEL SSDSC2BA40", "ATA     INTEL SSDSC2BA40"),
    ("INTEL", "SSDSC2BA40", "INTEL   SSDSC2BA40      "),
    ("HGST", "HUS724040ALS640", "HGST    HUS724040ALS640 "),
    ("SEAGATE ", "ST4000NM0023    ", "SEAGATE ST4000NM0023    "),
    ("VMware", "Virtual disk", "VMware  Virtual disk    "),
])
def test_make_key_pads_to_24(vid, pid, key):
    made = make_key(vid, pid)
    assert made == key
    assert len(made) == KEY_LEN
    assert key_matches(made, Identity(made[:8], made[8:]))


def test_make_key_refuses_vendor_longer_than_8():
    with pytest.raises(ValueError, match="vendor id 'SAMSUNG12' is longer "
                       "than the 8 bytes"):
        make_key("SAMSUNG12", "MZ7LM480")


def test_make_key_refusal_names_the_truncated_product():
    with pytest.raises(ValueError) as info:
        make_key("ATA", "INTEL SSDSC2BA400G3")
    message = str(info.value)
    assert "'INTEL SSDSC2BA400G3'" in message
    assert "sd compares 'INTEL SSDSC2BA40'" in message


@pytest.mark.parametrize("vid,pid", [
    ('AT"A', "INTEL SSDSC2BA40"),
    ("ATA", 'INTEL "SSD"'),
    ("ATA", "INTEL\\SSD"),
    ("A\\TA", "X"),
    ("ATA", "INTEL\tSSD"),
    ("ATA", "INTEL\nSSD"),
    ("ATA", "MODEL\u00e9"),
])
def test_make_key_refuses_quotes_backslash_and_unprintables(vid, pid):
    with pytest.raises(ValueError):
        make_key(vid, pid)


@pytest.mark.parametrize("vid", ["", "   "])
def test_make_key_refuses_empty_vendor(vid):
    with pytest.raises(ValueError, match="empty vendor"):
        make_key(vid, "SSDSC2BA40")


def test_make_key_accepts_exact_lengths():
    assert make_key("ABCDEFGH", "0123456789ABCDEF") == \
        "ABCDEFGH0123456789ABCDEF"


# -- key_from_inquiry ---------------------------------------------------------

def test_key_from_inquiry_keeps_bytes_verbatim():
    assert key_from_inquiry(b"ATA     ", b"INTEL SSDSC2BA40") == \
        "ATA     INTEL SSDSC2BA40"
    assert key_from_inquiry(b"HGST    ", b"HUS724040ALS640 ") == B.key
    # Not trimmed, not upper-cased, non-ASCII kept byte for byte.
    assert key_from_inquiry(b"vendor  ", b"model\xe9\x00         ") == \
        "vendor  model\u00e9\x00         "


@pytest.mark.parametrize("vid,pid", [(b"ATA", b"INTEL SSDSC2BA40"),
                                     (b"ATA     ", b"INTEL SSDSC2BA4"),
                                     (b"ATA      ", b"INTEL SSDSC2BA4"),
                                     (b"ATA     ", b"INTEL SSDSC2BA400")])
def test_key_from_inquiry_refuses_wrong_lengths(vid, pid):
    with pytest.raises(ValueError):
        key_from_inquiry(vid, pid)


def test_key_from_inquiry_matches_its_own_disk_only():
    key = key_from_inquiry(b"ATA     ", b"INTEL SSDSC2BA40")
    assert key_matches(key, A)
    assert not key_matches(key, B) and not key_matches(key, C)
