#!/bin/sh
# Install what the tests need when it is missing; quick when all is there.
# Debian packages: ksh (ksh93, for the launcher), shellcheck, mandoc.
# Python packages: pytest and hypothesis (test-only: the product itself
# uses the standard library alone).
set -eu

missing=""
command -v ksh >/dev/null 2>&1 || missing="$missing ksh"
command -v shellcheck >/dev/null 2>&1 || missing="$missing shellcheck"
command -v mandoc >/dev/null 2>&1 || missing="$missing mandoc"

if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "tests/deps.sh: please install:$missing" >&2
		exit 1
	fi
	echo "tests/deps.sh: installing$missing"
	apt-get update -qq
	# shellcheck disable=SC2086 # word splitting of the list is wanted
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing \
	    >/dev/null
fi

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import pytest, hypothesis' >/dev/null 2>&1; then
	echo "tests/deps.sh: installing pytest and hypothesis for $PYTHON"
	"$PYTHON" -m pip install -q pytest hypothesis
fi
