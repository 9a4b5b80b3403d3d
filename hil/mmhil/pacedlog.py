"""A record of the paced benches started (MMRIG_PACED_LOG=FILE): one line each, appended as it starts.

A paced bench follows the wall clock, so what a test on it sees depends on how busy the host is, and it holds
about half a CPU for its whole life (measured on a 2-vCPU VM, 2026-11-27: mmhil.turns). The project's test
suites keep such tests in a tier of their own (the `paced` marker: `make check`) and the fast tier (`make test`)
free of them; the root conftest.py names a FILE here for each test process and fails a test without the marker
whose run added a line. The variable is inherited, so a bench started by a child (`mmrig run` in a subprocess, a
GUI run's process) is recorded too. Lockstep and unpaced benches follow no clock and are not recorded.
Unset (the default), nothing is written."""

from __future__ import annotations

import json
import os

ENV = "MMRIG_PACED_LOG"


def note(what: str) -> None:
    """Appends one line for a paced bench being started (`what`: the bench's repr) if MMRIG_PACED_LOG is set: the
    process, and the test it runs under when pytest runs it (PYTEST_CURRENT_TEST, inherited by children too)."""
    path = os.environ.get(ENV)
    if not path:
        return
    # here, not at the top: the package mmanalysis loads pandas, and mmhil.bench stays light (tests/test_layers.py)
    from mmanalysis.safefiles import appending

    line = json.dumps({"pid": os.getpid(), "test": os.environ.get("PYTEST_CURRENT_TEST"), "bench": what})
    fd = appending(path)
    try:
        os.write(fd, (line + "\n").encode())     # one write of one short line: O_APPEND keeps writers' lines whole
    finally:
        os.close(fd)
