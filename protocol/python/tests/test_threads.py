"""The protocol package is used from several threads at once: a run has a reader thread per serial port
and writes frames from others. Every frame must still carry and pass the right CRC."""

from __future__ import annotations

import sys
import threading

from mmproto.framing import crc16, encode_frame, classify_frame, Outcome


def test_crc_and_framing_are_thread_safe() -> None:
    payloads = [bytes([0x10 + t, t]) + bytes(range(t, t + 20)) for t in range(4)]
    expected = [crc16(p) for p in payloads]
    errors: list[str] = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads as often as CPython allows: races show up at once
    try:
        def work(t: int) -> None:
            for _ in range(3000):
                if crc16(payloads[t]) != expected[t]:
                    errors.append(f"thread {t}: wrong CRC")
                    return
                outcome, _ = classify_frame(encode_frame(payloads[t])[:-1])
                if outcome is not Outcome.OK:
                    errors.append(f"thread {t}: own frame classified {outcome}")
                    return
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
