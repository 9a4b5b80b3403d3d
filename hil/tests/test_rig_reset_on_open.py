"""The Rig on boards whose port's open resets the node (an Arduino Mega's DTR) listens for the
boot HELLO before it asks; on the bench it does so only when told the bench behaves as a Mega."""

from __future__ import annotations

import sys
from pathlib import Path

import mmproto as mp
from mmhil import Bench, Rig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "protocol" / "python" / "tests"))
from fake_arduino import FakeArduino  # noqa: E402

HELLO = mp.Hello(mp.PROTO_VERSION, mp.NodeKind.PROFILER, 0x0100, 16_000_000, 16_000_000, 1_137_778, 9600, 0, 0)


def test_a_rig_on_boards_listens_first_and_gets_the_reset_megas_hello() -> None:
    with FakeArduino(HELLO) as node:
        rig = Rig(node.path, None)
        assert rig.reset_on_open is True and rig.profiler.reset_on_open
        with rig.open():
            assert rig.hellos["profiler"] == HELLO
        assert node.resets == 1 and node.held == 0 and node.bytes_in_bootloader == 0


def test_a_rig_on_boards_told_there_is_no_reset_asks_at_once() -> None:
    with FakeArduino(HELLO, resets_on_open=False, running_at_start=True) as node:
        with Rig(node.path, None, reset_on_open=False).open(hello_timeout=0.6) as rig:
            assert rig.hellos["profiler"] == HELLO


def test_rig_on_bench_listens_only_for_an_arduino_bench(tmp_path: Path) -> None:
    """Lockstep (virtual time): the nodes boot when the first grant lets them, so the listening link hears
    their boot HELLO; the plain bench's links ask at once."""
    with Bench(run_dir=tmp_path / "plain", lockstep=True) as bench, Rig.on_bench(bench) as rig:
        assert rig.reset_on_open is False
        assert rig.hellos["executor"].node_kind == mp.NodeKind.EXECUTOR
    # a bench in Arduino mode: the Mega's bootloader runs first and each open resets the node
    with Bench(run_dir=tmp_path / "mega", lockstep=True, arduino=True) as bench, Rig.on_bench(bench) as rig:
        assert rig.reset_on_open is True and rig.executor.reset_on_open
        assert rig.hellos["profiler"].node_kind == mp.NodeKind.PROFILER
        status = bench.status()
        assert all(status["nodes"][n]["open_resets"] >= 1 for n in ("profiler", "executor")), status["nodes"]
        assert rig.now() < mp.link.HELLO_LISTEN_S + 1.0
        ev = rig.schedule(5, ticks_ahead=2)
        assert ev.outcome == "ok"
