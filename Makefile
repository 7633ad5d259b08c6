# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

# sdtune: certify SSDs and tune sd.conf on illumos storage appliances.
#
#   make demo    run sdtune on the built-in simulated appliance with
#                emulated drives: disks, certify, plan, apply, verify,
#                reboot, audit, rollback (make demo-sdconf: the sd.conf
#                tools alone)
#   make check   install the test dependencies if needed, run every test
#   make check-quick
#                lint and the tests that need no emulated drive, no sshd
#                and no Ansible (pytest markers, tests/marks.py): the
#                edit-test loop, 75 to 95 s on 2 CPUs
#   make bench   benchmarks, printed as times and ratios
#   make fuzz    fuzz the sd.conf engine and every importer and parser,
#                100,000 inputs each (about 15 minutes on 2 CPUs)
#   make faults  EIO, ENOSPC and SIGKILL at every write, fsync and rename
#                of apply and rollback, over ssh too, and on SmartOS (boot
#                module, loader lines) and OmniOS (bootadm); every file
#                must stay old or new
#   make install DESTDIR=... PREFIX=/usr [RUNTIME_PYTHON=...]
#                the launcher, package, engine, D scripts, man pages and
#                the shipped defaults (PREFIX/lib/sdtune/conf/sdtune.conf)
#                under DESTDIR; nothing in /etc (gmake on illumos);
#                PREFIX=/opt/sdtune where /usr is read-only (SmartOS)
#   make install-engine DESTDIR=... PREFIX=/opt/sdtune
#                the sdio engine (PREFIX/lib/sdtune/bin/sdio) and the D
#                scripts beside it, alone: for an appliance without
#                Python 3 that sdtune drives over SSH (sdtune --host)
#   make package build/sdtune.p5m, the IPS manifest of what install
#                installs (into build/proto unless DESTDIR is given)

PYTHON ?= python3
FUZZ_INPUTS ?= 100000
# PYTHONDONTWRITEBYTECODE emptied: pytest keeps the test modules it
# rewrites (assert introspection) as bytecode only where Python may write
# it; without it every worker parses and rewrites every test module again
# (measured: collection 4.2 s instead of 0.9 s, in each of the workers).
PYTEST = PYTHONDONTWRITEBYTECODE= PYTHONPATH=plugin $(PYTHON) -m pytest \
    --strict-markers
# The tests without emulated drives keep their temporary directories on
# tmpfs where there is room (tests/basetemp.py: 15-20 % of check-quick
# is creating and removing the simulated appliances' files on a disk
# file system); the emulated drives' run keeps /tmp (it times real I/O:
# not moved without measuring it there).
BASETEMP := $(shell $(PYTHON) tests/basetemp.py 2>/dev/null)
PYTEST_TMPFS = $(PYTEST) $(if $(BASETEMP),--basetemp=$(BASETEMP))
# After a run that passed, its directories go (about 700 MB of memory on
# tmpfs until the next run otherwise); a failed run's stay to be read.
DROP_BASETEMP = $(if $(BASETEMP),@rm -rf $(BASETEMP))

# Installation.  DESTDIR is a staging root (empty: the running system);
# PREFIX is where the programs go on the target.  The shipped defaults go
# next to the package, read-only, where config.py looks for them; the local
# settings, /etc/sdtune/sdtune.conf, are the operator's and not installed.
PREFIX ?= /usr
DESTDIR ?=
# The Python 3 (3.8 or later) the installed launcher runs, on the target:
# /usr/bin/python3 on OmniOS and OpenIndiana, the pkgsrc tools' python
# (/opt/tools/bin/python3.11 after pkgsrc-setup and pkgin in python311)
# in a SmartOS global zone.
RUNTIME_PYTHON ?= /usr/bin/python3
PKG_PROTO = $(if $(DESTDIR),$(DESTDIR),build/proto)
PKG_MANIFEST ?= build/sdtune.p5m
# The Python runtime package of the target distribution, for example
# pkg:/runtime/python-39 on OpenIndiana or pkg:/runtime/python-311 on OmniOS.
PYTHON_PKG ?= pkg:/runtime/python-3
# The architecture sdio is built for (variant.arch): uname -p on illumos;
# i386 (x86, as every NexentaStor) when the manifest is made elsewhere.
PKG_ARCH ?= $(if $(filter SunOS,$(ENGINE_OS)),$(shell uname -p),i386)
SDTUNE_VERSION := $(shell sed -n \
    's/^__version__ = "\(.*\)"$$/\1/p' plugin/sdtune/__init__.py)
INST_SBIN = $(DESTDIR)$(PREFIX)/sbin
INST_LIB = $(DESTDIR)$(PREFIX)/lib/sdtune
INST_MAN = $(DESTDIR)$(PREFIX)/share/man

.PHONY: all bytecode check check-quick deps test test-quick lint demo demo-sdconf bench fuzz faults clean install install-engine package

all: engine

include plugin/engine/Makefile.inc

deps:
	@PYTHON=$(PYTHON) sh tests/deps.sh

check: deps engine lint test

# The quick tier: a marker expression over what tests need (tests/marks.py).
QUICK = not emu and not sshd and not ansible and not browser

# Lint runs beside the tests, not before them: on two CPUs its seven
# seconds then cost about three.
check-quick: deps engine bytecode
	@$(MAKE) --no-print-directory -j2 lint test-quick

test-quick: bytecode
	$(PYTEST_TMPFS) -q $(XDIST) -m "$(QUICK)" tests
	$(DROP_BASETEMP)

# Bytecode for the package and the tests, written once per change of a
# source: the launcher (-B) and the simulated appliance's commands never
# write it, nor does any Python where PYTHONDONTWRITEBYTECODE is set, so
# without it every sdtune a test runs compiles the package again.
bytecode:
	@$(PYTHON) -m compileall -q plugin tests >/dev/null

# The emulated-drive certification tests (marker emu, tests/marks.py)
# measure timing; paired rounds make them robust under load, and they run
# first all the same, one at a time, so that a failure there is seen
# early.  The others run three at a time (pytest-xdist, each worker taking
# work from the others when it runs out) on the 2-CPU CI machine: part of
# their time is spent waiting on the processes they run (measured: 99 s
# for the quick tier with three, 109 s with four).
XDIST = -n 3 --dist worksteal

test: bytecode
	$(PYTEST) -q -m emu tests
	$(PYTEST_TMPFS) -q $(XDIST) -m "not emu" tests
	$(DROP_BASETEMP)

lint:
	shellcheck -s ksh bin/sdtune
	shellcheck -s sh tests/deps.sh tests/demo-sdconf.sh .ci/run
	$(PYTHON) tests/check_seams.py
	$(PYTHON) -m pyflakes plugin tests
	$(PYTHON) -m pycodestyle plugin tests

demo: deps engine
	@PYTHONPATH=plugin $(PYTHON) tests/demo.py

demo-sdconf: deps
	@PYTHON=$(PYTHON) sh tests/demo-sdconf.sh

bench: deps engine
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_sdconf.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_inventory.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_sdio.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_certify.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_gains.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_shelf.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_sim.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_remote.py

# make fuzz: the sd.conf engine, then every importer and command-output
# parser, release detection and the client's reading of engine answers
# (tests/fuzz/fuzz_inputs.py TARGETS, FUZZ_INPUTS inputs each;
# 100,000 by default: about 15 minutes in all on 2 CPUs).  COUNT=n (or
# FUZZ_INPUTS=n) scales both; a failure exits 1.
fuzz: FUZZ_COUNT = $(or $(COUNT),$(FUZZ_INPUTS))
fuzz: deps
	PYTHONPATH=plugin $(PYTHON) tests/fuzz/fuzz_sdconf.py $(FUZZ_COUNT)
	PYTHONPATH=plugin $(PYTHON) tests/fuzz/fuzz_nvmeconf.py $(FUZZ_COUNT)
	PYTHONPATH=plugin $(PYTHON) tests/fuzz/fuzz_inputs.py $(FUZZ_COUNT)

faults: deps engine
	PYTHONPATH=plugin $(PYTHON) tests/faults/run_faults.py

clean:
	rm -f $(ENGINE_BIN)
	rm -rf .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

# cp and chmod rather than install(1), whose options differ between
# illumos (/usr/sbin/install) and GNU.  Every target is removed first so
# that a second install over read-only files works.  Only *.py of the
# package are copied: no __pycache__.
# The package's modules go a directory at a time (one rm, cp and chmod
# for each of its 17 directories, not each of its 120 files: the tests
# install ten times); their file names have no blank.  A directory with
# none (a removed package's, its __pycache__ left behind) is skipped.
install: engine
	@set -e; umask 022; \
	inst() { rm -f "$$3"; cp "$$2" "$$3"; chmod "$$1" "$$3"; \
	    echo "install -m $$1 $$2 $$3"; }; \
	mkdir -p "$(INST_SBIN)" "$(INST_LIB)/bin" "$(INST_LIB)/conf" \
	    "$(INST_LIB)/dtrace" "$(INST_MAN)/man8" "$(INST_MAN)/man5"; \
	case "$(RUNTIME_PYTHON)" in /*) ;; *) echo "RUNTIME_PYTHON" \
	    "'$(RUNTIME_PYTHON)' is not an absolute path" >&2; exit 2;; esac; \
	rm -f "$(INST_SBIN)/sdtune"; \
	sed -e '1s|^#!.*|#!/usr/bin/ksh93|' \
	    -e 's|^python=$${SDTUNE_PYTHON:-/usr/bin/python3}$$|python=$${SDTUNE_PYTHON:-$(RUNTIME_PYTHON)}|' \
	    bin/sdtune > "$(INST_SBIN)/sdtune"; \
	grep -q '^python=$${SDTUNE_PYTHON:-$(RUNTIME_PYTHON)}$$' \
	    "$(INST_SBIN)/sdtune" || { echo "bin/sdtune: no python= line" \
	    "to set to $(RUNTIME_PYTHON)" >&2; exit 2; }; \
	chmod 0555 "$(INST_SBIN)/sdtune"; \
	echo "install -m 0555 bin/sdtune $(INST_SBIN)/sdtune" \
	    "(#!/usr/bin/ksh93, $(RUNTIME_PYTHON))"; \
	for d in $$(find plugin/sdtune -name __pycache__ -prune -o \
	    -type d -print | LC_ALL=C sort); do \
		names=$$(cd "$$d" && for f in *.py; do \
		    if [ -f "$$f" ]; then echo "$$f"; fi; done); \
		[ -n "$$names" ] || continue; \
		mkdir -p "$(INST_LIB)/$$d"; \
		(cd "$(INST_LIB)/$$d" && rm -f $$names); \
		cp $$(for f in $$names; do echo "$$d/$$f"; done) \
		    "$(INST_LIB)/$$d/"; \
		(cd "$(INST_LIB)/$$d" && chmod 0444 $$names); \
		for f in $$names; do \
		    echo "install -m 0444 $$d/$$f $(INST_LIB)/$$d/$$f"; \
		done; \
	done; \
	inst 0555 $(ENGINE_BIN) "$(INST_LIB)/bin/sdio"; \
	inst 0444 conf/known-drives.tsv "$(INST_LIB)/conf/known-drives.tsv"; \
	rm -f "$(INST_LIB)/conf/sdtune.conf"; \
	sed 's|^sdio[ 	]*=.*|sdio = $(PREFIX)/lib/sdtune/bin/sdio|' \
	    conf/sdtune.conf > "$(INST_LIB)/conf/sdtune.conf"; \
	chmod 0444 "$(INST_LIB)/conf/sdtune.conf"; \
	echo "install -m 0444 conf/sdtune.conf $(INST_LIB)/conf/sdtune.conf"; \
	for f in dtrace/*.d; do \
		[ -f "$$f" ] || continue; \
		inst 0444 "$$f" "$(INST_LIB)/$$f"; \
	done; \
	inst 0444 conf/sdtune.8 "$(INST_MAN)/man8/sdtune.8"; \
	inst 0444 conf/sdtune.conf.5 "$(INST_MAN)/man5/sdtune.conf.5"

# An appliance that sdtune reaches over SSH needs the engine, whose `sdio
# serve` does there what the Python package does on a machine that runs
# sdtune, and the D scripts of `sdtune trace`, which dtrace reads there.
# Built on the appliance (gmake, gcc) or for it, into a DESTDIR to copy
# from where the appliance is no build machine (SmartOS global zone,
# NexentaStor); the controller's [commands] sdio names
# PREFIX/lib/sdtune/bin/sdio.
install-engine: engine
	@set -e; umask 022; \
	inst() { rm -f "$$3"; cp "$$2" "$$3"; chmod "$$1" "$$3"; \
	    echo "install -m $$1 $$2 $$3"; }; \
	mkdir -p "$(INST_LIB)/bin" "$(INST_LIB)/dtrace"; \
	inst 0555 $(ENGINE_BIN) "$(INST_LIB)/bin/sdio"; \
	for f in dtrace/*.d; do \
		[ -f "$$f" ] || continue; \
		inst 0444 "$$f" "$(INST_LIB)/$$f"; \
	done

# The file and dir actions are generated from the proto area, so the
# manifest lists exactly what install installed; conf/sdtune.p5m holds
# the rest (package name, summary, license, dependencies).  A DESTDIR
# given here must hold nothing else: everything in it is listed.
package:
	@if [ -z "$(DESTDIR)" ]; then rm -rf build/proto; fi
	$(MAKE) install DESTDIR="$(PKG_PROTO)" PREFIX="$(PREFIX)"
	mkdir -p "$(dir $(PKG_MANIFEST))"
	$(PYTHON) conf/make_manifest.py -D PKGVERS=$(SDTUNE_VERSION) \
	    -D PYTHON_PKG=$(PYTHON_PKG) -D ARCH=$(PKG_ARCH) \
	    conf/sdtune.p5m "$(PKG_PROTO)" \
	    > "$(PKG_MANIFEST).tmp"
	mv "$(PKG_MANIFEST).tmp" "$(PKG_MANIFEST)"
	@echo "$(PKG_MANIFEST): publish with" \
	    "pkgsend publish -s REPO -d $(PKG_PROTO) -d . $(PKG_MANIFEST)"
