"""The virtual bench with the test fixture image (hil/bench/tests/fixture.c) in both slots: wiring and
clock, UART pacing and buffering, the control channel, teardown."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest
import serial

import mmproto  # noqa: F401  (the unix:// URL handler of the bench's line sockets)

from mmhil.bench import FIXTURE_ELF, Bench, BenchError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import fixture_bench, read_lines  # noqa: E402

F_CPU = 16_000_000
CHAR = 10 * F_CPU / 9600  # cycles per character at 9600 baud, 10 bit times


def open_port(url: str) -> serial.SerialBase:
    """A node's port as any pyserial program opens it: a pty's path, or a line socket's unix:// URL (mmproto
    registers the handler)."""
    return serial.serial_for_url(url, 9600, timeout=0.05)


@pytest.mark.paced
@pytest.mark.parametrize("receiver", ["sleeping", "busy"])
def test_pin_change_reaches_the_other_core_within_one_cycle(tmp_path: Path, receiver: str) -> None:
    """The executor slot toggles PC3 (wired to the profiler's PL1 = ICP5) with one OUT and reads TCNT5
    one cycle later (T); the profiler slot's input capture latches ICR5 at the edge (C). Both Timer5s
    started on the same cycle, so a change delivered at its own cycle gives C == T - 1 exactly; every
    cycle of delivery delay would add one. The busy receiver runs multi-cycle call/ret loops, so it is
    often ahead of the sender when the edge comes (the bench then applies the change as of its cycle)."""
    with fixture_bench(tmp_path) as bench:
        p, e = open_port(bench.profiler_port), open_port(bench.executor_port)
        with p, e:
            if receiver == "busy":
                p.write(b"W")
                time.sleep(0.1)
            e.write(b"S")
            sent = [int(ln.split()[1], 16) for ln in read_lines(e, "T ", 40)]
            caught = read_lines(p, "C ", 40)
            st = bench.status()
    assert len(sent) == 40 and len(caught) == 40
    got = [int(ln.split()[1], 16) for ln in caught]
    ids = [int(ln.split()[2], 16) for ln in caught]
    assert [(c - t) & 0xFFFF for t, c in zip(sent, got)] == [0xFFFF] * 40   # C == T - 1
    assert ids == [i & 7 for i in range(40)]                                 # id bits wired, same edge
    if receiver == "busy":
        assert st["wires"]["rewinds"] > 0   # the receiver was ahead and the change went in at its cycle
        assert st["wires"]["max_rewind_cycles"] <= 5   # the longest ATmega2560 instruction (CALL, RET)
    else:
        assert st["nodes"]["profiler"]["asleep_share"] > 0.5


@pytest.mark.paced
def test_timecode_port_and_pcint2(tmp_path: Path) -> None:
    """Profiler PORTA -> executor PORTK, with the pin-change interrupt simavr lacks on port K."""
    with fixture_bench(tmp_path) as bench:
        p, e = open_port(bench.profiler_port), open_port(bench.executor_port)
        with p, e:
            p.write(b"A")
            seen = [int(ln.split()[1], 16) for ln in read_lines(e, "K ", 20)]
    assert seen == list(range(1, 21))


@pytest.mark.paced
def test_uart_input_paced_at_the_baud_rate(tmp_path: Path) -> None:
    """1000 bytes written at once take 1000 characters = 1.0417 s of virtual time to go in at 9600
    baud. The fixture timestamps every receive interrupt with its Timer5 (its own view); the bench's
    counters give the same figure (its view)."""
    trace = tmp_path / "trace.txt"
    with fixture_bench(tmp_path, trace=trace) as bench:
        e = open_port(bench.executor_port)
        with e:
            e.write(b"R")
            time.sleep(0.1)
            e.write(bytes(range(256)) * 3 + bytes(232))
            report = read_lines(e, "R ", 1, timeout=5.0)
            st = bench.status()["nodes"]["executor"]["uart"]
    assert report, "no count report from the fixture"
    _, n, first, last = report[0].split()
    assert int(n, 16) == 1000
    mcu = (int(last, 16) - int(first, 16) + CHAR) / F_CPU   # first interrupt came one character in
    delivered = [int(ln.split()[1]) for ln in trace.read_text().splitlines() if ln.startswith("I ")]
    assert len(delivered) == 1001 and delivered[-1] == st["last_in_cycle"]
    bench_view = (delivered[-1] - delivered[1] + CHAR) / F_CPU   # delivered[0] is the "R"
    one_char = CHAR / F_CPU
    assert abs(mcu - 1000 * 10 / 9600) < one_char, mcu
    assert abs(bench_view - 1000 * 10 / 9600) < one_char, bench_view
    # and not simavr's 11 bit times (1.146 s)
    assert st["in"] == 1001


def test_unread_output_is_buffered_and_overflow_counted(tmp_path: Path) -> None:
    """The fixture sends 100000 bytes (at 1 Mbaud) that nobody reads: the pty takes what it can, the
    bench keeps 1000 more, the rest is counted as dropped; the host later reads exactly what was not
    dropped, and the stream's beginning intact."""
    with fixture_bench(tmp_path, paced=False, out_buffer=1000) as bench:
        e = open_port(bench.tty("executor"))        # (the pty: out_written counts since the bench began)
        with e:
            deadline = time.monotonic() + 30
            # the fixture's "BOOT\n" all out first: a status asked while it was on the line counted 1 of its 5
            # bytes, and the other 4 were then taken for the burst's (100005 == 1 + 100000, on a loaded host)
            while bench.status()["nodes"]["executor"]["uart"]["out"] < len(b"BOOT\n") and time.monotonic() < deadline:
                time.sleep(0.01)
            before = bench.status()["nodes"]["executor"]["uart"]["out"]
            got_in = bench.status()["nodes"]["executor"]["uart"]["in"]
            e.write(b"B")
            # the fixture goes to 1 Mbaud: the host switches its port too once "B" is in (the bench drops
            # bytes between ends at different rates, docs/bench.md "Baud rate"), then says go
            while bench.status()["nodes"]["executor"]["uart"]["in"] == got_in and time.monotonic() < deadline:
                time.sleep(0.01)
            e.baudrate = 1_000_000
            e.write(b"G")
            while time.monotonic() < deadline:
                u = bench.status()["nodes"]["executor"]["uart"]
                if u["out"] >= before + 100000:
                    break
                time.sleep(0.05)
            u = bench.status()["nodes"]["executor"]["uart"]
            assert u["out"] == before + 100000
            assert u["out_dropped"] > 0
            assert u["out_buffered"] == 1000
            assert u["out_written"] + u["out_buffered"] + u["out_dropped"] == u["out"]
            got = b""
            while True:
                chunk = e.read(65536)
                if not chunk and len(got) >= 100000 - u["out_dropped"]:
                    break
                if not chunk and time.monotonic() > deadline:
                    break
                got += chunk
    # what the host read from the burst on (a byte of the fixture's earlier 9600-baud output the host had not
    # yet read when the burst began is not the burst's: seen once on a loaded host, one byte more)
    start = got.find(bytes(range(64)))
    assert 0 <= start <= 64, got[:80]
    assert len(got) - start == 100000 - u["out_dropped"]
    assert got[start:start + 4096] == bytes(i & 0xFF for i in range(4096))


@pytest.mark.paced
def test_lag_bound_marks_the_run_invalid(tmp_path: Path) -> None:
    """Paced: lag is sampled and kept as a histogram; a bound no run can meet (1 ns) marks it invalid."""
    with fixture_bench(tmp_path, lag_bound_us=0.001) as bench:
        time.sleep(0.3)
        st = bench.status()
    lag = st["lag"]
    assert lag["samples"] > 100 and lag["exceeded"] > 0 and st["valid"] is False
    assert 1 <= lag["episodes"] <= lag["exceeded"]
    assert sum(count for _, count in lag["histogram_us"]) == lag["samples"]
    assert lag["p50_us"] <= lag["p999_us"] <= max(lag["max_us"], 1.0) + 1.0


@pytest.mark.paced
@pytest.mark.parametrize("realtime", [False, True])
def test_paced_sync_points_and_host_setup(tmp_path: Path, realtime: bool) -> None:
    """Paced: the bench syncs with wall time (one lag sample each) at least every 200 us of virtual
    time, never runs ahead of wall time by more than its quantum, and reports the host set-up it got
    (--realtime falls back when not permitted, never fails)."""
    with fixture_bench(tmp_path, lag_bound_us=100000, realtime=realtime) as bench:
        time.sleep(0.5)
        st = bench.status()
    lag, host = st["lag"], st["host"]
    assert lag["samples"] >= st["virtual_s"] / 200e-6
    assert 0 < lag["lead_max_us"] <= lag["quantum_us"] + 0.1
    assert st["virtual_s"] <= st["wall_s"] + lag["quantum_us"] / 1e6   # never ahead of wall time by more than the quantum
    if realtime:
        assert host["sched"] in ("fifo 10", "nice -10", "other")
        assert host["sched"] != "other" or os.geteuid() != 0
    else:
        # (what it runs at now is read back: a nice the bench inherited or was given since, the paced turns' say)
        assert not host["sched"].startswith(("fifo", "rr")), host
        assert host == {"sched": host["sched"], "sched_at_setup": "other", "tid": bench.pid, "rt_limit_demotions": 0,
                        "mlock": False, "dma_latency_us": -1, "cpu": -1, "timer_slack_ns": host["timer_slack_ns"]}


@pytest.mark.paced
def test_control_channel(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, lag_bound_us=100000) as bench:
        st = bench.status()
        assert st["paced"] is True and st["valid"] is True
        assert set(st["nodes"]) == {"profiler", "executor"}
        for n in st["nodes"].values():
            assert n["cycle"] > 0 and 0.0 <= n["asleep_share"] <= 1.0
            assert set(n["uart"]) >= {"in", "out", "out_dropped", "out_buffered"}
        e = open_port(bench.executor_port)
        p = open_port(bench.profiler_port)
        with e, p:
            # reset: the fixture boots again and says so
            e.write(b"H")
            assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]   # booted, line idle
            bench.reset("executor")
            assert read_lines(e, "BOOT", 1) == ["BOOT"]
            assert bench.status()["nodes"]["executor"]["resets"] == 1
            # drop every byte into the executor: no answer, and counted
            bench.fault("executor", "in", "drop", 1.0)
            e.write(b"HHH")
            assert read_lines(e, "FIXTURE", 1, timeout=0.5) == []
            assert bench.status()["nodes"]["executor"]["uart"]["fault_dropped"][0] == 3
            bench.clear_faults()
            e.write(b"H")
            assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
            # corrupt every byte out of the executor
            bench.fault("executor", "out", "corrupt", 1.0)
            e.write(b"H")
            time.sleep(0.2)
            assert b"FIXTURE" not in e.read(1000)
            assert bench.status()["nodes"]["executor"]["uart"]["fault_corrupted"][1] >= 8
            bench.clear_faults("executor")
            # delay: every byte into the executor 50 ms late
            bench.fault("executor", "in", "delay", 1.0, 50000)
            t0 = time.monotonic()
            e.write(b"H")
            assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
            assert time.monotonic() - t0 > 0.05
            bench.clear_faults()
            # cut the timecode lines: the executor sees none of the profiler's PORTA changes
            vcd = tmp_path / "run" / "wires.vcd"   # `vcd on FILE`: a plain name in the run directory
            bench.vcd(True, vcd)
            bench.cut("timecode", 0.3)
            p.write(b"A")
            assert read_lines(e, "K ", 1, timeout=0.2) == []
            assert bench.status()["wires"]["cut_dropped"] > 0
            # when the cut ends, the executor sees the level the profiler drives now (20)
            assert read_lines(e, "K ", 1, timeout=2.0)[-1] == "K 14"
            # cut a UART
            bench.cut("executor.uart", 0.3)
            e.write(b"H")
            time.sleep(0.1)
            assert bench.status()["nodes"]["executor"]["uart"]["cut_dropped"][0] == 1
            assert bench.vcd(False)["vcd"] == str(vcd)
        text = vcd.read_text()
        assert "$enddefinitions" in text and "timecode0" in text and "strobe" in text
        assert text.count("\n#") >= 2   # value changes after the header
        with pytest.raises(BenchError):
            bench.control("no-such-command")
        pid = bench.pid
        bench.stop()
        assert bench.wait(5) == 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_no_orphan_process_even_when_the_test_fails(tmp_path: Path) -> None:
    pid = 0
    with pytest.raises(ZeroDivisionError):
        with fixture_bench(tmp_path, lockstep=True) as bench:     # (how a bench ends does not depend on its clock)
            pid = bench.pid
            os.kill(pid, 0)  # alive
            1 / 0
    assert pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not (tmp_path / "run" / "control.sock").exists()


def test_bench_errors_carry_the_log(tmp_path: Path) -> None:
    bad = tmp_path / "broken.elf"
    bad.write_bytes(b"not an elf")
    with pytest.raises(BenchError) as err:
        Bench(profiler_elf=bad, executor_elf=FIXTURE_ELF, run_dir=tmp_path / "run", lockstep=True).start()
    assert "cannot read profiler image" in str(err.value)


def test_control_socket_is_a_unix_socket(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, lockstep=True) as bench:           # (its files and sockets are the same paced)
        assert bench.control_path.is_socket()
        assert Path(bench.tty("profiler")).resolve().as_posix().startswith("/dev/pts/")
        for node in ("profiler", "executor"):           # the line sockets: the user's alone
            sock = Path(bench.socket_url(node)[len("unix://"):])
            assert sock.is_socket() and (sock.stat().st_mode & 0o777) == 0o600
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(bench.control_path))
            s.sendall(b"status\nstatus\n")
            data = b""
            while data.count(b"\n") < 2:
                data += s.recv(65536)
        assert data.count(b'"ok":true') == 2


@pytest.mark.paced
def test_paced_output_no_earlier_than_wall_time(tmp_path: Path) -> None:
    """Paced, virtual time runs up to a quantum (20 us) ahead of wall time; a byte a node sends must
    still reach its pty no earlier than the wall moment of its stop bit's end (wall_start + its
    virtual time). The real images: the profiler's HELLO and a TIMECODE frame per tick."""
    with Bench(run_dir=tmp_path / "run", lag_bound_us=100000) as bench:
        time.sleep(1.5)
        lag = bench.status()["lag"]
    assert lag["out_bytes"] >= 50
    assert lag["out_early_max_us"] <= 1.0, lag
    assert lag["out_waits"] > 0   # bytes were held for their moment: the bench was ahead when they completed
    assert lag["out_late_p50_us"] <= lag["out_late_max_us"] + 1.0


def test_unpaced_output_is_not_timed(tmp_path: Path) -> None:
    with Bench(run_dir=tmp_path / "run", paced=False, until_s=2.0) as bench:
        assert bench.wait(30) == 0
    st = bench.final_status
    assert st is not None and st["nodes"]["profiler"]["uart"]["out_written"] > 0
    assert st["lag"]["out_bytes"] == 0 and st["lag"]["out_waits"] == 0


def test_a_bench_that_ran_to_its_until_before_ready_was_seen_is_not_a_failure(tmp_path: Path, monkeypatch) -> None:
    # An unpaced bench runs 2 s of virtual time in a moment: on a loaded host it can have ended (status 0, its
    # `ready` removed again) before the starting process looked for `ready` once. That is a bench that did its
    # whole job, not one that "exited before it was ready".
    real_sleep = time.sleep
    held_off = {"once": True}

    def starting_process_held_off(seconds: float) -> None:
        if held_off.pop("once", False):
            real_sleep(3.0)                 # Bench.start's first wait for `ready`, as a starved process has it
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", starting_process_held_off)
    monkeypatch.setattr(Path, "exists", lambda self, _real=Path.exists: _real(self) and not (
        self.name == "ready" and held_off))          # (the first look finds nothing, as it came too early)
    bench = Bench(run_dir=tmp_path / "run", paced=False, until_s=0.5).start()
    monkeypatch.undo()
    assert bench.wait(30) == 0
    bench.close()
    assert bench.final_status is not None and bench.final_status["nodes"]["profiler"]["uart"]["out_written"] > 0
