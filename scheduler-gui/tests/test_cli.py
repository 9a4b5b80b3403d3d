"""The `mmrig` command line, run as a user runs it (a subprocess of the installed entry point)."""

import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

from mmproto import Hello, Result, Timecode
from mmproto.wiretime import markdown_table

MMRIG = [sys.executable, "-m", "mmrig"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MMRIG, *args], capture_output=True, text=True, timeout=60)


def test_proto_sizes_prints_the_spec_table() -> None:
    out = run("proto", "sizes")
    assert out.returncode == 0
    assert out.stdout.strip() == markdown_table()


def test_proto_decode_file_counts_garbage(tmp_path: Path) -> None:
    capture = tmp_path / "capture.bin"
    capture.write_bytes(b"\x42\x42\x00" + Timecode(5).wire(0) + Result(3, 0, 1, 5, 100).wire(2))
    out = run("proto", "decode", str(capture))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("seq   0  TIMECODE") and "timecode=5" in lines[0]
    assert lines[1].startswith("seq   2  RESULT") and "(1 lost before)" in lines[1]
    assert "frames_ok=2" in lines[-1] and "bad_cobs=1" in lines[-1] and "bytes_dropped=2" in lines[-1]


def test_proto_decode_reads_a_real_pty() -> None:
    controller, device = pty.openpty()
    name = os.ttyname(device)
    hello = Hello(2, 1, 0x100, 11_059_200, 921_600, 65_536, 9600, 6, 0)
    stop = threading.Event()

    def talk() -> None:
        # pyserial discards what was queued before it opened the port, and a loaded machine may take a
        # while to start the subprocess: keep sending, as a node's periodic frames would.
        seq = 0
        while not stop.wait(0.2):
            os.write(controller, hello.wire(0) + Timecode(seq).wire(seq + 1))
            seq = (seq + 1) & 0x7F

    writer = threading.Thread(target=talk, daemon=True)
    writer.start()
    try:
        out = run("proto", "decode", name, "--duration", "4")
    finally:
        stop.set()
        writer.join()
        os.close(controller)
        os.close(device)
    assert out.returncode == 0, out.stderr
    assert "HELLO" in out.stdout and "cpu_hz=11059200" in out.stdout and "TIMECODE" in out.stdout


def test_proto_decode_reports_a_missing_port() -> None:
    out = run("proto", "decode", "/dev/does-not-exist-mmrig")
    assert out.returncode == 2
    assert "cannot open /dev/does-not-exist-mmrig" in out.stderr
