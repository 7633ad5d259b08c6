#!/bin/sh
# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

# Install what the tests need when it is missing; quick when all is there.
# Debian packages: ksh (ksh93, for the launcher), shellcheck, mandoc, a C
# compiler (the fake libdiskmgt of tests/sim/libdiskmgt) and libnvpair3linux
# (the real libnvpair the engine's `sdio diskmgt` is tested against; it lives in the
# contrib component, which is enabled on the existing Debian source).
# strace, fio, pkg-config, nbdkit, nbdkit-plugin-dev, libnbd-bin and fuse3
# for the engine and the emulated drives; chromium for the test that opens
# sdtune report's page in a headless browser.  openssh-server and
# openssh-client for the --host tests (tests/ssh runs its own sshd on
# 127.0.0.1; the system's ssh service is neither started nor left
# enabled by the install).  Python packages: pytest, pytest-xdist (the
# tests that do not time emulated drives run two at a time),
# hypothesis, pyflakes and pycodestyle (test-only: the product itself uses
# the standard library alone), and ansible-core, pinned, for the Ansible
# collection's tests (plugin/ansible): 2.19 is the newest line whose
# controller runs on Debian 12's Python 3.11.
set -eu

DEB822=/etc/apt/sources.list.d/debian.sources
ONELINE=/etc/apt/sources.list
POLICY=/usr/sbin/policy-rc.d

have_nvpair() {
	for f in /lib/*/libnvpair.so.* /usr/lib/*/libnvpair.so.* \
	    /lib/libnvpair.so.* /usr/lib/libnvpair.so.*; do
		[ -e "$f" ] && return 0
	done
	return 1
}

codename() {
	c=""
	if [ -r /etc/os-release ]; then
		# shellcheck disable=SC1091 # the machine's own file
		c=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	fi
	echo "${c:-bookworm}"
}

# Add contrib to the components of the existing Debian source for this
# release, in place: no new source address is ever written.  Prints the
# file it changed, nothing when contrib was already there.
enable_contrib() {
	suite=$(codename)
	tmp=$(mktemp)
	if [ -f "$DEB822" ]; then
		# deb822: stanzas are separated by blank lines; the Components
		# field of a stanza whose Suites field lists the release gets
		# contrib.
		awk -v suite="$suite" '
		function flush(   i, n, f, hit) {
			hit = 0
			for (i = 1; i <= nl; i++)
				if (line[i] ~ /^Suites:/) {
					n = split(line[i], f, /[ \t]+/)
					for (; n > 1; n--)
						if (f[n] == suite)
							hit = 1
				}
			for (i = 1; i <= nl; i++) {
				if (hit && line[i] ~ /^Components:/ &&
				    line[i] !~ /[ \t]contrib([ \t]|$)/)
					line[i] = line[i] " contrib"
				print line[i]
			}
			nl = 0
		}
		/^[ \t]*$/ { flush(); print; next }
		{ line[++nl] = $0 }
		END { flush() }' "$DEB822" >"$tmp"
		file=$DEB822
	elif [ -f "$ONELINE" ]; then
		# One-line format: "deb [opts] URI SUITE main ..." lines for the
		# release get contrib after their components.
		awk -v suite="$suite" '
		/^deb(-src)?[ \t]/ {
			s = 0; m = 0; c = 0
			for (i = 2; i <= NF; i++) {
				if ($i == suite) s = 1
				if ($i == "main") m = 1
				if ($i == "contrib") c = 1
			}
			if (s && m && !c) { print $0 " contrib"; next }
		}
		{ print }' "$ONELINE" >"$tmp"
		file=$ONELINE
	else
		rm -f "$tmp"
		echo "tests/deps.sh: no Debian apt source found" >&2
		return 1
	fi
	if ! cmp -s "$tmp" "$file"; then
		# Rewrite in place so the file keeps its owner and mode.
		cat "$tmp" >"$file"
		echo "$file"
	fi
	rm -f "$tmp"
}

missing=""
command -v ksh >/dev/null 2>&1 || missing="$missing ksh"
command -v shellcheck >/dev/null 2>&1 || missing="$missing shellcheck"
command -v mandoc >/dev/null 2>&1 || missing="$missing mandoc"
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 ||
    missing="$missing gcc libc6-dev"
# The measuring engine's tests and benchmark (strace fault injection, fio
# as the reference) and the emulated drives (an nbdkit plugin served as a
# file through nbdfuse).
command -v strace >/dev/null 2>&1 || missing="$missing strace"
command -v fio >/dev/null 2>&1 || missing="$missing fio"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v nbdkit >/dev/null 2>&1 || missing="$missing nbdkit"
[ -f /usr/include/nbdkit-plugin.h ] || missing="$missing nbdkit-plugin-dev"
command -v nbdfuse >/dev/null 2>&1 || missing="$missing libnbd-bin"
command -v fusermount3 >/dev/null 2>&1 || missing="$missing fuse3"
# The HTML report's test opens the page in a real headless browser.
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
# The --host tests start their own sshd on 127.0.0.1 (tests/ssh/sshd.py).
need_sshd=no
[ -x /usr/sbin/sshd ] || need_sshd=yes
[ "$need_sshd" = no ] || missing="$missing openssh-server"
[ -x /usr/bin/ssh ] || missing="$missing openssh-client"
need_nvpair=no
have_nvpair || need_nvpair=yes

if [ -n "$missing" ] || [ "$need_nvpair" = yes ]; then
	if [ "$(id -u)" -ne 0 ]; then
		[ "$need_nvpair" = no ] ||
		    missing="$missing libnvpair3linux (enable contrib)"
		echo "tests/deps.sh: please install:$missing" >&2
		exit 1
	fi
	if [ "$need_nvpair" = yes ]; then
		changed=$(enable_contrib)
		[ -z "$changed" ] ||
		    echo "tests/deps.sh: enabled contrib in $changed"
		missing="$missing libnvpair3linux"
	fi
	echo "tests/deps.sh: installing$missing"
	apt-get update -qq
	# No package may start a service: openssh-server's postinst would
	# start a system sshd on port 22.  invoke-rc.d and deb-systemd-invoke
	# both obey policy-rc.d, and 101 means "action forbidden".  An
	# existing policy (Docker images ship one that exits 101) is kept;
	# ours is removed again however the install ends.
	own_policy=no
	if [ ! -e "$POLICY" ]; then
		own_policy=yes
		trap 'rm -f "$POLICY"' EXIT
		trap 'exit 1' HUP INT TERM
		printf '#!/bin/sh\n# tests/deps.sh: no service starts\nexit 101\n' \
		    >"$POLICY"
		chmod 0755 "$POLICY"
	fi
	old_pid=$(cat /run/sshd.pid 2>/dev/null || :)
	# shellcheck disable=SC2086 # word splitting of the list is wanted
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing \
	    >/dev/null
	if [ "$own_policy" = yes ]; then
		rm -f "$POLICY"
		trap - EXIT HUP INT TERM
	fi
	if [ "$need_sshd" = yes ]; then
		# The postinst enables the service for the next boot: undo
		# that, the tests run their own sshd.
		if command -v deb-systemd-helper >/dev/null 2>&1; then
			deb-systemd-helper disable ssh.service ssh.socket \
			    >/dev/null 2>&1 || :
		fi
		if [ -e /etc/init.d/ssh ]; then
			update-rc.d ssh disable >/dev/null 2>&1 || :
		fi
		# Belt and braces: a system sshd that the install started
		# anyway (a foreign policy that allowed it) is stopped.
		new_pid=$(cat /run/sshd.pid 2>/dev/null || :)
		if [ -n "$new_pid" ] && [ "$new_pid" != "$old_pid" ] &&
		    [ -d "/proc/$new_pid" ]; then
			echo "tests/deps.sh: stopping the sshd the install" \
			    "started (pid $new_pid)"
			kill "$new_pid" 2>/dev/null || :
		fi
	fi
fi

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import pytest, xdist, hypothesis, pyflakes, pycodestyle' \
    >/dev/null 2>&1; then
	echo "tests/deps.sh: installing pytest, pytest-xdist, hypothesis," \
	    "pyflakes and pycodestyle for $PYTHON"
	"$PYTHON" -m pip install -q pytest pytest-xdist hypothesis pyflakes \
	    pycodestyle
fi

ANSIBLE_CORE=2.19.14
if ! "$PYTHON" -c 'import sys, ansible.release
sys.exit(ansible.release.__version__ != sys.argv[1])' "$ANSIBLE_CORE" \
    >/dev/null 2>&1; then
	echo "tests/deps.sh: installing ansible-core $ANSIBLE_CORE for $PYTHON"
	"$PYTHON" -m pip install -q "ansible-core==$ANSIBLE_CORE"
fi
