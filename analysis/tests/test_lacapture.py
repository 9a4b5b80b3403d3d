"""A logic analyzer's capture lined up with a run's CSV (boards). The fixture is real sigrok output:
a lockstep mixed run of 40 events (random ids) on the bench with its wires' VCD, converted by sigrok-cli 0.7.2
as a 1 MS/s analyzer would have captured them:

    sigrok-cli -I vcd:downsample=10000 -i wires.vcd -o capture.sr      (the VCD then had a 100 ps timescale)
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from mmanalysis import lacapture
from mmanalysis.cli import main

DATA = Path(__file__).parent / "data" / "capture"


def test_every_event_edge_is_matched_and_agrees_with_the_profiler_to_a_sample() -> None:
    tr = lacapture.read_sr(DATA / "capture.sr")
    assert tr.cpu_hz == 1_000_000
    run = pd.read_csv(DATA / "run.csv")
    lined = lacapture.line_up(tr, run)
    assert len(lined) == len(run) == 40
    assert (lined["event"] >= 0).all() and sorted(lined["event"]) == list(run["event"])
    # the analyzer saw each event in the tick and with the id the run scheduled it
    merged = lined.merge(run, on="event", suffixes=("", "_run"))
    assert (merged["tick"] == merged["scheduled_tc"]).all() and (merged["event_id"] == merged["event_id_run"]).all()
    # 1.375 us on the profiler's 16 MHz clock; the analyzer samples every 1 us
    assert lined["difference_us"].abs().max() <= 1.0 and set(lined["la_delay_us"]) <= {1.0, 2.0}


def test_channels_named_otherwise_are_mapped(tmp_path: Path) -> None:
    # the same capture with the analyzer's own channel names D0..D11, as PulseView leaves them
    renamed = tmp_path / "d.sr"
    with zipfile.ZipFile(DATA / "capture.sr") as src, zipfile.ZipFile(renamed, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "metadata":
                text = data.decode()
                for i, w in enumerate(lacapture.WIRES):
                    text = text.replace(f"probe{i + 1}={w}\n", f"probe{i + 1}=D{i}\n")
                data = text.encode()
            dst.writestr(item, data)
    with pytest.raises(lacapture.CaptureError, match="give --channels"):
        lacapture.read_sr(renamed)
    channels = lacapture.parse_channels(",".join(f"{w}=D{i}" for i, w in enumerate(lacapture.WIRES)))
    assert len(lacapture.event_edges(lacapture.read_sr(renamed, channels))) == 40


def test_the_command_writes_the_lined_up_csv(tmp_path: Path, capsys) -> None:
    for f in DATA.iterdir():
        shutil.copy(f, tmp_path)
    assert main(["capture", str(tmp_path / "capture.sr"), "--run", str(tmp_path / "run.csv")]) == 0
    out = capsys.readouterr().out
    assert "40 matched to the run's events" in out and "within one sample: 40 of 40" in out
    assert len(pd.read_csv(tmp_path / "capture.lined-up.csv")) == 40


@pytest.mark.parametrize("argv, why", [
    (["--channels", "clock=D0"], "is not WIRE=CHANNEL"),
    (["--channels", "strobe=D99"], "not in the capture"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, argv: list[str], why: str) -> None:
    code = main(["capture", str(DATA / "capture.sr"), "--run", str(DATA / "run.csv"), "--out", str(tmp_path / "x.csv")]
                + argv)
    err = capsys.readouterr().err
    assert code == 2 and why in err and err.count("\n") == 1


def test_not_a_capture(tmp_path: Path) -> None:
    bad = tmp_path / "x.sr"
    bad.write_text("hello")
    with pytest.raises(lacapture.CaptureError, match="not a sigrok session file"):
        lacapture.read_sr(bad)


@pytest.mark.parametrize("where", ["missing", "fifo"])
def test_an_out_that_cannot_be_written_is_one_line_said_before_the_work(tmp_path: Path, capsys, where: str) -> None:
    """--out in a folder that is not there (a write makes none on the way) or onto a FIFO: one line, exit 2."""
    import os

    out = tmp_path / "no" / "such" / "x.csv"
    if where == "fifo":
        out = tmp_path / "x.csv"
        os.mkfifo(out)
    code = main(["capture", str(DATA / "capture.sr"), "--run", str(DATA / "run.csv"), "--out", str(out)])
    got = capsys.readouterr()
    assert code == 2 and got.out == "" and got.err.count("\n") == 1, got
    assert got.err.startswith("capture: --out: ") and ("no such folder" if where == "missing" else "is a FIFO") \
        in got.err, got.err

