"""A rerun keeps an invalid run as an earlier try (mmrig.attempts): `mmrig run --force` over an invalid run at
OUT sets it aside as OUT.attemptK first (the next free K), as `mmrig demo` does; a valid run is replaced."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mmrig.attempts import keep_invalid, next_attempt

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "analysis" / "tests"))
from mma_helpers import subprocess_env  # noqa: E402


def _run(folder: Path, name: str, valid: bool) -> tuple[Path, Path]:
    csv, js = folder / f"{name}.csv", folder / f"{name}.json"
    csv.write_text("event\n0\n")
    js.write_text(json.dumps({"name": name, "valid": valid}))
    return csv, js


def test_an_invalid_run_is_kept_as_the_next_attempt(tmp_path):
    csv, js = _run(tmp_path, "exp2-normal", False)
    _run(tmp_path, "exp2-normal.attempt1", False)          # an earlier try of the demo
    assert next_attempt(csv) == 2
    kept = keep_invalid(csv, js)
    assert kept == tmp_path / "exp2-normal.attempt2.csv" and not csv.exists() and not js.exists()
    assert json.loads((tmp_path / "exp2-normal.attempt2.json").read_text())["name"] == "exp2-normal.attempt2"
    ok_csv, ok_js = _run(tmp_path, "exp4", True)
    assert keep_invalid(ok_csv, ok_js) is None and ok_csv.exists()     # a valid run: --force replaces it


def test_mmrig_run_force_keeps_the_invalid_run(tmp_path):
    out = tmp_path / "exp4"
    _run(tmp_path, "exp4", False)
    r = subprocess.run([sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--distance", "2", "--count", "5",
                        "--unpaced", "--quiet", "--force", "-o", str(out)], env=subprocess_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"the invalid run at {out}.csv kept as exp4.attempt1.csv (an earlier try)" in r.stderr
    assert json.loads((tmp_path / "exp4.json").read_text())["valid"] is True
    assert json.loads((tmp_path / "exp4.attempt1.json").read_text()) == {"name": "exp4.attempt1", "valid": False}
