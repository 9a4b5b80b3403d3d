"""A process that runs many lockstep runs one after another (a sweep's point host, a HIL pytest session, a script)
keeps none of the earlier runs' objects: a run's endpoint, bench handle, links and their reader threads are
freed by the time the next run starts, over the pty as over the line socket."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from mmhil import LockstepEndpoint
from mmhil.bench import ensure_built
from mmsched.model.config import RunConfig
from mmsched.run.runner import run


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


@pytest.mark.parametrize("line", ["socket", "pty"])
def test_a_run_leaves_nothing_of_the_runs_before_it(tmp_path: Path, line: str) -> None:
    endpoints: list[weakref.ref[LockstepEndpoint]] = []
    for i in range(4):
        endpoint = LockstepEndpoint(line=line)
        endpoints.append(weakref.ref(endpoint))
        result = run(RunConfig(mode="mixed", distance=2, count=5, seed=1, name=f"r{i}", out=tmp_path / f"r{i}"),
                     endpoint)
        assert result.valid, result.sidecar["invalid_reason"]
        del endpoint, result
    # the last run's own objects may wait for the next run (or the collector's own time); none of the ones before
    assert [i for i, ref in enumerate(endpoints[:-1]) if ref() is not None] == []


@pytest.mark.parametrize("line", ["socket", "pty"])
def test_a_runs_objects_are_freed_when_it_ends_without_the_cycle_collector(tmp_path: Path, line: str) -> None:
    # what holds no reference cycle is freed the moment its last reference goes, whenever the collector would run
    # (and during a run's events it does not collect the oldest generation at all: quiet.py)
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        endpoint = LockstepEndpoint(line=line)
        dead = weakref.ref(endpoint)
        result = run(RunConfig(mode="mixed", distance=2, count=5, seed=1, name="r", out=tmp_path / "r"), endpoint)
        assert result.valid, result.sidecar["invalid_reason"]
        del endpoint, result
        assert dead() is None
    finally:
        if was_enabled:
            gc.enable()
