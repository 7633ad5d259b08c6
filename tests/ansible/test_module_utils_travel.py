"""The sdtune.illumos collection against adversarial 2026-11-27 F11 and
H2: module options that begin with "-" never become sdtune options, and
the export a module reads on the controller (sdtune_records with
host:) is a regular file read with a bound.  Pure, like
test_module_utils.py: the module_utils file is loaded by its path."""

import importlib.util
import os
import threading

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UTILS = os.path.join(REPO, "plugin", "ansible", "plugins", "module_utils",
                     "sdtune.py")


def _load():
    spec = importlib.util.spec_from_file_location("sdtune_module_utils_t",
                                                  UTILS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


su = _load()
BASE = ["/usr/sbin/sdtune"]


@pytest.mark.parametrize("src", ["--dry-run", "-", "relative.json", ""])
def test_F11_src_must_be_an_absolute_path(src):
    for remote in (False, True):
        with pytest.raises(su.SdtuneFailure) as e:
            su.import_argv(BASE, src, remote)
        assert "src must be an absolute path" in e.value.msg
    assert su.import_argv(BASE, "/var/tmp/x.json", False) == \
        BASE + ["results", "--import", "/var/tmp/x.json", "-o", "json"]


@pytest.mark.parametrize("entry", ["--yes", "-1", "1; rm", "000001x",
                                   " 1"])
def test_F11_journal_entry_is_digits_or_last(entry):
    with pytest.raises(su.SdtuneFailure) as e:
        su.rollback_target([], entry)
    assert "an entry id (digits" in e.value.msg
    with pytest.raises(su.SdtuneFailure):
        su.rollback_argv(BASE, entry, False)


def test_F11_last_is_the_newest_finished_entry():
    entries = [{"id": "000001", "state": "done"},
               {"id": "000002", "state": "done"}]
    assert su.rollback_target(entries, "last") == ("000002", None)
    assert su.rollback_target(entries, "1") == ("000001", None)


def test_H2_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    box = {}

    def read():
        try:
            su.read_export(fifo)
        except su.SdtuneFailure as e:
            box["msg"] = e.msg
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        # Let the blocked open return, so that the test run ends.
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("read_export waited on a FIFO")
    assert box["msg"] == "cannot import '%s': not a regular file" % fifo


def test_H2_a_device_and_a_large_file_are_refused(tmp_path):
    with pytest.raises(su.SdtuneFailure) as e:
        su.read_export("/dev/zero")
    assert e.value.msg == "cannot import '/dev/zero': not a regular file"
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(su.READ_LIMIT + 1)
    with pytest.raises(su.SdtuneFailure) as e:
        su.read_export(str(big))
    assert "larger than 64 MiB" in e.value.msg
    small = tmp_path / "small.json"
    small.write_bytes(b"{}\n")
    assert su.read_export(str(small)) == b"{}\n"
