"""Lockstep (--lockstep): virtual time advances only as far as the host grants; host input enters at
grant points (the input count handshake); frame grants stop where a frame ends; and stall intervals
in paced mode (the sleep command)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import serial

import mmproto as mp
from mmhil.bench import Bench, BenchError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import fixture_bench, lockstep_session, read_exactly  # noqa: E402

F_CPU = 16_000_000
TICK = 1_137_778


def test_lockstep_runs_are_deterministic(tmp_path: Path) -> None:
    a_trace, a_replies, a_seen = lockstep_session(tmp_path, "a")
    b_trace, b_replies, b_seen = lockstep_session(tmp_path, "b")
    assert a_trace == b_trace                        # every byte and pin change at the same cycle
    assert a_replies == b_replies and a_seen == b_seen
    results = [r.message for r in mp.StreamDecoder().feed(a_seen["profiler"]) if isinstance(r.message, mp.Result)]
    fired = [r.message for r in mp.StreamDecoder().feed(a_seen["executor"]) if isinstance(r.message, mp.Fired)]
    assert len(results) >= 8 and len(fired) == len(results)   # the host's bytes went in and were acted on
    assert a_replies[-1]["stop"] == "until" and a_replies[-1]["cycle"] == int(1.6 * F_CPU)


def test_grant_with_frame_stops_at_a_frame_end(tmp_path: Path) -> None:
    """After each frame grant, the bytes the bench wrote are whole frames: they end with the 0x00 that
    completed at the reply's cycle, and decode with nothing left over."""
    trace = tmp_path / "t.trace"
    with Bench(run_dir=tmp_path / "run", lockstep=True, trace=trace) as bench:
        assert bench.status()["cycle"] == 0                       # sits at 0 until the first grant
        p = serial.Serial(bench.tty("profiler"), 9600, timeout=0.05)
        e = serial.Serial(bench.tty("executor"), 9600, timeout=0.05)
        with p, e:
            got = {"profiler": b"", "executor": b""}
            stops = []
            for _ in range(12):
                r = bench.grant(10 * F_CPU, frame=True)
                assert r["stop"] == "frame"
                stops.append(r["cycle"])
                for n, port in (("profiler", p), ("executor", e)):
                    got[n] += read_exactly(port, r["out"][n] - len(got[n]))
                    assert len(got[n]) == r["out"][n]
                    assert got[n] == b"" or got[n].endswith(b"\x00")
                    dec = mp.StreamDecoder()
                    dec.feed(got[n])
                    assert dec.counters.bad_crc == 0 and dec.counters.bad_cobs == 0
    delims = sorted(int(ln.split()[1]) for ln in trace.read_text().splitlines()
                    if ln.startswith("O ") and ln.split()[3] == "00")
    assert stops == delims[:12]                       # each grant ended on the next delimiter's stop bit
    hellos = [m.message for m in mp.StreamDecoder().feed(got["executor"]) if isinstance(m.message, mp.Hello)]
    assert len(hellos) == 1


def test_grant_input_count_handshake(tmp_path: Path) -> None:
    """The host announces the bytes it wrote: the bench takes exactly those in before it advances, or
    says which node is short; a grant at or below the current cycle answers at once."""
    with fixture_bench(tmp_path, lockstep=True) as bench:
        e = serial.Serial(bench.tty("executor"), 9600, timeout=0.05)
        with e:
            r = bench.grant(F_CPU // 100, frame=False)           # boot: the fixture says BOOT
            assert (r["stop"], r["cycle"]) == ("until", F_CPU // 100)
            boot = read_exactly(e, r["out"]["executor"])
            e.write(b"H")
            r = bench.grant(r["cycle"] + F_CPU // 50, frame=False, written={"executor": 1, "profiler": 0})
            st = bench.status()["nodes"]["executor"]["uart"]
            assert st["in_read"] == 1 and st["in"] == 1          # read at the grant, and delivered
            assert read_exactly(e, r["out"]["executor"] - len(boot)) == b"FIXTURE\n"
            same = bench.grant(r["cycle"] - 5)                  # at or below: at once, current cycle
            assert same["cycle"] == r["cycle"] and same["stop"] == "until"
            t0 = time.monotonic()
            with pytest.raises(BenchError, match="executor: host announced 2 bytes written, the bench read 1"):
                bench.grant(r["cycle"] + 1000, written={"executor": 2})
            assert time.monotonic() - t0 >= 1.9          # it waited its 2 s for the bytes before refusing
            assert bench.status()["cycle"] == r["cycle"]        # refused: no time granted


def test_lockstep_waits_without_spinning_and_ends(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, lockstep=True, until_s=0.05) as bench:
        bench.grant(1000, frame=False)
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu() -> float:
            f = Path(f"/proc/{bench.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(f[11]) + int(f[12])) / ticks

        c0 = cpu()
        time.sleep(0.5)
        assert cpu() - c0 < 0.05                              # blocked in poll between grants
        r = bench.grant(F_CPU, frame=False)
        assert (r["stop"], r["cycle"]) == ("end", int(0.05 * F_CPU))   # --until ended it first
        assert bench.wait(5) == 0


@pytest.mark.paced
def test_sleep_makes_one_stall_interval(tmp_path: Path) -> None:
    """Paced: a 200 ms host stall on demand gives one stall interval, from the last sync sample within
    the bound before it to the first one back within it, holding the sleep's virtual time."""
    with fixture_bench(tmp_path, lag_bound_us=20000) as bench:
        time.sleep(0.3)
        done = bench.sleep(200)
        time.sleep(0.4)
        stalls = bench.stalls()
        st = bench.status()
    at = done["virtual_s"]
    # the sleep's stall is one interval holding its moment; the host may add stalls of its own (a 324 ms one beside
    # two test runs and a CPU hog), each recorded the same way, never merged with it
    holding = [s for s in stalls if s[0] <= at <= s[1]]
    assert len(holding) == 1, stalls
    start, end, max_us = holding[0]
    assert max_us >= 150_000                            # the sleep's 200 ms, less the bench's lead
    assert all(a <= b for (_, a, _), (b, _, _) in zip(stalls, stalls[1:]))    # in order, none overlapping
    assert st["lag"]["stalls"] == stalls and st["lag"]["stalls_dropped"] == 0 and st["lag"]["stall_open"] is False
    assert st["valid"] is False and st["lag"]["episodes"] == len(stalls)


@pytest.mark.paced
def test_stalls_since_filters_and_unpaced_has_none(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, lag_bound_us=20000) as bench:
        time.sleep(0.2)
        done = bench.sleep(100)
        time.sleep(0.3)
        since = bench.stalls(since_s=done["virtual_s"])
        # the sleep's stall holds its moment; the host may add stalls of its own after it (a 21 ms one in
        # fresh-check beside a CPU hog), each ending after `since_s` too: the filter keeps exactly those
        assert len([s for s in since if s[0] <= done["virtual_s"] <= s[1]]) == 1, since
        assert all(end >= done["virtual_s"] for _, end, _ in since), since
        assert bench.stalls(since_s=bench.status()["virtual_s"] + 1) == []
    with fixture_bench(tmp_path / "u", paced=False) as bench:
        time.sleep(0.2)
        bench.sleep(50)
        assert bench.stalls() == []


def test_a_grant_is_a_whole_number_of_cycles_or_refused(tmp_path: Path) -> None:
    """`grant -1` was taken as cycle 2^64-1 (strtoull), a grant to the end of time: a sign, junk after the digits,
    a number past 64 bits, or a byte count (or its @generation) that is not a whole number are refused, and no time
    is granted."""
    with fixture_bench(tmp_path, lockstep=True) as bench:
        for bad in ("grant -1", "grant +5", "grant 5x", "grant 18446744073709551616", "grant 1000 in executor=-1",
                    "grant 1000 in executor=2b", "grant 1000 in executor=2@x", "grant 1000 in executor=2@-1",
                    "grant 1000 in executor=2@", "grant 1000 in executor=@1",
                    "grant 1000 in executor=2@9223372036854775808"):
            with pytest.raises(BenchError, match="a whole number"):
                bench.control(bad)
        assert bench.status()["cycle"] == 0
        assert bench.grant(F_CPU // 100, frame=False)["cycle"] == F_CPU // 100      # a good one still runs
