"""A replay's record proves itself, and a replay says what it cannot do: the run's sidecar holds its input
record's size, SHA-256 and reads, and a record that does not match (a flipped bit, a record cut at a record
boundary) is refused in one line before anything is simulated; a window wider than the replay is refused the
same way; a replay leaves no folder behind; a fault injected into the run that the replay cannot put where the
run had it is a note naming it and why, not a firmware difference, and the RESULTs of events the run lost to a
fault of the rig are not "extra"."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from mmanalysis import inputrecord
from mmhil import BenchEndpoint
from mmhil.bench import ensure_built
from mmhil.replay import replay
from mmsched.model.config import RunConfig
from mmsched.run.runner import Runner, run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import RERECORD, recorded_run  # noqa: E402


def mmrig_replay(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmrig", "replay", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def paced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A paced mixed run's files, recorded once (helpers.recorded_run)."""
    ensure_built()
    return recorded_run(tmp_path_factory.mktemp("record"), "paced")


def copy_run(csv: Path, folder: Path, record: bytes | None = None) -> Path:
    """The run's CSV and sidecar in FOLDER, with its record or RECORD in its place."""
    for suffix in (".csv", ".json", ".inputs"):
        (folder / f"{csv.stem}{suffix}").write_bytes(csv.with_suffix(suffix).read_bytes())
    if record is not None:
        (folder / f"{csv.stem}.inputs").write_bytes(record)
    return folder / csv.name


def test_the_sidecar_vouches_for_its_record(paced: Path) -> None:
    import hashlib

    section = json.loads(paced.with_suffix(".json").read_text())["inputs"]
    data = paced.with_suffix(".inputs").read_bytes()
    assert section["size"] == len(data) and section["sha256"] == hashlib.sha256(data).hexdigest()
    assert section["reads"] == len(inputrecord.read(paced.with_suffix(".inputs")).reads)


def test_every_flipped_bit_is_refused_in_one_line_before_simulating(paced: Path, tmp_path: Path) -> None:
    data = paced.with_suffix(".inputs").read_bytes()
    rng = random.Random(7)
    for bit in sorted(rng.sample(range(len(data) * 8), 12)):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        csv = copy_run(paced, tmp_path, bytes(flipped))
        t0 = time.monotonic()
        done = mmrig_replay(str(csv))
        assert done.returncode == 2 and done.stdout == "", (bit, done.stdout, done.stderr)
        assert len(done.stderr.splitlines()) == 1 and "not replayed" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and time.monotonic() - t0 < 30


def test_a_record_cut_at_a_record_boundary_is_refused(paced: Path, tmp_path: Path) -> None:
    """The cut the size and hash catch, and the reads count too, for a sidecar that predates them."""
    path = paced.with_suffix(".inputs")
    record = inputrecord.read(path)
    cut = inputrecord.InputRecord(record.header, record.reads[:-2])
    inputrecord.write(tmp_path / "cut.inputs", cut)
    csv = copy_run(paced, tmp_path, (tmp_path / "cut.inputs").read_bytes())
    done = mmrig_replay(str(csv))
    assert done.returncode == 2 and "the run's sidecar says it wrote" in done.stderr, done.stderr
    meta = json.loads(csv.with_suffix(".json").read_text())
    for key in ("size", "sha256"):
        del meta["inputs"][key]
    csv.with_suffix(".json").write_text(json.dumps(meta))
    done = mmrig_replay(str(csv))
    assert done.returncode == 2 and f"{len(cut.reads)} reads, the run's sidecar says it wrote " \
        f"{len(record.reads)}" in done.stderr, done.stderr


def test_a_replay_leaves_no_folder_behind(paced: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a temporary folder of its own: the shared one also holds the replays other tests (other xdist workers) are
    # making at the same moment, which made this test fail for another test's folder
    # (in the system's, not under tmp_path: the bench's socket paths under it passed the 108 bytes a Unix socket
    # may have once pytest's numbered folders reached four digits)
    own = Path(tempfile.mkdtemp(prefix="mmrig-t-"))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(own))
        c, _ = replay(paced)
        assert c.exact, (RERECORD, c.differences[:3])
        assert list(own.glob("mmrig-replay-*")) == []
        assert tempfile.gettempdir() == str(own)  # (the replay's folders were made here, or the check saw nothing)
    finally:
        shutil.rmtree(own, ignore_errors=True)


def test_a_window_wider_than_the_replay_is_refused_before_it_runs(paced: Path, tmp_path: Path) -> None:
    t0 = time.monotonic()
    done = mmrig_replay(str(paced), "--around", "3", "--window-ms", "1e12", "--keep", str(tmp_path))
    assert done.returncode == 2 and "--window-ms 1e+12: the window is 0 < MS <= the whole replay" in done.stderr
    assert time.monotonic() - t0 < 20 and list(tmp_path.iterdir()) == []
    done = mmrig_replay(str(paced), "--around", "3", "--window-ms", "nan", "--keep", str(tmp_path))
    assert done.returncode == 2 and "--window-ms must be > 0" in done.stderr


def faulted_run(folder: Path, name: str, commands: tuple[str, ...], at_tick: int = 12) -> Path:
    """A paced mixed run of 30 events with COMMANDS sent to the bench at its AT_TICK-th tick."""
    endpoint = BenchEndpoint()
    runner = Runner(RunConfig(mode="mixed", distance=2, count=30, out=folder / name), endpoint)
    seen: dict[str, int] = {}

    def inject(kind: str, obj: object) -> None:
        if kind != "timecode":
            return
        seen["n"] = seen.get("n", 0) + 1
        if seen["n"] == at_tick:
            assert endpoint.bench is not None
            for text in commands:
                assert endpoint.bench.control(text).get("ok"), text

    runner.observer = inject
    result = runner.run()
    assert result.sidecar["inputs"]["commands"] == len(commands)
    return (folder / name).with_suffix(".csv")


@pytest.mark.paced
def test_a_garbage_burst_the_replay_cannot_place_is_a_note_not_a_difference(tmp_path: Path) -> None:
    csv = faulted_run(tmp_path, "garbage", ("garbage executor in 48", "garbage profiler in 48"))
    c, _ = replay(csv)
    note = next((n for n in c.notes if n.startswith("not reproduced: `garbage executor in 48` at cycle")), None)
    assert note is not None and "queue from the start" in note, c.notes
    assert not c.differences and not c.extra, (c.differences, c.extra)
    done = mmrig_replay(str(csv))
    assert done.returncode == 0 and "note: not reproduced: `garbage executor in 48`" in done.stdout, done.stdout


@pytest.mark.paced
def test_the_results_of_events_lost_to_a_stuck_wire_are_not_extra(tmp_path: Path) -> None:
    csv = faulted_run(tmp_path, "stuck", ("stuck timecode 0 1 0.5",))
    rows = [r for r in __import__("csv").DictReader(csv.open()) if r["outcome"] == "lost"]
    assert rows and all(r["reason"] == "timecode_fault" for r in rows), rows
    c, _ = replay(csv)
    assert c.exact and c.compared == 30, (c.differences, c.extra)
    assert any(n.startswith(f"{len(rows)} RESULT") and "timecode_fault" in n for n in c.notes), c.notes
