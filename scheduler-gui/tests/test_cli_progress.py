"""`mmrig run`'s live progress line: on a terminal one line rewritten in place on stderr, none with
-q or when stderr is not a terminal; the line's content and its observer's thread safety, and the histogram
and gates it sits beside, checked without a bench. No test here depends on timing: a real run under a pty
is checked for a line that was drawn and erased, not for how often."""

from __future__ import annotations

import io
import os
import pty
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from mmanalysis.histfile import hist_text
from mmanalysis.histogram import bin_counts, latency_histogram
from mmrig.gates import EXIT_GATE, EXIT_INVALID, EXIT_PASS, Gates, exit_code, judge, parse_fail_on
from mmrig.junit import junit_xml
from mmrig.progress import CLEAR, Field, ProgressLine, bench_lag_text, compose

LINE = re.compile(rb"\r\x1b\[K([^\r\n]*?\d+/30 [^\r\n]*)")


def run_on_pty(*args: str, timeout: float = 120) -> tuple[int, bytes]:
    """`mmrig` with stdin, stdout and stderr on a pseudo-terminal, as a user runs it; all it wrote."""
    pid, fd = pty.fork()
    if pid == 0:                                                  # the child: never returns
        try:
            os.execv(sys.executable, [sys.executable, "-m", "mmrig", *args])
        finally:
            os._exit(127)
    out = bytearray()
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:                                           # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), bytes(out)


@pytest.fixture(scope="module")
def built() -> None:
    from mmhil.bench import ensure_built
    ensure_built()


def test_the_progress_line_on_a_terminal_is_rewritten_in_place_and_erased(tmp_path: Path, built: None) -> None:
    code, out = run_on_pty("run", "--unpaced", "--count", "30", "-o", str(tmp_path / "tty"))
    assert code == 0, out.decode(errors="replace")[-2000:]
    lines = LINE.findall(out)
    assert lines, out[:2000]                        # drawn at least once (at once when the run starts)
    # a pty of no size: 80 columns, the fixed fields whole (no p99: that is a wider terminal's)
    assert all(b"ok " in ln and b"avg" in ln and b"max" in ln and b"ev/s" in ln and b"left" in ln and
               ln.endswith(b"lockstep") and len(ln) <= 79 for ln in lines), lines
    assert b"\n" not in b"".join(lines)             # one line, never a new one
    head = re.search(rb"run +n +mean_us", out).start()      # the summary (80 columns: a pty of no size)
    assert out[:head].rstrip(b" ").endswith(CLEAR.encode())   # erased before the summary
    assert re.search(rb"tty +30 ", out[head:]) and LINE.search(out[head:]) is None


def test_quiet_shows_no_progress_line_on_a_terminal(tmp_path: Path, built: None) -> None:
    code, out = run_on_pty("run", "--unpaced", "--count", "5", "-q", "-o", str(tmp_path / "q"))
    assert code == 0, out.decode(errors="replace")[-2000:]
    assert b"\x1b[K" not in out and LINE.search(out) is None and b"0/0/0/0" in out


@dataclass
class Ev:
    event: int
    outcome: str | None
    latency_us: float | None
    measurable: bool = True
    scheduled_tc: int = 0
    sent_s: float | None = 0.0


def test_the_line_says_done_of_total_on_time_p99_max_and_lag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    stream = io.StringIO()
    p = ProgressLine(stream, 200, bench_lag_text(lambda: {"lag_max_us": 312.0, "lag_p99_us": 40.0}), name="r")
    p._lag_text = p.lag()
    for i in range(100):
        p.observer("event", Ev(i, "ok", float(i)))
        p.observer("event", Ev(i, "ok", float(i)))               # a second notice of a done event counts once
    p.observer("event", Ev(100, None, None))                     # not done yet
    p.observer("event", Ev(101, "missed", None))
    p.observer("event", Ev(102, "late", 5000.0, measurable=False))   # left out of the figures
    p.observer("timecode", 7)
    text = p.text()
    assert text.startswith("r:  102/200  ok 98.0%  min 0.000  avg 49.50  p99 98.01  max 99.00 us     - ev/s      - left")
    assert "  lag 312.0 us  (lag p99 40.0 us)  " in text
    p.draw()
    assert stream.getvalue() == CLEAR + text
    p.close()
    assert stream.getvalue().endswith(CLEAR)


def a_kilohertz_line(columns: int, monkeypatch: pytest.MonkeyPatch, total: int | None = 600_000,
                     lag: str = "bench lag max 12.31 ms (p99 40.0 us)") -> tuple[str, io.StringIO]:
    """The line of a run of `total` events at 1,000 a second, 2 s in, drawn on a terminal `columns` wide."""
    monkeypatch.setenv("COLUMNS", str(columns))
    now = [0.0]
    stream = io.StringIO()
    p = ProgressLine(stream, total, lambda: lag, name="normal-khz", clock=lambda: now[0])
    p._lag_text = p.lag()
    for step in range(20):
        for i in range(100):
            p.observer("event", Ev(step * 100 + i, "ok" if i else "late", i * 1.7))
        now[0] += 0.1
        p.text()
    p.draw()
    return stream.getvalue().removeprefix(CLEAR), stream


def test_at_80_columns_the_fixed_fields_fit_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # at 80 columns the line was cut after the maximum: the events a second, the time left and the lag were lost
    line, _ = a_kilohertz_line(80, monkeypatch)
    assert line == "  2000/600000 ok 99.0% avg 84.15 max 168.3 us 1000 ev/s  ~10m left lag 12.31 ms", line
    assert len(line) <= 79
    line, _ = a_kilohertz_line(80, monkeypatch, total=200, lag="lockstep")
    assert line == "2000/200  ok 99.0%  avg 84.15  max 168.3 us  1000 ev/s      - left  lockstep", line
    line, _ = a_kilohertz_line(80, monkeypatch, total=None)             # a run for a time (-D): no time left
    assert line == "   2000 events  ok 99.0%  avg 84.15  max 168.3 us  1000 ev/s  lag 12.31 ms", line


def test_at_132_columns_the_name_minimum_and_p99_join_them(monkeypatch: pytest.MonkeyPatch) -> None:
    line, _ = a_kilohertz_line(132, monkeypatch)
    assert line == ("normal-khz:    2000/600000  ok 99.0%  min 0.000  avg 84.15  p99 166.6  max 168.3 us  1000 ev/s"
                    "   ~10m left  lag 12.31 ms"), line
    assert len(line) <= 131
    wide, _ = a_kilohertz_line(200, monkeypatch)                       # and wider still: the lag's p99, the time
    assert wide == line + "  (lag p99 40.0 us)  2 s"


def test_a_field_is_left_out_whole_never_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = [Field("2000/200"), Field("r:", 3), Field("ok 99.0%"), Field("min 0.000", 1), Field("lag 1.0 ms")]
    for width in range(8, 60):
        line = compose(fields, width)
        kept = [f.text for f in fields if f.text in line]
        assert line in ("  ".join(kept), " ".join(kept)) and len(line) <= width, (width, line)
        assert ("r:" in kept) <= ("min 0.000" in kept) <= ("lag 1.0 ms" in kept), (width, line)   # by rank
    for columns in range(80, 200):
        line, _ = a_kilohertz_line(columns, monkeypatch)
        assert len(line) <= columns - 1 and line.endswith(("ms", "us", "us)", " s", "left")), (columns, line)


def test_the_line_says_the_events_a_second_over_the_last_second() -> None:
    now = [100.0]
    p = ProgressLine(io.StringIO(), None, clock=lambda: now[0])
    assert "   - ev/s" in p.text()                               # nothing to say before half a second
    for step in range(1, 31):                                    # 3 s at 1,000 events a second, drawn 10 times a second
        for i in range(100):
            p.observer("event", Ev((step - 1) * 100 + i, "ok", 1.0))
        now[0] += 0.1
        text = p.text()
    assert "  1000 ev/s  " in text and text.endswith("  3 s")
    now[0] += 1.0                                                # a second with no event ended: the pace says so
    p.text()
    now[0] += 0.1
    assert "  0 ev/s  " in p.text()


def test_the_observer_is_thread_safe() -> None:
    p = ProgressLine(io.StringIO(), None)

    def feed(k: int) -> None:
        for i in range(k, 4000, 4):
            p.observer("event", Ev(i, "ok", 1.0))

    threads = [threading.Thread(target=feed, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert p.text().startswith("   4000 events  ok  100%")


def test_histogram_bins_overflow_and_worst() -> None:
    rows = [Ev(0, "ok", 0.0), Ev(1, "ok", 0.999), Ev(2, "late", 1500.0, scheduled_tc=9, sent_s=0.5),
            Ev(3, "ok", 2.5), Ev(4, "early", -3.0), Ev(5, "missed", None), Ev(6, "ok", 7.0, measurable=False)]
    h = latency_histogram(rows, 1.0)
    assert h["n"] == 4 and h["counts"][0] == 2 and h["counts"][2] == 1 and h["overflow"] == 1
    assert sum(h["counts"]) + h["overflow"] + h["underflow"] == h["n"]
    assert h["worst"] == {"event": 2, "latency_us": 1500.0, "outcome": "late", "scheduled_tc": 9, "sent_s": 0.5}
    assert h["overflow_events"] == [2]                 # by event number: cyclictest's overflow cycle numbers
    assert bin_counts([-1.0, 0.5, 10.0], 5.0, bins=2) == ([1, 0], 1, 1)
    with pytest.raises(ValueError):
        latency_histogram(rows, 0)
    sidecar = {"name": "x", "histogram": latency_histogram(rows, 500.0), "summary": {}, "config": {"count": 7}}
    body = [ln for ln in hist_text(sidecar).splitlines() if not ln.startswith("#")]
    assert body[:5] == ["000000 000003", "000500 000000", "001000 000000", "001500 000001", "002000 000000"]
    assert len(body) == 1000
    # the header: the command line when given; normal mode's own knobs, not a dispatch path; no None
    normal = dict(sidecar, config={"mode": "normal", "accuracy": 100, "discipline": True, "dispatch": "isr"},
                  load={"scheduler_nice": 0, "bench_priority": None})
    head = [ln for ln in hist_text(normal, "mmrig run --mode normal -D 10m --hist").splitlines() if ln.startswith("#")]
    assert head[1] == "# command: mmrig run --mode normal -D 10m --hist"
    assert "accuracy 100, discipline on" in head[2] and "dispatch" not in head[2]
    assert not any("priority None" in ln for ln in head)


def test_gates_and_their_order() -> None:
    summary = {"max_us": 12.0, "on_time_share": 0.9, "outcomes": {"ok": 9, "late": 0, "early": 0, "missed": 1}}
    g = Gates(parse_fail_on("late,missed"), 10.0, 95.0)
    res = {r.gate: r for r in judge(g, summary)}
    assert [res[k].status for k in ("fail_on_late", "fail_on_missed", "max_latency_us", "min_on_time")] == \
        ["pass", "fail", "fail", "fail"]
    assert res["max_latency_us"].text == "max latency 12.000 us > 10 us (--max-latency-us)"
    assert exit_code(True, list(res.values())) == EXIT_GATE
    assert exit_code(False, judge(g, summary, valid=False)) == EXIT_INVALID     # 3 beats 1
    assert exit_code(True, judge(Gates(), summary)) == EXIT_PASS
    assert judge(Gates(max_latency_us=5.0), {"max_us": None})[0].failed        # nothing measured: no pass
    with pytest.raises(ValueError, match="soon"):
        parse_fail_on("late,soon")
    xml = junit_xml("n", list(res.values()), valid=True, files=["a.csv"])
    assert xml.startswith(b"<?xml") and xml.count(b"<failure") == 3 and b"files: a.csv" in xml


def test_the_summary_line_adds_up_with_the_events_left_out() -> None:
    from mmsched.verdict.stats import format_summary

    s = {"n": 63, "mean_us": 300.0, "variance_us2": 10.0, "min_us": 1.0, "p50_us": 2.0, "p99_us": 3.0,
         "p999_us": 4.0, "max_us": 5.0, "outcomes": {"ok": 52, "late": 48, "early": 0, "missed": 0, "lost": 0}}
    head, line = format_summary("normal", s).splitlines()
    assert head.split()[:4] == ["run", "n", "left", "out"] and line.split()[:3] == ["normal", "63", "37"]


def test_while_normal_mode_waits_for_the_tick_fit_the_line_says_so() -> None:
    # normal mode fits the tick length from 64 TIMECODEs (4.6 s) before it fires: the line said "0/100 events ...
    # p99 -" all that time, as if the run were stuck
    now = [0.0]
    p = ProgressLine(io.StringIO(), 100, lambda: "bench lag max 1.0 ms", name="n", clock=lambda: now[0])
    p._lag_text = p.lag()
    p.observer("tick_fit", (23, 64))
    now[0] = 2.0
    text = p.text()
    assert text.startswith("n:  waiting for the tick fit (23 of 64 TIMECODEs), then 100 events"), text
    assert "p99" not in text and "ev/s" not in text
    assert "lag   1.0 ms" in text and text.endswith("  2 s")
    assert p.text(79) == "waiting for the tick fit (23 of 64 TIMECODEs), then 100 events  lag   1.0 ms"
    p.observer("tick_fit", (64, 64))                              # fitted: the events' figures from here
    assert p.text().startswith("n:    0/100  ok    -%")
    p.observer("tick_fit", (40, 64))
    p.observer("phase", "running")                                # the run fires: whatever the fit said
    assert p.text().startswith("n:    0/100  ok")


@pytest.mark.paced
def test_a_paced_normal_run_on_a_terminal_says_it_waits_for_the_tick_fit(tmp_path: Path, built: None) -> None:
    code, out = run_on_pty("run", "--mode", "normal", "--count", "3", "-o", str(tmp_path / "n"))
    assert code in (0, 3), out.decode(errors="replace")[-2000:]        # (3: a host stall made the paced run invalid)
    waits = re.findall(rb"waiting for the tick fit \((\d+) of 64 TIMECODEs\), then 3 events", out)
    assert waits, out[:3000]
    assert int(waits[-1]) > int(waits[0])                             # it counts up as they come
    assert re.search(rb"\r\x1b\[K[^\r\n]*\d/3 ", out), out[-3000:]   # then the events' line
