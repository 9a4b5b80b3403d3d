"""A reader of mmrig's output that goes away early (`mmrig ... | head -1`) gets no traceback: exit 141, as a shell
reports for SIGPIPE."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mmproto as mp


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path: Path) -> None:
    capture = tmp_path / "nops.bin"
    capture.write_bytes(b"".join(mp.Nop(i & 0xFF).wire(i & 0xFF) for i in range(20_000)))   # ~1 MB of lines
    proc = subprocess.Popen([sys.executable, "-m", "mmrig", "proto", "decode", str(capture)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()                   # the reader goes away with the rest unread
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and "Traceback" not in err, err
