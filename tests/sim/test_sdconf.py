# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated kernel's reading of sd.conf (facts §2-§4): the
driver.conf reader, the first sd-config-list winning, odd lists, silent
invalid tuples, every matching pair in order, ddi_strtol, the legacy
version-1 format, and the VID/PID matching table of §4.3."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.sim import driverconf, sdconfig  # noqa: E402
from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

INTEL = t.INTEL["name"]
HEAD = 'name="sd" class="scsi-self-identifying";\n'


def _app(tmp_path, text, disks=None, flavour="nexenta"):
    return Appliance.build(t.facts_host(disks=disks or [t.INTEL],
                                        text=text, flavour=flavour),
                           str(tmp_path))


def _f(app, name=INTEL):
    return t.unit_fields(app, name)


# ---------------------------------------------------------------- reader

def test_globals_and_specs():
    p = driverconf.parse(b'name="sd" class="scsi" target=0 lun=0;\n'
                         b'ddi-forceattach=1;\n'
                         b'sd-config-list=\n\t# a comment\n'
                         b'\t"A", "b:1",\n\t"C", "d:2";\n')
    assert p.warnings == []
    assert p.globals == [["ddi-forceattach", "int", [1]],
                         ["sd-config-list", "string", ["A", "b:1", "C",
                                                       "d:2"]]]
    assert p.specs[0]["name"] == "sd" and p.specs[0]["class"] == "scsi"


@pytest.mark.parametrize("data,values", [
    (b'x="a\\"b", "\\\\", "\\101\\60";', ['a"b', "\\", "A0"]),
    (b'x="a#b,c:d";', ["a#b,c:d"]),
    (b'x="ab\\0cd";', ["ab"]),
])
def test_string_escapes(data, values):
    assert driverconf.parse(data).globals == [["x", "string", values]]


@pytest.mark.parametrize("token,value", [
    ("10", 10), ("0x10", 16), ("010", 8), ("-1", -1), ("~0", 0), ("~1", -2),
    ("0xffffffff", -1), ("4294967296", 0), ("089", None), ("0", 0)])
def test_getvalue(token, value):
    assert driverconf.getvalue(token) == value


def test_missing_quote_and_line_numbers():
    p = driverconf.parse(b'a=1;\nb="open\nc=2;\n')
    assert 'Missing " on line 2 of /kernel/drv/sd.conf' in p.warnings
    assert ["c", "int", [2]] in p.globals


def test_unexpected_tokens_and_recovery():
    p = driverconf.parse(b'a=1 b=2;\n= c=3;\nd="x" 4;\ne=5;\n')
    assert ["a", "int", [1]] in p.globals and ["b", "int", [2]] in p.globals
    assert "Unexpected token '=' on line 2 of /kernel/drv/sd.conf" \
        in p.warnings
    assert ["e", "int", [5]] in p.globals


def test_byte_ff_ends_the_file():
    p = driverconf.parse(b'a=1;\n\xff\nb=2;\n')
    assert p.globals == [["a", "int", [1]]]


def test_mixed_types_and_invalid_names():
    p = driverconf.parse(b'a="x", 1;\nb@c=1;\nd;\ne\\@f=1;\n')
    # '@' is an unexpected token: the statement is dropped and parsing
    # goes on at "c=1;"; an escaped '@' makes an invalid property name.
    assert p.globals == [["c", "int", [1]], ["d", "boolean", [0]]]
    # The comma states are typed, so a mixed list stops at the token.
    assert "Unexpected token '1' on line 1 of /kernel/drv/sd.conf" \
        in p.warnings
    assert "Unexpected token '@' on line 2 of /kernel/drv/sd.conf" \
        in p.warnings
    assert "invalid property name 'e@f'" in p.warnings


def test_long_string_is_unexpected():
    p = driverconf.parse(b'a="' + b"x" * 1023 + b'";\nb="' + b"y" * 1024
                         + b'";\n')
    assert p.globals[0] == ["a", "string", ["x" * 1023]]
    assert not any(g[0] == "b" for g in p.globals)


def test_missing_name_and_missing_class():
    p = driverconf.parse(b'class="scsi" x=1;\nname="sd" x=1;\n')
    assert p.globals == [] and p.specs == []
    assert any(w.startswith("missing name attribute") for w in p.warnings)
    assert any(w.startswith("missing parent or class") for w in p.warnings)


# ---------------------------------------------------------------- sd rules

def test_first_list_wins(tmp_path):
    app = _app(tmp_path, HEAD + 'sd-config-list="%s", "throttle-max:16";\n'
               'sd-config-list="%s", "throttle-max:64";\n'
               % (t.INTEL_KEY, t.INTEL_KEY))
    assert _f(app)["un_saved_throttle"] == 16


def test_repeated_in_one_statement_replaces(tmp_path):
    app = _app(tmp_path, HEAD + 'sd-config-list="%s", "throttle-max:16" '
               'sd-config-list="%s", "throttle-max:64";\n'
               % (t.INTEL_KEY, t.INTEL_KEY))
    assert _f(app)["un_saved_throttle"] == 64


def test_missing_semicolon_moves_list_to_node_spec(tmp_path):
    app = _app(tmp_path, 'sd-config-list="%s", "throttle-max:16"\n'
               'name="sd" class="scsi" target=0 lun=0;\n' % t.INTEL_KEY)
    assert _f(app)["un_saved_throttle"] == 256


def test_odd_list_ignored_with_a_warning_per_unit(tmp_path):
    app = _app(tmp_path, HEAD + 'sd-config-list="%s", "throttle-max:16", '
               '"extra";\n' % t.INTEL_KEY,
               disks=[t.INTEL, t.HGST_6F8D])
    assert _f(app)["un_saved_throttle"] == 256
    assert app.messages().count(
        "sd-config-list should show as pairs of strings.") == 2
    assert "(sd1):\n\tsd-config-list should" in app.messages()


def test_invalid_tuples_silently_ignored(tmp_path):
    app = _app(tmp_path, HEAD + 'sd-config-list="%s", "cache-nonvolatile:1,'
               ' min-throttle:2, physical-block-size:3000, disksort:yes, '
               'throttle-max:x, retries-busy:7";\n' % t.INTEL_KEY)
    f = _f(app)
    assert (f["un_f_suppress_cache_flush"], f["un_min_throttle"],
            f["un_phy_blocksize"], f["un_saved_throttle"],
            f["un_busy_retry_count"]) == (0, 8, 512, 256, 7)
    assert "WARNING" not in app.messages()


def test_all_matching_pairs_in_order(tmp_path):
    app = _app(tmp_path, HEAD + 'sd-config-list=\n'
               '\t"ATA", "throttle-max:16, retries-busy:3",\n'
               '\t"%s", "throttle-max:32",\n'
               '\t"ata     intel", "retries-busy:4",\n'
               '\t"HGST", "throttle-max:8";\n' % t.INTEL_KEY)
    f = _f(app)
    assert (f["un_saved_throttle"], f["un_busy_retry_count"]) == (32, 4)


def test_syntax_errors_keep_partial_parse_and_log(tmp_path):
    app = _app(tmp_path, HEAD + 'sd-config-list="%s", "throttle-max:16";\n'
               'bad = = 1;\n' % t.INTEL_KEY)
    assert _f(app)["un_saved_throttle"] == 16
    assert "WARNING: Unexpected token '=' on line 3 of " \
        "/kernel/drv/sd.conf" in app.messages()
    assert t.run(app, "update_drv", "-vf", "sd")[2] == 0


def test_missing_sd_conf(tmp_path):
    app = _app(tmp_path, HEAD)
    os.unlink(os.path.join(app.root, "kernel/drv/sd.conf"))
    app.reboot()
    assert _f(app)["un_saved_throttle"] == 256


def test_wildcard_node_spec_properties_apply(tmp_path):
    app = _app(tmp_path, 'name="sd" class="scsi-self-identifying" '
               'sd-config-list="%s", "throttle-max:16";\n' % t.INTEL_KEY)
    assert _f(app)["un_saved_throttle"] == 16


def test_version_1_lists(tmp_path):
    disk = {"name": "c0t1d0", "instance": 0,
            "phys_path": "/pci@0,0/pci1000,30@10/sd@1,0",
            "vid": "SEAGATE", "pid": "ST32550W", "blocks": 4194304}
    text = HEAD + ('sd-config-list = "SEAGATE ST32550W", "short long";\n'
                   'short = 1, 0x1, 32;\nlong = 1, 0x1, 24, 0;\n')
    app = _app(tmp_path, text, disks=[disk])
    assert _f(app, "c0t1d0")["un_saved_throttle"] == 24
    assert "Data property list short size is incorrect." in app.messages()
    text = HEAD + ('sd-config-list = "SEAGATE ST32550W", "bad";\n'
                   'bad = 2, 0x1, 32, 0;\n')
    app = _app(tmp_path / "2", text, disks=[disk])
    assert "data property bad version 0x2 is invalid." in app.messages()


def test_version_1_cache_is_nv_with_all_slots(tmp_path):
    disk = {"name": "c0t1d0", "instance": 0,
            "phys_path": "/pci@0,0/pci1000,30@10/sd@1,0",
            "vid": "SEAGATE", "pid": "ST32550W", "blocks": 4194304}
    slots = ", ".join(["0"] * 18 + ["1"])
    app = _app(tmp_path, HEAD + 'sd-config-list = "SEAGATE ST32550W", '
               '"nv";\nnv = 1, 0x40000, %s;\n' % slots, disks=[disk])
    assert _f(app, "c0t1d0")["un_f_suppress_cache_flush"] == 1


# ---------------------------------------------------------------- pieces

A = "ATA     INTEL SSDSC2BA400270"
B = "HGST    HUS724040ALS640 A1C4"
C = "ATA     SAMSUNG MZ7LM480403Q"


@pytest.mark.parametrize("ident,matches", [
    ("ATA     INTEL SSDSC2BA40", "A"), ("ata     intel ssdsc2ba40", "A"),
    ("ATA     INTEL SSDSC2BA400270", "A"), ("ATA     INTEL SSDSC2BA", "A"),
    ("ATA", "AC"), ("", "ABC"), ("ATA INTEL SSDSC2BA40", ""),
    (" ATA INTEL SSDSC2BA40 ", "A"), (" ATA INTEL ", ""),
    (" HGST HUS724040ALS640 ", "B"), ("HGST    HUS724040ALS640 ", "B"),
    ("*SSDSC2BA*", "A"), ("*ssdsc2ba*", ""), ("*BA40*", ""), ("**", "ABC"),
    ("ATA     INTEL SSDSC2BA400271", ""),
])
def test_matching_table_of_the_facts(ident, matches):
    got = "".join(k for k, inq in (("A", A), ("B", B), ("C", C))
                  if sdconfig.id_match(inq, ident))
    assert got == matches


@pytest.mark.parametrize("text,value", [
    ("4096", 4096), ("0x1000", 4096), ("0X1000", 4096), ("010", 8),
    ("04096", 32), ("4096abc", 4096), ("4k", 4), ("-5", -5), ("+7", 7),
    (" 12", 12), ("abc", None), ("", None), ("0x", 0), ("0xg", 0),
    ("99999999999999999999", None), ("-9223372036854775808",
                                     -9223372036854775808)])
def test_ddi_strtol(text, value):
    assert sdconfig.ddi_strtol(text) == value


@pytest.mark.parametrize("tunables,pairs", [
    ("throttle-max:32, cache-nonvolatile:true",
     [("throttle-max", "32"), ("cache-nonvolatile", "true")]),
    ("throttle-max: 32 junk", [("throttle-max", "32")]),
    ("a:b:c", [("a", "b")]),
    ("throttle-max:32, cache-nonvolatile true",
     [("throttle-max", "32"), ("cache-nonvolatile", "true")]),
    (",,disksort:false,,", [("disksort", "false")]),
    ("novalue:", []),
])
def test_decode_tunables(tunables, pairs):
    assert sdconfig.decode_tunables(tunables) == pairs
