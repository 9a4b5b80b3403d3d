"""The test tiers stay honest (README, "make test" and "make check").

`make test` is the fast tier: what the rig promises that does not need wall-clock pacing, checked in lockstep,
one-node mode and on recorded inputs, whatever the host is doing. A test whose point is paced behaviour starts a
paced bench (virtual time on wall time: its outcome depends on the host, and it holds about half a CPU while it
runs) and carries the `paced` marker, which puts it in the long tier, `make check`; the fast tier's one short
paced run per mode carries `paced_smoke` instead. Here every test of the project's suites that starts a paced
bench without one of the two fails at its teardown, naming the bench: each test process gets a file of its own
in MMRIG_PACED_LOG (mmhil.pacedlog), and a test's lines are those its setup, call and teardown added (a child
process it started writes there too: the variable is inherited)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from mmhil import pacedlog

ROOT = Path(__file__).resolve().parent
# the project's own suites; hil/examples is the plugin's example suite, run on whichever rig `--rig` names
SUITES = tuple(ROOT / d for d in ("tests", "protocol/python/tests", "scheduler-gui/tests", "analysis/tests",
                                  "hil/tests"))
TIER_MARKERS = ("paced", "paced_smoke")
LOG_KEY = pytest.StashKey[Path]()
START_KEY = pytest.StashKey[int]()


def pytest_configure(config: pytest.Config) -> None:
    folder = Path(tempfile.mkdtemp(prefix="mmrig-paced-log-"))
    config.stash[LOG_KEY] = folder / "paced.log"
    os.environ[pacedlog.ENV] = str(config.stash[LOG_KEY])     # xdist: each worker sets its own


def pytest_unconfigure(config: pytest.Config) -> None:
    log = config.stash.get(LOG_KEY, None)
    if log is not None:
        if os.environ.get(pacedlog.ENV) == str(log):
            del os.environ[pacedlog.ENV]
        shutil.rmtree(log.parent, ignore_errors=True)


def _size(log: Path) -> int:
    try:
        return log.stat().st_size
    except FileNotFoundError:
        return 0


def _tiered(item: pytest.Item) -> bool:
    path = Path(str(item.path)).resolve()
    return any(path.is_relative_to(suite) for suite in SUITES)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> object:
    item.stash[START_KEY] = _size(item.config.stash[LOG_KEY])
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    result = yield          # every fixture torn down first: the test's benches and children are gone
    log = item.config.stash[LOG_KEY]
    start = item.stash.get(START_KEY, None)
    if start is None or _size(log) <= start or not _tiered(item):
        return result
    if any(item.get_closest_marker(m) for m in TIER_MARKERS):
        return result
    with open(log, "rb") as f:
        f.seek(start)
        started = [json.loads(line) for line in f.read().decode().splitlines() if line.strip()]
    if started:
        benches = "; ".join(f"{s['bench']} (pid {s['pid']}, {s['test'] or 'outside a test'})" for s in started)
        pytest.fail(f"{item.nodeid} started {len(started)} paced bench(es) without the `paced` marker (long tier, "
                    f"make check) or `paced_smoke` (the fast tier's smoke runs): {benches}. Run it in lockstep "
                    "if wall-clock pacing is not its point, else mark it.", pytrace=False)
    return result
