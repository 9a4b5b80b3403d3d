"""The executor trace reader and its figures, on a hand-made trace whose every figure is known (one layer:
the bench that writes real traces is tested in hil/tests/test_exectrace.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmanalysis import exectrace as et

# 16 MHz: 16 cycles a microsecond. As FreeRTOS's ATmega port behaves (hil/bench/exectrace.h): the idle task
# sleeps; a timecode edge wakes PCINT2, which switches to the timecode task (tc) inside it and RETIs into tc
# ("R -"); tc drives the event strobe, then blocks, and the idle task resumes in PCINT2's tail until its own
# RETI ("R 11"). The kernel tick interrupts sleep without a switch; one PCINT2 returns to idle without one.
# (data/handmade.exectrace; the GUI's tests draw it too.)
TRACE = (Path(__file__).parent / "data" / "handmade.exectrace").read_text()


@pytest.fixture()
def trace(tmp_path: Path) -> et.ExecTrace:
    p = tmp_path / "run.exectrace"
    p.write_text(TRACE)
    return et.read(p)


def test_reads_header_and_records(trace: et.ExecTrace) -> None:
    assert trace.cpu_hz == 16_000_000 and trace.tasks == {0x100: "tc", 0x200: "idle"}
    assert trace.vectors == {11: "PCINT2", 21: "TIMER0_COMPA"}
    # an interrupt's span runs to its own RETI, the other task's time inside included
    assert trace.irqs == [(1604, 3380, 11), (10000, 10050, 11), (16000, 16160, 21), (17604, 19380, 11)]
    assert (trace.start, trace.end) == (0, 20000)
    assert et.timecode_edges(trace) == [(1600, 1), (17600, 2)]
    assert et.event_edges(trace) == [(1790, 1), (17790, 0)]     # the strobe toggles: either edge is an event


def test_timeline_covers_every_cycle_once(trace: et.ExecTrace) -> None:
    segs = et.timeline(trace)
    assert segs[0].start == 0 and segs[-1].end == 20000
    assert all(a.end == b.start for a, b in zip(segs, segs[1:]))
    assert et.Segment(1604, 1700, "isr", "PCINT2", 0) in segs          # the handler, up to the switch
    assert et.Segment(1700, 3360, "task", "tc") in segs                # tc from the switch (restore included)
    assert et.Segment(3360, 3380, "isr", "PCINT2", 0) in segs          # the same interrupt's tail, on idle
    assert sum(s.end - s.start for s in segs if s.kind == "sleep") == (1604 - 100) + (10000 - 3400) + (
        16000 - 10060) + (17604 - 16170) + (20000 - 19400)


def test_profile_figures(trace: et.ExecTrace) -> None:
    p = et.profile(trace)
    rows = {(r["kind"], r["name"]): r for r in p["tasks"]}
    pc = rows[("isr", "PCINT2")]
    # its handler's own cycles: 96 to the switch + 20 of tail; the spurious one 50
    assert pc["instances"] == 3 and pc["C_us"]["min"] == pytest.approx(50 / 16) and pc["C_us"]["max"] == pytest.approx(116 / 16)
    tc = rows[("task", "tc")]
    assert tc["instances"] == 2 and tc["C_us"]["avg"] == pytest.approx(1660 / 16)
    # U_i: the cycles it ran over the trace's span (2 x 1660 of 20000), not C avg / T avg (103.75 / 1000)
    assert tc["T_us"]["avg"] == pytest.approx(1000.0) and tc["U"] == pytest.approx(3320 / 20000)
    assert p["U"] == pytest.approx(sum(r["U"] for r in p["tasks"] if r["name"] != "idle"))
    assert p["U"] + p["idle"]["share"] == pytest.approx(1.0, abs=1e-5)   # every cycle ran something, or slept
    assert p["by_category"]["dispatch"] == pytest.approx((116 + 50 + 116 + 3320) / 20000, abs=1e-6)
    assert p["by_category"]["tick"] == pytest.approx(160 / 20000)
    assert sum(p["by_category"].values()) == pytest.approx(1.0, abs=1e-5)
    assert p["stray_returns"] == 0 and p["interrupts"] == 4
    # the context switch, in the form of Nordström et al., "Application Specific Real-Time Microkernel in
    # Hardware": PCINT2 returning to idle (50 cycles) against switching to tc (entry to the RETI into tc: 156)
    (call,) = p["service_calls"]
    assert call["call"] == "PCINT2 interrupt" and call["before_us"] == pytest.approx(50 / 16)
    assert call["difference_us"] == pytest.approx(106 / 16) and call["ratio"] == pytest.approx(156 / 50)
    assert et.dispatch_delays(trace) == [pytest.approx(190 / 16)] * 2
    assert any("U = sum of U_i (cycles run over the trace's span)" in line for line in et.profile_table(p))
    # too few pairs for a context-switch figure (1 and 2, not 10 each): none, and why; its restore half is
    # exact anyway: the pointer store to the RETI into tc, 60 cycles, twice
    cs = p["context_switch"]
    assert cs["us"] is None and "10 times" in cs["why"] and (cs["restore_us"], cs["restore_n"]) == (3.75, 2)


# A CPU load at the idle priority keeps the processor whenever nothing else wants it: here it is preempted twice
# by tc for 100 cycles each, and its last instance runs to the trace's end. Its instances are 1000, 100 and 18700
# cycles, the gaps between their starts 1100 and 200: C avg / T avg would be 6600 / 650, ten processors' worth.
CPU_LOAD = """# mmbench executor trace 1
# cpu_hz 16000000
T 0100 tcb_load_cpu
T 0200 tcb_tc
T 0300 xIdleTaskTCB.2692
B 0
S 0 0100
S 1000 0200
S 1100 0100
S 1200 0200
S 1300 0100
E 20000
"""


def test_utilisation_is_the_share_of_the_trace_and_never_passes_one(tmp_path: Path) -> None:
    p = tmp_path / "cpu.exectrace"
    p.write_text(CPU_LOAD)
    prof = et.profile(et.read(p))
    rows = {r["name"]: r for r in prof["tasks"]}
    assert rows["load_cpu"]["instances"] == 3 and rows["load_cpu"]["C_us"]["avg"] == pytest.approx(6600 / 16)
    assert rows["load_cpu"]["U"] == pytest.approx(19800 / 20000) and rows["tc"]["U"] == pytest.approx(200 / 20000)
    assert prof["U"] == pytest.approx(1.0) and prof["idle"]["share"] == 0
    assert prof["by_category"]["load"] == pytest.approx(rows["load_cpu"]["U"])


def test_levels_at_the_start_place_the_timecode_without_inference(tmp_path: Path) -> None:
    # a trace begun mid-run: L records give the port (0x07) and the strobe (1) when it began, so the first
    # change (bit 3 up, bits 0-2 down: 0x08) is the timecode 8, and the strobe's fall is an event
    levels = "".join(f"L 100 timecode{i} {1 if i < 3 else 0}\n" for i in range(8)) + "L 100 strobe 1\n"
    text = ("# mmbench executor trace 1\n# cpu_hz 16000000\nB 100\n" + levels +
            "W 500 timecode0 0\nW 500 timecode1 0\nW 500 timecode2 0\nW 500 timecode3 1\nW 900 strobe 0\nE 1000\n")
    p = tmp_path / "l.exectrace"
    p.write_text(text)
    tr = et.read(p)
    assert tr.initial["strobe"] == 1 and et.timecode_edges(tr) == [(500, 8)] and et.event_edges(tr) == [(900, 0)]


def test_reset_and_frames_taken_before_the_trace(tmp_path: Path) -> None:
    # F: an interrupt taken before the trace began, still open on a task; X reset: every frame is gone
    text = """# mmbench executor trace 1
# cpu_hz 16000000
T 0100 tcb_tc
T 0200 xIdleTaskTCB.2692
V 11 PCINT2
F 50 11 0200
B 100
S 100 0100
S 400 0200
R 420 11
I 500 11
X 600 reset
S 900 0000
Q 950 what a later version might add
E 1000
"""
    p = tmp_path / "r.exectrace"
    p.write_text(text)
    tr = et.read(p)
    assert tr.skipped == 1 and tr.start == 100
    segs = et.timeline(tr)
    assert et.Segment(400, 420, "isr", "PCINT2", 0) in segs           # the F frame's tail, on idle
    assert et.Segment(600, 900, "task", "?") in segs                  # after the reset: no task known
    assert tr.irqs == []                                              # one began before, one never returned
    assert et.instances(tr)[("task", "tc")] == [(100, 400, 300)]


@pytest.mark.parametrize("bad, why", [
    ("hello\n", "not an executor trace"),
    (TRACE.replace("R 1760 -", "R 1760 x"), "malformed 'R'"),
    (TRACE.replace("I 16000 21", "I 15 21"), "goes back"),
    (TRACE.replace("S 1700 0100", "S 1700 zz"), "malformed 'S'"),
    (TRACE.replace("# cpu_hz 16000000\n", ""), "cpu_hz"),
    (TRACE.replace("Z 100 1", "Z 100 2"), "malformed 'Z'"),
])
def test_a_bad_trace_names_the_line(tmp_path: Path, bad: str, why: str) -> None:
    p = tmp_path / "bad.exectrace"
    p.write_text(bad)
    with pytest.raises(et.ExecTraceError, match=why) as exc:
        et.read(p)
    assert str(exc.value).startswith(f"{p}:")


def test_perfetto_trace_reads_back_with_perfettos_own_protos(trace: et.ExecTrace, tmp_path: Path) -> None:
    import pandas as pd
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent

    from mmanalysis import perfettotrace as pt

    # the run: the port read 1 then 2, and the timecode's low 8 bits are the port: tick 257 is 0x01 after a
    # wrap, so the run's scheduled ticks (257, 258) place the edges a whole wrap up
    events = pd.DataFrame({"event": [0, 1], "tag": [1, 2], "event_id": [1, 0], "scheduled_tc": [257, 258],
                           "outcome": ["ok", "missed"], "reason": [None, "timeout"], "latency_us": [1.375, float("nan")]})
    assert et.extended_ticks(trace, events["scheduled_tc"]) == [(1600, 257), (17600, 258)]
    out = tmp_path / "run.perfetto-trace"
    counts = pt.write(trace, out, events)
    t = pt.read_back(out)
    names = {p.track_descriptor.name for p in t.packet if p.HasField("track_descriptor")}
    assert {"cpu", "task tc", "task idle", "isr PCINT2", "isr TIMER0_COMPA", "timecode", "events"} <= names
    begins = [p for p in t.packet if p.HasField("track_event") and p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN]
    ends = [p for p in t.packet if p.HasField("track_event") and p.track_event.type == TrackEvent.TYPE_SLICE_END]
    segs = et.timeline(trace)
    assert len(begins) == len(ends) == counts["slices"] == len(segs) + sum(s.kind == "isr" for s in segs) + 5
    pc = [p for p in begins if p.track_event.name == "PCINT2" and p.timestamp == 100250]   # cycle 1604 = 100.25 us
    assert pc and {a.name: a.uint_value for a in pc[0].track_event.debug_annotations}["start_cycle"] == 1604
    instants = [p.track_event.name for p in t.packet if p.HasField("track_event")
                and p.track_event.type == TrackEvent.TYPE_INSTANT]
    assert instants == ["fired id 1", "fired id 0", "scheduled event 0 (ok)", "scheduled event 1 (missed)"]
    assert all(p.trusted_packet_sequence_id == 1 for p in t.packet)


def test_perfetto_trace_never_written_through_a_planted_link(trace: et.ExecTrace, tmp_path: Path) -> None:
    """Another user's links under the trace's name and under the temporary name it was once written to
    (OUT.perfetto-trace.tmp): both left alone, their target unchanged, the trace a file of its own."""
    import os

    from mmanalysis import perfettotrace as pt

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "run.perfetto-trace"
    for link in (out, tmp_path / "run.perfetto-trace.tmp"):
        link.symlink_to(victim)
        if os.getuid() == 0:
            os.lchown(link, 65534, 65534)
    pt.write(trace, out)
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and pt.read_back(out).packet


def test_report_shows_the_profile_beside_the_paper_and_runs_side_by_side(trace: et.ExecTrace, tmp_path: Path) -> None:
    from mmanalysis import report, synth

    prof = et.profile(trace)
    for name, load in (("idle", "none"), ("loaded", "cpu,periodic=10000/2000")):
        rows = synth.synthetic_events("mixed", 2, False, 20, seed=1)
        meta = synth.sidecar(name, rows)
        meta["config"]["executor_load_text"] = load
        meta["executor_profile"] = prof
        synth.write_run(tmp_path / name, rows, meta)
    rows = synth.synthetic_events("mixed", 2, False, 20, seed=2)
    meta = synth.sidecar("broken", rows)
    meta["executor_profile"] = {"error": "x.exectrace:1: not an executor trace"}
    synth.write_run(tmp_path / "broken", rows, meta)
    paths = report.report(tmp_path, tmp_path / "rep", figures=False)
    md = paths["md"].read_text()
    assert "## Executor profile (traced runs)" in md and "### Side by side" in md
    assert "| task | tc | dispatch | 2 | 103.75 | 103.75 | 103.75 | 1000 | 0.1660 |" in md   # U_i: 3320 of 20000
    assert "14.245 / 6.41" in md                              # the paper's figure beside ours
    assert "| PCINT2 interrupt |" in md and "| cpu,periodic=10000/2000 |" in md
    assert "broken: traced, but its trace could not be used: x.exectrace:1" in md
    assert "<h2>Executor profile (traced runs)</h2>" in paths["html"].read_text()


@pytest.mark.parametrize("where", ["missing", "fifo", "folder"])
def test_a_perfetto_trace_that_cannot_be_written_is_one_line_said_before_the_profile(tmp_path: Path, capsys,
                                                                                    where: str) -> None:
    """`mmrig profile --perfetto` into a folder that is not there (a write makes none on the way), onto a FIFO or
    onto a folder: one line naming why, exit 2, before the profile is printed; never a traceback."""
    import os

    from mmanalysis.cli import main

    src = tmp_path / "run.exectrace"
    src.write_text(TRACE)
    out = tmp_path / "no" / "such" / "x.perfetto-trace"
    if where == "fifo":
        out = tmp_path / "x.perfetto-trace"
        os.mkfifo(out)
    elif where == "folder":
        out = tmp_path / "x.perfetto-trace"
        out.mkdir()
    code = main(["profile", str(src), "--perfetto", str(out)])
    got = capsys.readouterr()
    assert code == 2 and got.out == "" and got.err.count("\n") == 1, got
    assert got.err.startswith("profile: --perfetto: ") and {"missing": "no such folder", "fifo": "is a FIFO",
                                                           "folder": "is a folder"}[where] in got.err, got.err


def test_report_reads_utilisation_from_the_shares_of_an_older_sidecar(trace: et.ExecTrace, tmp_path: Path) -> None:
    """A sidecar written while U_i was C avg / T avg carries those figures (a CPU load's above 1) beside each
    row's share of the trace: the report's U is the shares' sum, whichever the sidecar holds."""
    from mmanalysis import report, synth

    prof = et.profile(trace)
    old = dict(prof, U=1.197, tasks=[dict(r, U=1.1737 if r["name"] == "tc" else r["U"]) for r in prof["tasks"]])
    for name in ("old-a", "old-b"):
        rows = synth.synthetic_events("mixed", 2, False, 20, seed=1)
        meta = synth.sidecar(name, rows)
        meta["executor_profile"] = old
        synth.write_run(tmp_path / name, rows, meta)
    md = report.report(tmp_path, tmp_path / "rep", figures=False)["md"].read_text()
    assert f"U = {prof['U']:.4f};" in md and "1.197" not in md and "1.1737" not in md
    assert f"| {prof['U']:.4f} |" in md.split("### Side by side")[1]
