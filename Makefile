# sdtune: certify SSDs and tune sd.conf on illumos storage appliances.
#
#   make demo    run sdtune on the built-in simulated appliance
#   make check   install the test dependencies if needed, run every test
#   make bench   benchmarks, printed as times and ratios
#   make fuzz    fuzz the sd.conf engine with 100,000 inputs
#   make faults  EIO, ENOSPC and SIGKILL at every write, fsync and rename
#                of apply and rollback; sd.conf must stay old or new

PYTHON ?= python3
FUZZ_INPUTS ?= 100000
PYTEST = PYTHONPATH=plugin $(PYTHON) -m pytest

.PHONY: all check deps test lint demo bench fuzz faults clean

all: engine

include plugin/engine/Makefile.inc

deps:
	@PYTHON=$(PYTHON) sh tests/deps.sh

check: deps engine lint test

test:
	$(PYTEST) -q tests

lint:
	shellcheck -s ksh bin/sdtune
	shellcheck -s sh tests/deps.sh tests/demo.sh .ci/run
	$(PYTHON) tests/check_seams.py
	$(PYTHON) -m pyflakes plugin tests
	$(PYTHON) -m pycodestyle plugin tests

demo: engine
	@PYTHON=$(PYTHON) sh tests/demo.sh

bench: engine
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_sdconf.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_inventory.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_sdio.py
	PYTHONPATH=plugin $(PYTHON) tests/bench/bench_certify.py

fuzz: deps
	PYTHONPATH=plugin $(PYTHON) tests/fuzz/fuzz_sdconf.py $(FUZZ_INPUTS)

faults: deps engine
	PYTHONPATH=plugin $(PYTHON) tests/faults/run_faults.py

clean:
	rm -f $(ENGINE_BIN)
	rm -rf .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
