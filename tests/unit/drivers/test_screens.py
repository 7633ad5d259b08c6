# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The screens every driver's proposals pass (drivers/screens.py):
each returns what it holds back and warns about, in the words of the
driver it screens for."""

from sdtune.drivers.planning import Overrides
from sdtune.drivers.screens import ashift_hold, firmware_screen, \
    operator_value
from tests import builders

KEY = builders.KEY


def proposes(rec):
    return {t: str(v) for t, v in rec.recommended.items()}


def screen(records, disks, **options):
    return firmware_screen(KEY, records, disks, "disks of this key",
                           proposes, Overrides(**options))


def test_records_of_a_running_firmware_pass():
    rec = builders.cert_record(native=4096)
    assert screen([rec], [builders.disk()]) == ([rec], [], [])


def test_installed_firmware_unknown_lets_every_record_pass():
    rec = builders.cert_record(firmware="OTHER", native=4096)
    assert screen([rec], [builders.disk(firmware="")]).usable == [rec]


def test_a_unit_of_another_firmware_is_held_once_by_its_latest_record():
    old = builders.cert_record(firmware="0090", when=1.0, native=4096)
    new = builders.cert_record(firmware="0095", when=2.0, native=8192)
    usable, held, warnings = screen([old, new], [builders.disk()])
    assert usable == [] and warnings == []
    (h,) = held
    assert (h.key, h.tunable, h.value) == (KEY, "physical-block-size",
                                           "8192")
    assert "measured firmware 0095" in h.reason
    assert "the installed disks of this key run firmware 0100" in h.reason
    assert h.reason.endswith("--allow-firmware-mismatch to use it")


def test_a_unit_with_a_record_of_a_running_firmware_holds_nothing():
    old = builders.cert_record(firmware="0090", native=4096)
    now = builders.cert_record(when=2.0, native=4096)
    assert screen([old, now], [builders.disk()]) == ([now], [], [])


def test_a_record_naming_no_firmware_is_of_an_unknown_one():
    rec = builders.cert_record(firmware=None, native=4096)
    assert screen([rec], [builders.disk()]).usable == []


def test_a_stale_record_that_proposes_nothing_is_said():
    rec = builders.cert_record(firmware="0090", recommended={})
    usable, held, (warning,) = screen([rec], [builders.disk()])
    assert usable == held == []
    assert warning.endswith(": not used (certify it again, or "
                            "--allow-firmware-mismatch)")


def test_the_override_uses_every_record_with_a_warning():
    rec = builders.cert_record(firmware="0090", native=4096)
    usable, held, (warning,) = screen([rec], [builders.disk()],
                                      allow_firmware_mismatch=True)
    assert usable == [rec] and held == []
    assert warning.endswith("used (--allow-firmware-mismatch)")


def test_ashift_hold():
    bound = (9, "c1t1d0 is in pool tank, vdev ashift 9")
    hold = ashift_hold(4096, "physical-block-size 4096", "a disk of this "
                       "model", bound, None, Overrides())
    assert hold == "c1t1d0 is in pool tank, vdev ashift 9: with " \
        "physical-block-size 4096, zpool replace/attach of this model " \
        "into that vdev fails (EDOM); --allow-ashift-mismatch to override"
    assert ashift_hold(4096, "x", "y", (12, "ashift 12"), None,
                       Overrides()) is None
    assert ashift_hold(512, "x", "y", bound, "zpool failed",
                       Overrides()) is None
    unknown = ashift_hold(4096, "a 4096-byte physical block",
                          "a namespace of this model", None,
                          "zpool status failed", Overrides())
    assert unknown.startswith("pool membership and vdev ashift are unknown "
                              "(zpool status failed): a namespace of this "
                              "model may be in an ashift=9 vdev, where a "
                              "4096-byte physical block makes")
    assert ashift_hold(4096, "x", "y", bound, "z", Overrides(
        allow_ashift_mismatch=True)) is None


def test_operator_value_is_kept_and_said():
    held, warning = operator_value("M", "min-phys-block-size", "8192",
                                   "4096", "certification X", "nvme.conf",
                                   "model")
    assert held.reason == "nvme.conf already sets min-phys-block-size:8192 " \
        "for this model; the operator's value is kept"
    assert warning == "M: keeping the operator's min-phys-block-size:8192 " \
        "(certification X suggests 4096)"
