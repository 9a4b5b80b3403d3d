# mmrig: one Makefile for the whole rig. `make help` lists the targets.
# `make test` and `make demo` run `setup` first, so a fresh clone needs nothing else.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PY := .venv/bin/python
FUZZ_RUNS ?= 1000000
FUZZ_EXAMPLES ?= 10000

.PHONY: help setup build test test-c test-python fuzz fuzz-short demo perf footprint vectors clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

setup:  ## install Debian packages, .venv with mmrig[dev], the FreeRTOS kernel (idempotent)
	@tools/setup.sh

build: setup  ## build everything that exists: host protocol library and tests, 8051 and AVR footprints
	$(MAKE) -C protocol/c host mcs51 avr

footprint: setup  ## print the protocol code's 8051 and AVR code/RAM footprint
	$(MAKE) -C protocol/c mcs51 avr

vectors: setup  ## rewrite protocol/vectors/*.vec from protocol/vectors/generate.py
	$(PY) protocol/vectors/generate.py

test: setup  ## everything CI runs: C and Python tests over the shared vectors, footprints, short fuzz
	$(MAKE) test-c
	$(MAKE) test-python
	$(MAKE) fuzz-short
	@echo "make test: all suites passed"

test-c:
	$(MAKE) -C protocol/c test mcs51 avr

test-python:
	$(PY) protocol/vectors/generate.py --check
	$(PY) -m pytest -q -p no:cacheprovider

fuzz-short:
	$(MAKE) -C protocol/c fuzz-short

fuzz: setup  ## libFuzzer on the C decoder (FUZZ_RUNS) and hypothesis on the Python one (FUZZ_EXAMPLES)
	$(MAKE) -C protocol/c fuzz-run RUNS=$(FUZZ_RUNS)
	MMRIG_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider -m fuzz -s protocol/python/tests

demo: setup  ## the main job on the virtual bench (says what is not built yet)
	$(PY) -m mmsched.cli demo

perf: setup  ## run every benchmark, write perf/results.json and print a table
	$(MAKE) -C protocol/c bench
	$(PY) tools/perf.py --out perf/results.json

clean:  ## remove build outputs (keeps .venv)
	$(MAKE) -C protocol/c clean
	rm -rf build perf .pytest_cache
