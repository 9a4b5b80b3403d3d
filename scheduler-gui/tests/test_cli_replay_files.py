"""`mmrig replay RUN --around worst` (or --trace, --vcd, --pc-moments) without --keep was refused: its files are
the point, so they go to a folder beside the run, NAME.replay/, named in one line on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MMRIG = [sys.executable, "-m", "mmrig"]


def test_a_replay_refused_names_where_its_files_would_go_and_leaves_no_folder(tmp_path: Path) -> None:
    done = subprocess.run([*MMRIG, "replay", str(tmp_path / "r.csv"), "--around", "worst"], capture_output=True,
                          text=True, timeout=60)
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "--keep DIR: give one" not in lines[0] and f"go to {tmp_path / 'r.replay'} without --keep DIR" in lines[0]
    assert not (tmp_path / "r.replay").exists()


@pytest.mark.paced
def test_around_worst_without_keep_writes_beside_the_run_and_says_where(tmp_path: Path) -> None:
    from mmhil.bench import ensure_built
    ensure_built()
    out = tmp_path / "r"
    ran = subprocess.run([*MMRIG, "run", "--count", "10", "-q", "-o", str(out)], capture_output=True, text=True,
                         timeout=180)
    assert ran.returncode in (0, 3), ran.stderr            # (3: a host stall made the paced run invalid)
    done = subprocess.run([*MMRIG, "replay", str(out.with_suffix(".csv")), "--around", "worst"], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = tmp_path / "r.replay"
    assert f"mmrig replay: the replay's files are in {folder}/" in done.stderr
    assert (folder / "r.around.perfetto-trace").stat().st_size > 1000 and (folder / "r.around.vcd").is_file()
