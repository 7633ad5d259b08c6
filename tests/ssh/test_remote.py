# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune --host DEST` against a real OpenSSH server on 127.0.0.1 that
serves a simulated appliance (tests/ssh/sshd.py, tests/sim).

The same flow runs on two identical appliances, one as it always did and
one over SSH, and every command must print the same, exit the same and
leave the same sd.conf.  Then what can go wrong on the way: every
connection failure is one line naming the host and changes nothing, and
a local and a remote apply exclude each other through the appliance's
lock."""

import json
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.adversarial.support import inject_record  # noqa: E402
from tests.e2e.plans import subset_plans  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

pytestmark = pytest.mark.sshd

INTEL = "ATA     INTEL SSDSC2BA40"
ENGINE = os.path.join(REPO, "plugin", "engine", "sdio")
ENV = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
       "SDTUNE_ZONENAME_CMD": "/nonexistent"}


def remote_config(app, sshd, extra=""):
    """The appliance's sdtune.conf, with [ssh] pointing at the test
    server's client configuration, and EXTRA lines for that section."""
    path = sshd.sdtune_config(app.config, os.path.join(app.dir,
                                                       "remote.conf"))
    with open(path, "a") as f:
        f.write(extra)
    return path


def sd_conf(app):
    with open(os.path.join(app.root, "kernel", "drv", "sd.conf"), "rb") as f:
        return f.read()


def masked(app, text):
    """Output with what differs between two appliances by construction
    (their directories, the clock) replaced."""
    text = text.replace(app.root, "ROOT").replace(app.dir, "DIR")
    text = re.sub(r'"(created|time)": [0-9.]+', r'"\1": TIME', text)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)


@pytest.fixture
def pair(tmp_path, sshd):
    """Two identical appliances: (local, remote, remote's config)."""
    local = Appliance.build("small-nexenta", str(tmp_path / "local"))
    remote = Appliance.build("small-nexenta", str(tmp_path / "remote"))
    return local, remote, remote_config(remote, sshd)


def both(pair, sshd, *args):
    local, remote, config = pair
    a = local.sdtune(*args)
    b = remote.sdtune("--host", sshd.alias, *args, config=config)
    return a, b


def assert_same(pair, a, b):
    local, remote, _ = pair
    assert (a.returncode, masked(local, a.stdout), masked(local, a.stderr)) \
        == (b.returncode, masked(remote, b.stdout),
            masked(remote, b.stderr))


def test_the_whole_flow_prints_the_same_over_ssh(pair, sshd):
    local, remote, _ = pair
    for app in (local, remote):
        inject_record(app, INTEL, {"physical-block-size": 4096,
                                   "cache-nonvolatile": True,
                                   "throttle-max": 32, "disksort": False})
    steps = [("disks",), ("disks", "-o", "json"), ("results",),
             ("plan",), ("plan", "-o", "json"), ("apply", "--yes"),
             ("verify",), "reboot", ("verify", "-o", "json"), ("audit",),
             ("audit", "-o", "json"), ("history", "-H"),
             ("rollback", "--last", "--yes"), ("verify",),
             ("sdconf", "show", "/kernel/drv/sd.conf")]
    for step in steps:
        if step == "reboot":
            local.reboot()
            remote.reboot()
            continue
        if step[0] == "sdconf":
            # Files named on the command line are the appliance's.
            a = local.sdtune(*step[:-1], os.path.join(local.root,
                                                      "kernel/drv/sd.conf"))
            b = remote.sdtune("--host", sshd.alias, *step[:-1],
                              os.path.join(remote.root,
                                           "kernel/drv/sd.conf"),
                              config=pair[2])
        else:
            a, b = both(pair, sshd, *step)
        assert_same(pair, a, b)
        assert sd_conf(local) == sd_conf(remote), step
    hist = json.loads(both(pair, sshd, "history", "-o", "json")[1].stdout)
    assert [e["action"] for e in hist["entries"]] == ["apply", "rollback"]


def test_a_local_and_a_remote_apply_exclude_each_other(tmp_path, sshd):
    """Four local and four remote applies of different plans, started
    together: exactly one wins.  Both sides take the appliance's lock,
    the same POSIX record lock, held there by the engine for the remote
    ones."""
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    config = remote_config(app, sshd)
    inject_record(app, INTEL, {"throttle-max": 32, "throttle-min": 8,
                               "disksort": False, "cache-nonvolatile": True})
    plans = subset_plans(app, tmp_path, 8)
    texts = [json.load(open(p))["new_text"].encode() for p in plans]
    launcher = os.path.join(REPO, "bin", "sdtune")
    argvs = [[launcher, "-R", app.root, "--config", app.config]
             if i % 2 else
             [launcher, "--host", sshd.alias, "-R", app.root, "--config",
              config] for i in range(8)]
    procs = [subprocess.Popen(a + ["apply", p, "--yes"], env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for a, p in zip(argvs, plans)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        results.append((p.returncode, err))
    codes = [rc for rc, _ in results]
    assert codes.count(0) == 1, results
    assert all(rc == 3 for rc in codes if rc != 0), results
    for rc, err in results:
        if rc:
            assert "changed since" in err or \
                "locked by another sdtune process" in err, err
    assert sd_conf(app) == texts[codes.index(0)]      # no lost update
    hist = json.loads(app.sdtune("history", "-o", "json").stdout)
    assert [e["state"] for e in hist["entries"]] == ["done"]


# -- what can go wrong on the way -------------------------------------------

def _refused(app, proc, before, words, code=4):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("sdtune: cannot "), lines
    assert words in lines[0], lines
    assert "Traceback" not in proc.stderr
    assert sd_conf(app) == before


def test_unreachable_host(tmp_path, sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    # A port nothing listens on: the server is stopped elsewhere, so
    # take a free one the same way sshd.py does.
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = remote_config(app, sshd)
    before = sd_conf(app)
    proc = app.sdtune("--host", "ssh://%s@127.0.0.1:%d" % (sshd.user, port),
                      "apply", "--yes", config=config)
    _refused(app, proc, before, "127.0.0.1:%d" % port)
    assert "refused" in proc.stderr


def test_wrong_key(tmp_path, sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    bad = sshd.sdtune_config(app.config, os.path.join(app.dir, "bad.conf"),
                             sshd.wrong_key_config())
    before = sd_conf(app)
    proc = app.sdtune("--host", sshd.alias, "disks", config=bad)
    _refused(app, proc, before, "cannot reach 'appliance': permission "
             "denied")


def test_unknown_host_key_is_a_refusal(tmp_path, sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    bad = sshd.sdtune_config(app.config, os.path.join(app.dir, "bad.conf"),
                             sshd.unknown_host_config())
    before = sd_conf(app)
    proc = app.sdtune("--host", sshd.alias, "apply", "--yes", config=bad)
    _refused(app, proc, before, "host key is not known", 3)


def test_changed_host_key_is_a_refusal(tmp_path, fresh_sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    config = remote_config(app, fresh_sshd)
    assert app.sdtune("--host", fresh_sshd.alias, "history",
                      config=config).returncode == 0
    fresh_sshd.regenerate_host_key()
    before = sd_conf(app)
    proc = app.sdtune("--host", fresh_sshd.alias, "apply", "--yes",
                      config=config)
    _refused(app, proc, before, "host key has changed", 3)


def test_ssh_missing(tmp_path, sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    config = remote_config(app, sshd, "ssh = /nonexistent/ssh\n")
    before = sd_conf(app)
    proc = app.sdtune("--host", sshd.alias, "disks", config=config)
    _refused(app, proc, before, "/nonexistent/ssh")


def test_engine_missing_on_the_appliance(tmp_path, sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    config = remote_config(app, sshd)
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(re.sub(r"(?m)^sdio = .*$", "sdio = /nonexistent/sdio",
                       text))
    before = sd_conf(app)
    proc = app.sdtune("--host", sshd.alias, "apply", "--yes",
                      config=config)
    _refused(app, proc, before, "engine is not installed at "
             "/nonexistent/sdio")


def test_a_destination_that_looks_like_an_option(tmp_path, sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    proc = app.sdtune("--host=-oProxyCommand=touch /tmp/x", "disks",
                      config=remote_config(app, sshd))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("sdtune: cannot reach '-oProxyCommand")


def test_remote_disk_full(tmp_path, sshd):
    """The appliance's file system refuses the data (ENOSPC at the
    engine's first fsync, injected by strace around the engine there):
    one line, exit 4, sd.conf and the journal as they were."""
    strace = "/usr/bin/strace"
    if not os.access(strace, os.X_OK):
        pytest.skip("strace is not installed (tests/deps.sh installs it)")
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    inject_record(app, INTEL, {"physical-block-size": 4096})
    config = remote_config(app, sshd)
    with open(config) as f:
        text = f.read()
    engine = re.search(r"(?m)^sdio = (.*)$", text).group(1)
    full = str(tmp_path / "sdio-on-a-full-disk")
    with open(full, "w") as f:
        f.write("#!/bin/sh\nexec %s -qq -o /dev/null -e trace=fsync "
                "-e inject=fsync:error=ENOSPC %s \"$@\"\n"
                % (strace, engine))
    os.chmod(full, 0o755)
    with open(config, "w") as f:
        f.write(re.sub(r"(?m)^sdio = .*$", "sdio = %s" % full, text))
    before = sd_conf(app)
    journal = os.path.join(app.root, "var", "sdtune", "journal")
    listed = sorted(os.listdir(journal)) if os.path.isdir(journal) else []
    proc = app.sdtune("--host", sshd.alias, "apply", "--yes", config=config)
    _refused(app, proc, before, "No space left on device")
    assert "'appliance:/" in proc.stderr
    after = sorted(os.listdir(journal)) if os.path.isdir(journal) else []
    assert after == listed


def test_trace_runs_dtrace_there_with_the_scripts_beside_the_engine(
        tmp_path, sshd):
    """dtrace reads the D script on the appliance: the one beside the
    engine (here the source tree's dtrace/, as plugin/engine/sdio is the
    engine)."""
    sys.path.insert(0, os.path.join(REPO, "tests", "unit", "trace"))
    from dtrace_output import align_output
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    (tmp_path / "out.txt").write_text(align_output())
    fake = tmp_path / "dtrace"
    fake.write_text("#!/bin/sh\nfor a in \"$@\"; do printf '%%s\\n' \"$a\";"
                    " done > '%s'\ncat '%s'\n"
                    % (tmp_path / "args.txt", tmp_path / "out.txt"))
    fake.chmod(0o755)
    config = remote_config(app, sshd)
    with open(config) as f:
        text = f.read()
    # The engine of the source tree, whose dtrace/ is the tree's.
    text = re.sub(r"(?m)^(dtrace|sdio) = .*\n", "", text)
    with open(config, "w") as f:
        f.write(text.replace("[commands]\n", "[commands]\ndtrace = %s\n"
                             "sdio = %s\n" % (fake, ENGINE), 1))
    proc = app.sdtune("--host", sshd.alias, "trace", "align", "-d", "sd3",
                      "-t", "5", "-o", "json", config=config)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["devices"][0]["rmw_writes"] == 121
    assert (tmp_path / "args.txt").read_text().splitlines() == [
        "-s", os.path.join(REPO, "dtrace", "sdtune-align.d"), "sd3", "5"]


def test_two_files_certified_at_once_over_ssh(tmp_path, sshd):
    """A shelf over SSH: each drive's engine runs through a session of
    its own (SshHost.worker), and both verdicts come back with the other
    drive beside them."""
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    targets = []
    for name in ("a", "b"):
        path = str(tmp_path / ("scratch-" + name))
        with open(path, "wb") as f:
            f.truncate(96 << 20)
        targets.append(path)
    config = remote_config(app, sshd)
    with open(config, "a") as f:
        f.write("\n[certify]\nphases = sector\nmax_rounds = 12\n")
    proc = app.sdtune("--host", sshd.alias, "certify", *targets,
                      "--confirm", *targets, "-o", "json", config=config)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert [r["target"] for r in results] == targets
    crowds = [r["evidence"]["crowd"] for r in results]
    for crowd in crowds:
        assert crowd["solo_probe"]["intervals"] > 0
        # Beside the other drive, unless the host (a loaded machine) set
        # the pace and the phase was measured again alone.
        assert crowd["drives_beside"] == 1 or crowd["reruns"], crowd
    assert any(p["drives_beside"] == 1 for c in crowds for p in c["probes"])


def test_one_session_answers_each_of_several_threads(tmp_path, sshd):
    """A shelf stores each drive's record from that drive's thread
    through the one main session: requests made by several threads at
    once each get their own answer, whole."""
    import threading
    from sdtune.cli import _ssh_host
    from sdtune.config import load_config
    from sdtune.host.local import RealHost
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    cfg = load_config(RealHost(), remote_config(app, sshd),
                      system_config=None)
    host = _ssh_host(sshd.alias, app.root, cfg)
    directory = app.root + "/var/tmp"
    os.makedirs(directory, exist_ok=True)
    wrong = []

    def work(n):
        for i in range(15):
            path = "%s/t%d-%d" % (directory, n, i)
            data = (b"%d:%d " % (n, i)) * (1 + 500 * (i % 3))
            host.write_atomic(path, data)
            if host.read_bytes(path) != data:
                wrong.append(path)

    try:
        threads = [threading.Thread(target=work, args=(n,))
                   for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        assert not wrong, wrong
        assert len(os.listdir(directory)) == 90
    finally:
        host.close()


def test_a_stream_over_ssh_and_given_up(tmp_path, sshd):
    """A command's output comes over ssh line by line while it runs; a
    stream given up ends ssh, and the engine there kills the command
    (ssh gives a command without a terminal no SIGHUP: the engine sees
    its answers' pipe hang up)."""
    import time
    from sdtune.cli import _ssh_host
    from sdtune.config import load_config
    from sdtune.host.local import RealHost
    from sdtune.errors import HostError
    from sshd import alive
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    cfg = load_config(RealHost(), remote_config(app, sshd),
                      system_config=None)
    host = _ssh_host(sshd.alias, app.root, cfg)
    host.commands["sh"] = "/bin/sh"
    go = str(tmp_path / "go")
    seen = []

    def on_output(data):
        seen.append(data)
        open(go, "w").close()
    pids = []

    def give_up(data):
        pids.append(int(data))
        raise KeyboardInterrupt()
    try:
        result = host.stream("sh", ["-c", "echo first; i=0; while [ ! -e "
                                    "%s ] && [ $i -lt 2000 ]; do sleep 0.01;"
                                    " i=$((i+1)); done; echo second" % go],
                             on_output, timeout_s=60)
        assert (b"".join(seen), result.returncode) == (
            b"first\nsecond\n", 0)
        assert seen[0] == b"first\n"
        with pytest.raises(KeyboardInterrupt):
            host.stream("sh", ["-c", "echo $$; exec sleep 60"], give_up)
        deadline = time.monotonic() + 20
        while alive(pids[0]):
            assert time.monotonic() < deadline, "the command still runs"
            time.sleep(0.05)
        with pytest.raises(HostError) as e:
            host.now()
        assert "given up" in str(e.value)
    finally:
        host.close()


def test_prove_over_ssh_runs_the_engine_on_the_appliance(tmp_path, sshd):
    """prove needs no code of its own over --host: the engine it runs is
    the appliance's (here the simulated appliance's, whose sd answers
    the ioctls), so local and remote say the same."""
    from tests.e2e.proving import (FREE_DISK, IGNORING_DISK, check,
                                   proofs, scenario)
    blocks = (1 << 20) // 512
    devices = {}
    for name in (FREE_DISK, IGNORING_DISK):
        path = str(tmp_path / name)
        with open(path, "wb") as f:
            f.truncate(blocks * 512)
        devices[name] = path
    s = scenario(devices, blocks)
    s["sd_conf"] = {"shape": "nexenta", "pairs": [
        ["ATA     ACME DC4K", "physical-block-size:4096,"
         "cache-nonvolatile:true"]]}
    app = Appliance.build(s, str(tmp_path / "app"))
    config = remote_config(app, sshd)
    local = app.sdtune("prove", "-o", "json", FREE_DISK, IGNORING_DISK)
    remote = app.sdtune("--host", sshd.alias, "prove", "-o", "json",
                        FREE_DISK, IGNORING_DISK, config=config)
    assert local.returncode == remote.returncode == 1, remote.stderr
    for got in (proofs(local), proofs(remote)):
        assert got[FREE_DISK]["state"] == "proven"
        assert got[IGNORING_DISK]["state"] == "contradicted"
        assert check(got[FREE_DISK], "physical-block-size")["measured"] == \
            4096
