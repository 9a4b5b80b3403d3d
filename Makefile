# mmrig: one Makefile for the whole rig. `make help` lists the targets.
# `make test` and `make demo` run `setup` first, so a fresh clone needs nothing else.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PY := .venv/bin/python
FUZZ_RUNS ?= 1000000
FUZZ_EXAMPLES ?= 10000

.PHONY: help setup bundle build test check test-protocol test-python test-executor test-native fuzz demo perf footprint vectors clean \
        flash-executor flash-profiler-avr flash-profiler-8051 test-profiler test-hil test-examples bench gui faults soak soak-faults

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

setup:  ## install Debian packages, .venv with mmrig[dev], the FreeRTOS kernel (idempotent; OFFLINE=DIR: from a bundle)
	@tools/setup.sh $(if $(OFFLINE),--offline "$(OFFLINE)")

BUNDLE ?= mmrig-bundle
bundle:  ## gather what setup fetches (debs, wheels, FreeRTOS crate) into BUNDLE=DIR for `make setup OFFLINE=DIR`
	@tools/bundle.sh "$(BUNDLE)"

build: setup  ## build everything: protocol library (host, 8051, AVR), every firmware image (profiler AVR + 8051, executor), the bench, normal mode's native firing thread
	$(MAKE) -C protocol/c host mcs51 avr
	$(MAKE) -C executor avr
	$(MAKE) -C profiler-fw avr mcs51
	$(MAKE) -C hil all
	$(MAKE) -C scheduler-gui/mmsched/host/native

footprint: setup  ## print the protocol code's 8051 and AVR code/RAM footprint
	$(MAKE) -C protocol/c mcs51 avr

vectors: setup  ## rewrite protocol/vectors/*.vec from protocol/vectors/generate.py
	$(PY) protocol/vectors/generate.py

# Two tiers (docs/make.md; conftest.py keeps them honest). `make test`, the fast one, checks what the rig promises
# that needs no wall clock: lockstep and one-node benches, recorded runs, every suite on WORKERS workers, and one short
# paced run per mode (`paced_smoke`). `make check`, the long one, runs the tests whose point is the wall clock (the
# `paced` marker: the PC's real timing on the paced bench) and those that need the machine alone, one at a time.
test: build  ## the fast tier (about 5 min on a 2-vCPU VM): protocol, firmware in the simulators, the bench in lockstep, scheduler, GUI under Xvfb, analysis, HIL plugin
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory test-protocol test-python test-profiler test-executor test-hil test-native; \
	echo "make test: all suites passed in $$(( $$(date +%s) - start )) s (the fast tier; make check runs the long one)"

check: build  ## the long tier (about 9 min): every test marked paced, alone or long, one at a time (the paced bench, the quick demo, the Dask cluster tests)
	@start=$$(date +%s); \
	$(PY) -m pytest -q -p no:cacheprovider --durations=25 -m "paced or alone or long" $(PY_SUITES); \
	echo "make check: all suites passed in $$(( $$(date +%s) - start )) s (the long tier)"

test-protocol:  # C tests over the shared vectors (gcc, clang+sanitizers, 8051 capacity), short fuzz, footprints
	$(MAKE) -C protocol/c test mcs51 avr

# The Python suites and the bench's (hil/tests) in one pytest-xdist run on WORKERS workers (each test that needs a
# bench starts one of its own), the slowest 25 tests listed at the end; the `paced`, `alone` and `long` ones are the
# long tier's. WORKERS=3 on a 2-vCPU VM: the suites wait on their benches and subprocesses, and two workers kept the
# CPUs 81 % busy (2026-11-29: 335 s for these suites on two workers in two runs, 315 s on three in one). Paced
# benches still take turns (MMRIG_PACED_TURNS, hil/mmhil/turns.py): the fast tier's two smoke runs, a user's own.
PY_SUITES := tests protocol/python/tests scheduler-gui/tests analysis/tests hil/tests
WORKERS ?= 3
export MMRIG_PACED_TURNS ?= $(CURDIR)/build/paced-turns
export MMRIG_PACED_TURNS_NICE ?= -5
test-python:
	$(PY) protocol/vectors/generate.py --check
	$(PY) -m pytest -q -p no:cacheprovider -n $(WORKERS) --durations=25 -m "not paced and not alone and not long" $(PY_SUITES)

test-profiler:  # host tests of the core, the AVR image in simavr, the 8051 image (87C51 limits enforced) in ucsim
	$(MAKE) -C profiler-fw test

test-hil:  # the bench's C unit tests and the HIL example suite in lockstep (its pytest tests run in test-python)
	$(MAKE) -C hil test

test-examples: setup  ## the HIL example suite (hil/examples) in lockstep on 2 workers; JUnit XML in build/hil-examples/
	$(MAKE) -C hil examples

test-native:  # cmocka tests of normal mode's native firing thread (scheduler-gui/mmsched/host/native)
	$(MAKE) -C scheduler-gui/mmsched/host/native test

test-executor:  # host tests of the core, the AVR image in simavr
	$(MAKE) -C executor test

fuzz: setup  ## libFuzzer on the C decoder (FUZZ_RUNS) and hypothesis on the Python one (FUZZ_EXAMPLES)
	$(MAKE) -C protocol/c fuzz-run RUNS=$(FUZZ_RUNS)
	MMRIG_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider -m fuzz -s protocol/python/tests

demo: setup  ## the paper's five experiments on the virtual bench (QUICK=1: 30 events each)
	$(MAKE) -C hil all
	$(PY) -m mmrig demo $(if $(QUICK),--quick)

faults: setup  ## the fault campaign: every mode x every fault class on the bench, checked (build/faults/)
	$(MAKE) -C hil all
	$(PY) -m mmrig.faultcampaign --out build/faults

soak: setup  ## a 3 h lockstep and a 30 min paced mixed run: outcomes, counters, worst event (build/soak/)
	$(MAKE) -C hil all
	$(PY) -m mmrig.soak --out build/soak

soak-faults: setup  ## 30 min of lockstep with every fault class at random moments: each named, nothing lost (build/soak-faults/)
	$(MAKE) -C hil all
	$(PY) -m mmrig.faultsoak --minutes $(or $(MINUTES),30) --out build/soak-faults

perf: setup  ## run every benchmark, write perf/results.json and print a table (ONLY=PART: those whose path holds PART)
	$(MAKE) -C protocol/c perf
	$(MAKE) -C hil all
	$(PY) tools/perf.py --out perf/results.json $(if $(ONLY),--only $(ONLY))

flash-profiler-avr:  ## flash the AVR profiler to an Arduino Mega 2560: make flash-profiler-avr PORT=/dev/ttyACM0
	$(MAKE) -C profiler-fw flash-avr $(if $(PORT),PORT=$(PORT))

flash-profiler-8051:  ## flash the 8051 profiler (stcgal, STC89C52RC, 12T): make flash-profiler-8051 PORT=/dev/ttyUSB0
	$(MAKE) -C profiler-fw flash-8051 $(if $(PORT),PORT51=$(PORT))

flash-profiler-at89s52:  ## flash the 8051 profiler to an AT89S52 (s51dude + USBtinyISP): make flash-profiler-at89s52 PORT=/dev/ttyUSB0
	$(MAKE) -C profiler-fw flash-8051-isp $(if $(PORT),PORT51=$(PORT))

flash-executor:  ## flash the executor to an Arduino Mega 2560: make flash-executor PORT=/dev/ttyACM0
	$(MAKE) -C executor flash $(if $(PORT),PORT=$(PORT))

bench: setup  ## the virtual bench in the foreground (prints the two serial ports); Ctrl-C stops it
	$(MAKE) -C hil all
	$(PY) -m mmrig bench

clean:  ## remove build outputs (keeps .venv)
	$(MAKE) -C protocol/c clean
	$(MAKE) -C executor clean
	$(MAKE) -C profiler-fw clean
	$(MAKE) -C hil clean
	rm -rf build perf .pytest_cache

gui: setup  ## the PySide6 scheduler app (virtual bench by default, or serial ports)
	$(MAKE) -C hil all
	$(PY) -m mmrig gui
