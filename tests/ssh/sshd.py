# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A real OpenSSH server on 127.0.0.1 for the --host tests.

`Sshd(directory)` generates, inside `directory` (a pytest tmp dir), an
ed25519 host key, an ed25519 client key, authorized_keys, an sshd_config
and a client config `ssh_config` for `ssh -F`, then runs Debian's
`/usr/sbin/sshd -D -e` as the current user on a free port of 127.0.0.1.
Nothing here contacts any other address, and every wait is bounded.

The client config names one Host alias (default "appliance") with the
generated key, a known_hosts file holding the server's host key and
BatchMode, so `ssh -F sshd.config_path sshd.alias -- CMD` logs in with no
prompt and no global or per-user ssh configuration involved.

Remote commands: ssh joins its remote arguments with spaces into ONE
string and sshd runs that string through the user's login shell (`$SHELL
-c STRING`).  Arguments are therefore NOT passed intact: the caller must
quote each one for a POSIX shell (`shlex.quote`) before handing it to
`ssh_argv`, e.g. `ssh_argv(*map(shlex.quote, argv))`.

Fault cases for the tests: `wrong_key_config()` (client key not in
authorized_keys), `unknown_host_config()` (empty known_hosts),
`regenerate_host_key()` (the server's key changes under the known_hosts
entry) and `kill_sessions()` (the server side of live sessions dies).

Standard library only (Python 3.8+); Linux (/proc) only.
"""

import ctypes
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Set

# tests/marks.py, whichever way this module was imported (sshd,
# tests.ssh.sshd).
_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
from marks import needs  # noqa: E402

SSHD = "/usr/sbin/sshd"
SSH = "/usr/bin/ssh"
SSH_KEYGEN = "/usr/bin/ssh-keygen"
# Debian's privilege-separation directory: a root sshd refuses to start
# without it, and only the init script or systemd unit (which we never
# run) would create it.
PRIVSEP_DIR = "/run/sshd"
HOST = "127.0.0.1"

START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0
KEYGEN_TIMEOUT = 30.0
BIND_ATTEMPTS = 5
# sshd's messages when another process took the port between our probe
# bind and its own: then a new port is tried.
BIND_ERRORS = ("Address already in use", "Cannot bind any address")


class SshdError(RuntimeError):
    """sshd could not be started or stopped; the message has its log."""


def _keygen(path: str, comment: str) -> None:
    """A fresh passphrase-less ed25519 key pair at path and path.pub."""
    for p in (path, path + ".pub"):
        if os.path.exists(p):
            os.unlink(p)
    proc = subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment,
         "-f", path],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=KEYGEN_TIMEOUT)
    if proc.returncode != 0:
        raise SshdError("ssh-keygen failed for %s: %s"
                        % (path, proc.stdout.decode(errors="replace")))


def _read_pub(path: str) -> str:
    """"TYPE BASE64" of a .pub file, without its comment."""
    with open(path) as f:
        return " ".join(f.read().split()[:2])


def _q(word: str) -> str:
    """A word for sshd_config or ssh_config: double-quoted when it holds
    blanks (both parse quotes alike).  A quote or newline cannot be
    written, and % is refused because some of the keywords expand it as
    a token and others do not."""
    if any(c in word for c in "\"\n\r%"):
        raise SshdError("unusable character in config value %r" % word)
    return '"%s"' % word if any(c.isspace() for c in word) else word


def _free_port() -> int:
    """A port of 127.0.0.1 that was free a moment ago.  Another process
    may take it before sshd binds it: start() retries on that."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def proc_stat(pid: int) -> Optional[List[str]]:
    """The fields of /proc/PID/stat after the command name (state is
    [0], ppid [1], starttime [19]), or None once the process is gone.
    The name is in parentheses and may itself hold spaces or ')', hence
    the split at the last ')'."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rindex(")") + 2:].split()


def _comm(pid: int) -> str:
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def _cmdline(pid: int) -> str:
    """The command line as sshd's setproctitle left it ("sshd: root@notty"
    after authentication)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _children_map() -> Dict[int, List[int]]:
    """ppid -> [pid] of every live process, from one scan of /proc."""
    kids: Dict[int, List[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = proc_stat(int(name))
        if st is None or st[0] == "Z":
            continue
        kids.setdefault(int(st[1]), []).append(int(name))
    return kids


def _descendants(pid: int, kids: Dict[int, List[int]]) -> List[int]:
    """pid's descendants, parents before children (bounded: a pid is
    visited once, so a /proc race cannot make it loop)."""
    out: List[int] = []
    seen = {pid}
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop(0)
        if p in seen:
            continue
        seen.add(p)
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def alive(pid: int) -> bool:
    """Still running (a zombie or a dead process counts as gone)."""
    st = proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def _sid(pid: int) -> Optional[int]:
    st = proc_stat(pid)
    return None if st is None else int(st[3])


def _in_sessions(sids: Set[int]) -> List[int]:
    """Live processes whose session id is in sids.  sshd puts each
    connection and each remote command in a session of its own (setsid),
    and the listener runs in a new one too, so this finds every process
    the server started even after its parent died and it was reparented
    away from the listener.  A sid cannot be reused while a process is
    still in that session, so nothing foreign is matched as long as the
    set is used right after it was collected."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = proc_stat(int(name))
        if st is not None and st[0] != "Z" and int(st[3]) in sids:
            out.append(int(name))
    return out


def _kill_sessions_of(sids: Set[int], grace: float) -> None:
    """SIGTERM every process of those sessions, SIGKILL what is left
    after grace seconds, until none is left (bounded)."""
    me = os.getpid()
    deadline = time.monotonic() + grace
    sig = signal.SIGTERM
    while True:
        pids = [p for p in _in_sessions(sids) if p != me]
        if not pids:
            return
        if time.monotonic() > deadline:
            if sig == signal.SIGKILL:
                return
            sig = signal.SIGKILL
            deadline = time.monotonic() + grace
        for p in pids:
            kill_quietly(p, sig)
        time.sleep(0.05)


def kill_quietly(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def wait_gone(pids: Sequence[int], timeout: float,
              poll_s: float = 0.02) -> bool:
    """Whether every one of ``pids`` is gone within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
    return True


def _parent_death_signal():
    """A preexec_fn that makes sshd get SIGTERM when the test process
    dies (PR_SET_PDEATHSIG), so a killed pytest leaves no listener.  The
    finalizers cover every other way out.  prctl is looked up here, before
    the fork; None where it is not available."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    return preexec


class Sshd:
    """A real sshd on 127.0.0.1 with generated keys; see the module
    docstring.  Usable as a context manager (start on enter, stop on
    exit)."""

    def __init__(self, directory: str, alias: str = "appliance") -> None:
        self.directory = os.path.abspath(str(directory))
        self.alias = alias
        self.user = pwd.getpwuid(os.getuid()).pw_name
        d = self.directory
        self.host_key = os.path.join(d, "host_ed25519_key")
        self.client_key = os.path.join(d, "client_ed25519_key")
        self.authorized_keys = os.path.join(d, "authorized_keys")
        self.sshd_config = os.path.join(d, "sshd_config")
        self.config_path = os.path.join(d, "ssh_config")
        self.known_hosts = os.path.join(d, "known_hosts")
        self.pid_file = os.path.join(d, "sshd.pid")
        self.log_path = os.path.join(d, "sshd.log")
        # The remote sessions' HOME (see _write_sshd_config).
        self.home = os.path.join(d, "home")
        self._port: Optional[int] = None
        self._proc: Optional[subprocess.Popen] = None
        self._log_offset = 0
        self._control_dir: Optional[str] = None

    # -- properties ---------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise SshdError("sshd not started")
        return self._port

    @property
    def pid(self) -> Optional[int]:
        """The listener's pid, None when not running."""
        if self._proc is None or self._proc.poll() is not None:
            return None
        return self._proc.pid

    @property
    def control_dir(self) -> str:
        """A short directory for ControlPath sockets.  A UNIX socket path
        is limited to 108 bytes and ssh appends ~17 characters while it
        creates one, so pytest's long tmp paths do not fit; this one is
        under /tmp and removed by stop()."""
        if self._control_dir is None:
            base = "/tmp" if os.path.isdir("/tmp") else None
            self._control_dir = tempfile.mkdtemp(prefix="sdt-cm-", dir=base)
        return self._control_dir

    def log(self) -> str:
        """Everything sshd wrote (it runs with -e, LogLevel VERBOSE)."""
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def sdtune_config(self, source: str, dest: str,
                      client: Optional[str] = None) -> str:
        """Write DEST: the sdtune.conf SOURCE with an [ssh] section whose
        options give ssh this server's client configuration (or CLIENT,
        another one of ours: a wrong key, an unknown host).  Returns
        DEST."""
        with open(source) as f:
            text = f.read()
        with open(dest, "w") as f:
            f.write(text + "\n[ssh]\noptions = -F %s\n"
                    % (client or self.config_path))
        return dest

    def ssh_argv(self, *remote_argv: str, config: Optional[str] = None,
                 options: Sequence[str] = ()) -> List[str]:
        """`/usr/bin/ssh -F CONFIG [OPTIONS] ALIAS -- REMOTE_ARGV...`.
        remote_argv is NOT quoted here: the remote login shell re-parses
        it (see the module docstring), so pass shlex.quote'd words.
        options are ssh arguments placed before the alias, e.g.
        ("-o", "ControlMaster=auto")."""
        return ([SSH, "-F", config or self.config_path] + list(options)
                + [self.alias, "--"] + list(remote_argv))

    # -- files --------------------------------------------------------

    def _write(self, path: str, text: str, mode: int = 0o600) -> None:
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)

    def _write_sshd_config(self) -> None:
        lines = [
            "# Written by tests/ssh/sshd.py; read by no system service.",
            "ListenAddress %s" % HOST,
            "Port %d" % self.port,
            "HostKey %s" % _q(self.host_key),
            "PidFile %s" % _q(self.pid_file),
            "AuthorizedKeysFile %s" % _q(self.authorized_keys),
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            # Tests and CI run as root: root may log in, by key only.
            "PermitRootLogin prohibit-password",
            # No PAM: nothing of the machine's login setup is involved.
            # (Without PAM sshd refuses accounts whose password field is
            # locked with "!".)
            "UsePAM no",
            # The keys live in a pytest tmp dir whose modes sshd would
            # otherwise reject.
            "StrictModes no",
            # Enough for multiplexed and parallel test sessions.
            "MaxSessions 32",
            "MaxStartups 64",
            "LogLevel VERBOSE",
            # Sessions get an empty HOME of their own.  Debian's bash
            # sources ~/.bashrc even for `bash -c CMD` when run by sshd:
            # with the machine's real HOME every remote command would run
            # the tester's dotfiles (slow, and e.g. a pyenv rehash whose
            # lock a killed session leaves behind).  sshd still starts the
            # user's login shell in the user's real home directory.
            "SetEnv %s" % _q("HOME=" + self.home),
            # No AcceptEnv line: the client's environment never reaches
            # the remote side, as on a default appliance.
        ]
        self._write(self.sshd_config, "\n".join(lines) + "\n")

    def _client_config(self, identity: str, known_hosts: str) -> str:
        lines = [
            "# Written by tests/ssh/sshd.py for ssh -F.",
            "Host %s" % self.alias,
            "    HostName %s" % HOST,
            "    Port %d" % self.port,
            "    User %s" % self.user,
            "    IdentityFile %s" % _q(identity),
            "    IdentitiesOnly yes",
            # No key from an ssh-agent of the caller's environment.
            "    IdentityAgent none",
            "    UserKnownHostsFile %s" % _q(known_hosts),
            "    GlobalKnownHostsFile /dev/null",
            "    StrictHostKeyChecking yes",
            # Never rewrite the known_hosts file: the fault cases
            # depend on what it holds.
            "    UpdateHostKeys no",
            "    BatchMode yes",
            "    ConnectTimeout 10",
            "    LogLevel ERROR",
        ]
        return "\n".join(lines) + "\n"

    def _write_known_hosts(self, pub_path: str) -> None:
        # A non-22 port is written "[host]:port"; the entry is not hashed
        # so that a test can read it.
        self._write(self.known_hosts, "[%s]:%d %s\n"
                    % (HOST, self.port, _read_pub(pub_path)), 0o644)

    def _write_client_files(self, known_pub: Optional[str] = None) -> None:
        """ssh_config for the current port, and known_hosts with the key
        of known_pub (default: the current host key)."""
        self._write_known_hosts(known_pub or self.host_key + ".pub")
        self._write(self.config_path, self._client_config(
            self.client_key, self.known_hosts), 0o644)

    def _make_keys(self) -> None:
        os.makedirs(self.home, exist_ok=True)
        if not os.path.exists(self.host_key):
            _keygen(self.host_key, "sdtune-test-host")
        if not os.path.exists(self.client_key):
            _keygen(self.client_key, "sdtune-test-client")
        self._write(self.authorized_keys,
                    _read_pub(self.client_key + ".pub") + "\n", 0o600)

    # -- process ------------------------------------------------------

    def _ensure_privsep_dir(self) -> None:
        # Only a root sshd chroots its unauthenticated children there; a
        # non-root one runs without it (and could not create it).
        if os.path.isdir(PRIVSEP_DIR) or os.geteuid() != 0:
            return
        os.makedirs(PRIVSEP_DIR, mode=0o755, exist_ok=True)
        os.chmod(PRIVSEP_DIR, 0o755)

    def _spawn(self) -> None:
        """Start sshd on self._port and wait until it answers with an
        SSH banner.  Raises SshdError; sets self._proc to None when sshd
        exited."""
        self._write_sshd_config()
        with open(self.log_path, "ab") as log:
            self._log_offset = log.tell()
            # -D: stay in the foreground (our child, so we can stop it);
            # -e: log to stderr, i.e. the log file.  The absolute path
            # lets sshd re-exec itself for each connection.
            self._proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", self.sshd_config],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=_parent_death_signal(), close_fds=True,
                # A session of its own: stop() finds everything the
                # server started by session id, and a Ctrl-C meant for
                # pytest does not kill sshd before the finalizers run.
                start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self._proc.poll() is not None:
                rc = self._proc.returncode
                self._proc = None
                raise SshdError("sshd exited with status %s:\n%s"
                                % (rc, self._new_log()))
            if self._banner():
                return
            if time.monotonic() > deadline:
                self._terminate()
                raise SshdError("sshd did not accept connections on "
                                "%s:%d within %.0f s:\n%s"
                                % (HOST, self._port, START_TIMEOUT,
                                   self._new_log()))
            time.sleep(0.05)

    def _new_log(self) -> str:
        return self.log()[self._log_offset:]

    def _banner(self) -> bool:
        """True when 127.0.0.1:port answers with an OpenSSH banner (so
        it is a listening sshd, not merely a bound port)."""
        try:
            with socket.create_connection((HOST, self.port),
                                          timeout=2.0) as s:
                data = b""
                while b"\n" not in data and len(data) < 256:
                    chunk = s.recv(256)
                    if not chunk:
                        break
                    data += chunk
                return data.startswith(b"SSH-2.0-")
        except OSError:
            return False

    def _start_on(self, ports: Sequence[Optional[int]]) -> None:
        """Try each port in turn (None: a fresh free port), moving on only
        when sshd failed to bind."""
        err: Optional[SshdError] = None
        for port in ports:
            self._port = port if port is not None else _free_port()
            try:
                self._spawn()
                return
            except SshdError as e:
                if not any(m in str(e) for m in BIND_ERRORS):
                    raise
                err = e
        assert err is not None
        raise err

    def start(self) -> "Sshd":
        """Generate what is missing, start sshd, write the client files.
        Retries with another port when the chosen one was taken."""
        if self.pid is not None:
            return self
        needs("sshd", "a real sshd")
        for exe in (SSHD, SSH, SSH_KEYGEN):
            if not os.access(exe, os.X_OK):
                raise SshdError("%s is missing (run tests/deps.sh)" % exe)
        self._ensure_privsep_dir()
        self._make_keys()
        self._start_on([None] * BIND_ATTEMPTS)
        self._write_client_files()
        return self

    def _terminate(self) -> None:
        """Stop the listener and everything it started: SIGTERM to the
        listener alone would leave the per-connection sshd processes
        and their commands running."""
        proc = self._proc
        if proc is None:
            return
        sids = {proc.pid}
        for p in _descendants(proc.pid, _children_map()):
            sid = _sid(p)
            if sid is not None:
                sids.add(sid)
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=STOP_TIMEOUT)
        _kill_sessions_of(sids, STOP_TIMEOUT / 2)
        self._proc = None

    def stop(self) -> None:
        """Stop sshd and all it started (bounded), remove the control
        dir.  Safe to call twice."""
        try:
            self._terminate()
        finally:
            if self._control_dir is not None:
                shutil.rmtree(self._control_dir, ignore_errors=True)
                self._control_dir = None

    def __enter__(self) -> "Sshd":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- sessions -----------------------------------------------------

    def session_pids(self) -> List[int]:
        """The per-connection sshd processes (children of the listener)
        that serve an authenticated client session.  Connections still
        authenticating, such as start()'s readiness probes, are left out:
        an authenticated one is titled "sshd: USER@..." (root: the child
        itself; other users: its unprivileged sshd child)."""
        listener = self.pid
        if listener is None:
            return []
        kids = _children_map()
        out = []
        for child in kids.get(listener, []):
            tree = [child] + _descendants(child, kids)
            if any(_comm(p) == "sshd" and "@" in _cmdline(p) for p in tree):
                out.append(child)
        return sorted(out)

    def kill_sessions(self, sig: int = signal.SIGKILL,
                      pids: Optional[Sequence[int]] = None) -> List[int]:
        """Send sig to the server side of sessions: the given session
        pids (default: all of session_pids()) and the sshd processes
        under them.  Returns the pids signalled.  Once those are gone
        (bounded wait), the remote commands they ran, now orphans, are
        ended too (nothing would ever reap them); they die only after
        their sshd, so the client sees its connection drop rather than a
        command's death.  If sshd survives sig (caught or ignored), its
        commands are left to stop()."""
        kids = _children_map()
        chosen = self.session_pids() if pids is None else list(pids)
        sshds: List[int] = []
        command_sids: Set[int] = set()
        for child in chosen:
            for p in [child] + _descendants(child, kids):
                if _comm(p) == "sshd":
                    sshds.append(p)
                else:
                    sid = _sid(p)
                    if sid is not None:
                        command_sids.add(sid)
        for p in sshds:
            kill_quietly(p, sig)
        if wait_gone(sshds, STOP_TIMEOUT):
            _kill_sessions_of(command_sids, STOP_TIMEOUT / 2)
        return sshds

    # -- fault cases --------------------------------------------------

    def regenerate_host_key(self) -> None:
        """Give the server a new host key and restart it, leaving the
        known_hosts file with the old key: the "host key changed" case.
        The port is kept when possible; if it was taken meanwhile, the
        new port's known_hosts entry still holds the OLD key, so the case
        is the same.  trust_host_key() undoes it."""
        old_pub = os.path.join(self.directory, "host_ed25519_key.old.pub")
        shutil.copyfile(self.host_key + ".pub", old_pub)
        port = self._port
        self._terminate()
        _keygen(self.host_key, "sdtune-test-host")
        self._start_on([port] + [None] * (BIND_ATTEMPTS - 1))
        self._write_client_files(known_pub=old_pub)

    def trust_host_key(self) -> None:
        """Rewrite known_hosts with the current host key."""
        self._write_known_hosts(self.host_key + ".pub")

    def wrong_key_config(self) -> str:
        """A client config like ssh_config but whose IdentityFile is a
        fresh key that is not in authorized_keys: the "wrong key" case.
        Returns its path."""
        key = os.path.join(self.directory, "wrong_ed25519_key")
        if not os.path.exists(key):
            _keygen(key, "sdtune-test-wrong")
        path = os.path.join(self.directory, "ssh_config.wrong_key")
        self._write(path, self._client_config(key, self.known_hosts),
                    0o644)
        return path

    def unknown_host_config(self) -> str:
        """A client config like ssh_config but whose UserKnownHostsFile
        is empty: the "unknown host key" case (StrictHostKeyChecking yes
        then refuses).  Returns its path."""
        empty = os.path.join(self.directory, "known_hosts.empty")
        self._write(empty, "", 0o644)
        path = os.path.join(self.directory, "ssh_config.unknown_host")
        self._write(path, self._client_config(self.client_key, empty),
                    0o644)
        return path
