"""A node whose port's open resets it (an Arduino Mega's DTR). The run's session passes the
endpoint's `Ports.reset_on_open` to its links (they listen for the boot HELLO before asking), and a port
that vanished and was reopened reset its node: the run takes that as the node's reset (events in flight
lost, MODE again, the offset learnt again), not as an answer to its handshake.

On a lockstep bench (deterministic): the bench's ports do not reset their nodes on open, so the test's
endpoint says they do and the bench is told to reset the executor as its port goes away (what the DTR of
the reopen does on a Mega)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mmhil import LockstepEndpoint
from mmhil.bench import ensure_built
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Boards, Ports
from mmsched.run.runner import Runner
from mmsched.link.session import Session


@pytest.fixture(scope="module")
def built() -> None:
    ensure_built()


@dataclasses.dataclass
class ResettingLockstep(LockstepEndpoint):
    """A lockstep bench whose ports claim to reset their nodes when opened."""

    resets: bool = True

    def open(self, cfg: RunConfig) -> Ports:
        return dataclasses.replace(super().open(cfg), reset_on_open=self.resets)


def run_with_a_replug(tmp_path: Path, resets: bool) -> tuple[Any, Runner]:
    endpoint = ResettingLockstep(resets=resets)
    cfg = RunConfig(mode="verification", distance=2, count=60, seed=3, out=tmp_path / f"replug-{resets}")
    runner = Runner(cfg, endpoint)
    marks: dict[str, int] = {}

    def inject(kind: str, obj: Any) -> None:
        if kind != "timecode":
            return
        first = marks.setdefault("first", obj)
        if obj - first >= 15 and "done" not in marks:
            marks["done"] = obj
            bench = endpoint.bench
            assert bench is not None
            assert bench.control("hangup executor 0.3").get("ok")
            assert bench.control("reset executor").get("ok")    # the reopen's DTR, ahead of it

    runner.observer = inject
    return runner.run(), runner


def test_a_reopened_port_that_resets_its_node_is_the_nodes_reset(built, tmp_path: Path) -> None:
    res, runner = run_with_a_replug(tmp_path, resets=True)
    sc = res.sidecar
    kinds = Counter((f["kind"], f["node"]) for f in sc["faults"])
    assert kinds[("link_fault", "executor")] == 1
    assert kinds[("node_reset", "executor")] == 1                 # one reset, not one per HELLO read
    assert runner.counters.get("executor_reset_by_reopen") == 1
    assert not runner.counters.get("executor_hello_midrun")      # the reopen's HELLOs were not resets again
    assert runner.session.links["executor"].reconnects == 1
    # MODE again: the events after the recovery are measured and on time (verification: ok)
    outcomes = Counter((e.outcome, e.reason) for e in res.events)
    assert len(res.events) == 60 and outcomes[("ok", None)] >= 55, outcomes
    assert not [e for e in res.events if e.outcome == "missed"], outcomes
    assert {r["code"] for r in sc["invalid_reasons"]} >= {"node_reset", "link_fault"}
    assert sc["invariant"]["ok"]


def test_the_same_replug_taken_as_a_handshake_answer_leaves_the_executor_without_its_mode(built, tmp_path) -> None:
    """The control: where the endpoint says the open does not reset (the bench's default), the reset
    executor's HELLO is taken for the answer to the reconnect and it never gets its MODE again: the run's
    recovery asks it for STATUS in vain and no more events are made (12 of 60 when written), what the
    reset_on_open path is for."""
    res, runner = run_with_a_replug(tmp_path, resets=False)
    kinds = Counter(f["kind"] for f in res.sidecar["faults"])
    assert kinds["node_reset"] == 0
    assert runner.counters.get("recovery_retries", 0) > 0 and len(res.events) < 30


def test_session_passes_reset_on_open_to_its_links_and_boards_set_it() -> None:
    assert Boards("/dev/ttyACM0", "/dev/ttyACM1").open(RunConfig(mode="mixed")).reset_on_open is True
    assert Boards("/dev/ttyUSB0", reset_on_open=False).open(RunConfig(mode="normal")).reset_on_open is False
    assert Ports("a", "b").reset_on_open is False                 # the bench's endpoints, for now

    class Idle(Boards):
        pass

    s = Session(Idle("loop://"))
    s.open(Ports("loop://", None, reset_on_open=True))
    try:
        assert s.reset_on_open and s.links["profiler"].reset_on_open
    finally:
        s.close()


def test_a_replug_on_an_arduino_bench_resets_the_node_and_the_run_recovers(built, tmp_path: Path) -> None:
    """The same replug on a bench in Arduino mode: nobody resets the executor by hand; its port's
    reopen does, through the Mega's bootloader, as the DTR does on the board."""
    endpoint = LockstepEndpoint(arduino=True)
    cfg = RunConfig(mode="verification", distance=2, count=60, seed=3, out=tmp_path / "replug-mega")
    runner = Runner(cfg, endpoint)
    marks: dict[str, int] = {}

    def inject(kind: str, obj: Any) -> None:
        if kind == "timecode" and obj - marks.setdefault("first", obj) >= 15 and "done" not in marks:
            marks["done"] = obj
            assert endpoint.bench is not None and endpoint.bench.control("hangup executor 0.3").get("ok")

    runner.observer = inject
    res = runner.run()
    sc = res.sidecar
    kinds = Counter((f["kind"], f["node"]) for f in sc["faults"])
    assert kinds[("node_reset", "executor")] == 1 and runner.counters.get("executor_reset_by_reopen") == 1, kinds
    outcomes = Counter((e.outcome, e.reason) for e in res.events)
    assert len(res.events) == 60 and outcomes[("ok", None)] >= 50, outcomes
    assert not [e for e in res.events if e.outcome == "missed"], outcomes
    assert sc["invariant"]["ok"]
