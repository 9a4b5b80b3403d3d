"""The fault kinds beyond drop/corrupt/delay/cut (hil/bench/faults.c) on the test fixture
image: byte duplication, garbage bursts, a pty hang-up and re-plug, stuck wires."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import serial

import mmproto  # noqa: F401  (the unix:// URL handler of the bench's line sockets)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import fixture_bench, read_exactly, read_lines  # noqa: E402

F_CPU = 16_000_000
CHAR = 10 * F_CPU / 9600


def open_port(url: str) -> serial.SerialBase:
    """A node's port as any pyserial program opens it: a pty's path, or a line socket's unix:// URL (mmproto
    registers the handler)."""
    return serial.serial_for_url(url, 9600, timeout=0.05)


def test_dup_repeats_bytes_in_both_directions(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, paced=False, seed=7) as bench:
        e = open_port(bench.executor_port)
        with e:
            e.write(b"H")                       # the fixture's BOOT line read first, whenever it came
            assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
            bench.control("fault executor out dup 1")
            e.write(b"H")
            assert read_exactly(e, 16) == b"FFIIXXTTUURREE\n\n"
            bench.clear_faults()
            e.write(b"R")                       # count mode: the fixture counts what it receives
            time.sleep(0.05)
            bench.control("fault executor in dup 1")
            e.write(bytes(range(1, 101)))
            report = read_lines(e, "R ", 1, timeout=5.0)
            u = bench.status()["nodes"]["executor"]["uart"]
    assert int(report[0].split()[1], 16) == 200          # every byte twice, each repeat once
    assert u["fault_duplicated"] == [100, 8]              # (the first H's reply was before the fault)


def test_garbage_bursts_are_seeded_paced_and_counted(tmp_path: Path) -> None:
    bursts = []
    for _ in range(2):
        with fixture_bench(tmp_path, paced=False, seed=11) as bench:
            e = open_port(bench.executor_port)
            with e:
                e.write(b"H")                   # the fixture's BOOT line read first, whenever it came
                assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
                assert bench.control("garbage executor out 2048")["bytes"] == 2048
                bursts.append(read_exactly(e, 2048))
                e.write(b"R")
                time.sleep(0.05)
                bench.control("garbage executor in 300")
                report = read_lines(e, "R ", 1, timeout=5.0)
                u = bench.status()["nodes"]["executor"]["uart"]
            assert u["garbage_bytes"] == [300, 2048] and u["in_read"] == 2   # H, R: garbage is not host input
            _, n, first, last = report[0].split()
            assert int(n, 16) == 300
            assert abs((int(last, 16) - int(first, 16)) - 299 * CHAR) < CHAR   # one character each
    assert bursts[0] == bursts[1] and len(bursts[0]) == 2048               # seeded
    assert 0 < bursts[0].count(0) < 30                                      # uniform: ~8 delimiters


def _read_until_the_line_ends(port: serial.SerialBase) -> None:
    """Reads until the hang-up ends the line (a SerialException, as pyserial reports a vanished port)."""
    with pytest.raises(serial.SerialException):
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            port.read(100)


def _wait_for_the_replug(bench, node: str) -> None:
    deadline = time.monotonic() + 3
    while bench.status()["nodes"][node]["uart"]["hung_up"] and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.paced
def test_hangup_closes_the_port_and_replugs_a_fresh_pty(tmp_path: Path) -> None:
    with fixture_bench(tmp_path) as bench:
        link = Path(bench.tty("executor"))
        e = open_port(bench.tty("executor"))
        e.write(b"H")
        assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
        e.write(b"S")                           # 40 lines of output, ~0.3 s at 9600 baud
        time.sleep(0.05)
        bench.control("hangup executor 0.3")
        _read_until_the_line_ends(e)
        e.close()
        u = bench.status()["nodes"]["executor"]["uart"]
        assert u["hung_up"] and u["hangups"] == 1
        assert bench.status()["nodes"]["profiler"]["uart"]["hung_up"] is False
        _wait_for_the_replug(bench, "executor")
        u = bench.status()["nodes"]["executor"]["uart"]
        assert u["generation"] == 2 and u["hangup_dropped"] > 0
        assert os.readlink(link) == bench.status()["nodes"]["executor"]["pts"]   # (the kernel may reuse the number)
        e = open_port(bench.tty("executor"))
        with e:
            e.write(b"H")
            assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
        u = bench.status()["nodes"]["executor"]["uart"]
        assert u["in_read"] == 1                 # counted on the new pty


@pytest.mark.paced
def test_hangup_closes_the_line_socket_and_it_listens_again(tmp_path: Path) -> None:
    """The adapter pulled: a connection to the node's line socket ends (its reader sees the end, as a pty's does),
    NODE.sock is gone until the re-plug, then a new connection holds the line as a stream of its own."""
    with fixture_bench(tmp_path) as bench:
        sock = Path(bench.socket_url("executor")[len("unix://"):])
        e = open_port(bench.socket_url("executor"))
        gen = e.generation
        e.write(b"H")
        assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
        assert bench.status()["nodes"]["executor"]["uart"]["host_side"] == "socket"
        bench.control("hangup executor 0.3")
        _read_until_the_line_ends(e)
        e.close()
        assert not sock.exists()
        _wait_for_the_replug(bench, "executor")
        assert sock.is_socket() and (sock.stat().st_mode & 0o777) == 0o600
        e = open_port(bench.socket_url("executor"))
        with e:
            assert e.generation > gen
            e.write(b"H")
            assert read_lines(e, "FIXTURE", 1) == ["FIXTURE"]
            u = bench.status()["nodes"]["executor"]["uart"]
        assert u["in_read"] == 1 and u["generation"] == e.generation      # counted on the new stream


@pytest.mark.paced
def test_a_second_connection_to_a_held_line_is_refused_in_one_line(tmp_path: Path) -> None:
    """One host holds a line at a time, as one program holds a serial port: the second opener is told so."""
    with fixture_bench(tmp_path) as bench:
        with open_port(bench.socket_url("profiler")):
            with pytest.raises(serial.SerialException, match="held by another connection"):
                open_port(bench.socket_url("profiler"))
        assert bench.status()["nodes"]["profiler"]["uart"]["socket_refused"] == 1
        deadline = time.monotonic() + 3             # let go: the line is back on the pty, and free for the next
        while bench.status()["nodes"]["profiler"]["uart"]["host_side"] != "pty" and time.monotonic() < deadline:
            time.sleep(0.02)
        with open_port(bench.socket_url("profiler")):
            pass


def test_hangup_in_lockstep_counts_per_pty(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, lockstep=True) as bench:
        r = bench.grant(F_CPU // 100, frame=False)
        assert r["generation"] == {"profiler": 1, "executor": 1}
        e = open_port(bench.tty("executor"))
        e.write(b"H")
        r = bench.grant(F_CPU // 50, frame=False, written={"profiler": 0, "executor": 1})
        assert r["out"]["executor"] == len(b"BOOT\nFIXTURE\n")
        e.close()
        bench.control("hangup executor 0.01")
        r = bench.grant(F_CPU // 50 + F_CPU // 200, frame=False, written={"profiler": 0, "executor": 1})
        assert r["hung_up"]["executor"] is True              # `in` not waited for: no pty
        r = bench.grant(F_CPU // 10, frame=False, written={"profiler": 0, "executor": 1})
        assert r["generation"]["executor"] == 2 and r["hung_up"]["executor"] is False
        assert r["out"]["executor"] == 0                      # counts restart on the new pty
        e = open_port(bench.tty("executor"))
        with e:
            e.write(b"H")
            r = bench.grant(F_CPU // 5, frame=False, written={"profiler": 0, "executor": 1})
            assert r["out"]["executor"] == len(b"FIXTURE\n")
            assert read_exactly(e, 8) == b"FIXTURE\n"


def test_during_a_hangup_the_port_path_is_gone_not_left_naming_a_pty_number_the_kernel_reuses(tmp_path: Path) -> None:
    """A pulled adapter takes its /dev entry with it; the bench's NODE.tty did not, it kept pointing at the closed
    /dev/pts/N, which the kernel gives the next pty opened on the machine (another bench's, in a parallel test
    run): a host retrying its open during the hang-up read that bench's bytes. Now the path is gone until the
    re-plug makes it again, for the new pty."""
    with fixture_bench(tmp_path, lockstep=True) as bench:
        bench.grant(F_CPU // 100, frame=False)
        old = os.readlink(bench.tty("executor"))
        bench.control("hangup executor 0.05")
        r = bench.grant(F_CPU // 100 + F_CPU // 100, frame=False)
        assert r["hung_up"]["executor"] is True
        assert not os.path.lexists(bench.tty("executor"))
        with pytest.raises(serial.SerialException):            # an open finds no such port, as with no adapter
            open_port(bench.tty("executor"))
        r = bench.grant(F_CPU // 5, frame=False)
        assert r["hung_up"]["executor"] is False and r["generation"]["executor"] == 2
        assert os.readlink(bench.tty("executor")) == bench.status()["nodes"]["executor"]["pts"]
        assert os.path.lexists(bench.tty("profiler")) and old.startswith("/dev/pts/")


@pytest.mark.paced
def test_stuck_timecode_bit_masks_changes_then_takes_the_driver_level(tmp_path: Path) -> None:
    """The profiler's PORTA counts 1..20; with timecode bit 0 stuck at 1 the executor sees only odd
    values, until the stuck wire comes free and shows the driver's bit 0 of 20 (0)."""
    with fixture_bench(tmp_path) as bench:
        p, e = open_port(bench.profiler_port), open_port(bench.executor_port)
        with p, e:
            bench.control("stuck timecode 0 1 0.4")
            p.write(b"A")
            seen = [int(ln.split()[1], 16) for ln in read_lines(e, "K ", 40, timeout=0.25)]
            assert seen and all(v & 1 for v in seen), seen
            assert seen[-1] == 21                             # 20 with bit 0 held at 1
            assert read_lines(e, "K ", 1, timeout=2.0) == ["K 14"]   # free again: the driver's 20
            st = bench.status()["wires"]
    assert st["stuck_changes_masked"] == 20                   # bit 0 toggled at each of the 20 writes
    with fixture_bench(tmp_path) as bench:
        r = bench.control("stuck event all 0 0.1")
        assert r["wires"] == 4


class CountingLink:
    """The part of an mmproto Link the lockstep Stepper uses (bytes_out, bytes_in, vanished), over a
    pyserial port; reading bytes_in takes in what the port has. reopen() keeps the counts, as a link
    that reopens its port after a hang-up would."""

    stream_named = False      # a pty: the bench names no stream for it (mmproto.Link.stream_named)

    def __init__(self, path: str) -> None:
        self.path, self.bytes_out, self._in, self.vanished, self.data = path, 0, 0, None, b""
        self.port = open_port(path)

    def write(self, b: bytes) -> None:
        self.bytes_out += self.port.write(b)

    @property
    def bytes_in(self) -> int:
        if self.vanished is None:
            try:
                chunk = self.port.read(self.port.in_waiting or 1)
            except (serial.SerialException, OSError) as exc:   # in_waiting on a hung-up pty: EIO
                self.vanished = str(exc)
                chunk = b""
            self.data += chunk
            self._in += len(chunk)
        return self._in

    def reopen(self) -> None:
        self.port.close()
        self.port, self.vanished, self.data = open_port(self.path), None, b""


def test_stepper_counts_per_pty_across_a_hangup(tmp_path: Path) -> None:
    from mmhil.lockstep import Stepper

    with fixture_bench(tmp_path, lockstep=True) as bench:
        link = CountingLink(bench.tty("executor"))
        stepper = Stepper(bench, links={"executor": link})
        stepper.step(0.01, frame=False)
        link.write(b"H")
        stepper.step(0.02, frame=False)
        assert link.data.endswith(b"FIXTURE\n")
        bench.control("hangup executor 0.01")
        r = stepper.step(0.025, frame=False)                    # hung up: its output is not waited for
        assert r["hung_up"]["executor"]
        assert link.bytes_in and link.vanished                  # (a Link's reader thread sees it at once)
        r = stepper.step(0.05, frame=False)
        assert r["generation"]["executor"] == 2
        bench.control("garbage executor out 5")              # on the new pty before the host opens it:
        r = stepper.step(0.06, frame=False)                   # flushed when it does
        assert r["out"]["executor"] == 5
        link.reopen()
        link.write(b"H")                                        # the link's 2nd byte, the new pty's 1st
        stepper.step(0.07, frame=False)
        assert link.data == b"FIXTURE\n" and link.bytes_out == 2
        fresh = CountingLink(bench.tty("executor"))             # or a link object opened anew
        stepper.links["executor"] = fresh
        link.port.close()
        fresh.write(b"H")
        stepper.step(0.09, frame=False)
        assert fresh.data == b"FIXTURE\n"
        fresh.port.close()
