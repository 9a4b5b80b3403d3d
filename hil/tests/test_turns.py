"""Paced benches take turns on one machine (mmhil.turns): a second process waits until the first gives its turn
back, one process may hold several, and without MMRIG_PACED_TURNS nothing is locked."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HIL = Path(__file__).resolve().parents[1]

HOLD = """
import sys, time
sys.path.insert(0, {hil!r})
from mmhil import turns
assert turns.take()
print("held", flush=True)
time.sleep(float(sys.argv[1]))
turns.release()
"""


def holder(lock: Path, hold_s: float) -> subprocess.Popen[str]:
    env = {**os.environ, "MMRIG_PACED_TURNS": str(lock)}
    env.pop("MMRIG_PACED_TURNS_NICE", None)
    return subprocess.Popen([sys.executable, "-c", HOLD.format(hil=str(HIL)), str(hold_s)], env=env,
                            stdout=subprocess.PIPE, text=True)


def test_a_second_process_waits_for_the_first_to_give_its_turn_back(tmp_path: Path) -> None:
    lock = tmp_path / "sub" / "turns"          # its folder is made too
    first = holder(lock, 1.5)
    assert first.stdout is not None and first.stdout.readline().strip() == "held"
    began = time.monotonic()
    second = holder(lock, 0)
    assert second.stdout is not None and second.stdout.readline().strip() == "held"
    waited = time.monotonic() - began
    assert first.wait(10) == 0 and second.wait(10) == 0
    # the second took its turn only once the first had ended its 1.5 s hold (on any host: never before)
    assert first.returncode == 0 and waited > 1.0, waited


def test_one_process_holds_several_turns_and_the_last_release_frees_the_machine(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    from mmhil import turns

    lock = tmp_path / "turns"
    monkeypatch.setenv("MMRIG_PACED_TURNS", str(lock))
    monkeypatch.delenv("MMRIG_PACED_TURNS_NICE", raising=False)
    assert turns.take() and turns.take()
    turns.release()
    other = holder(lock, 0)
    time.sleep(0.5)
    assert other.poll() is None            # still waiting: this process holds one turn yet
    turns.release()
    assert other.wait(10) == 0


def test_without_the_setting_nothing_is_locked(monkeypatch) -> None:
    from mmhil import turns

    monkeypatch.delenv("MMRIG_PACED_TURNS", raising=False)
    assert turns.take() is False
    turns.release()                         # nothing held: nothing to give back
