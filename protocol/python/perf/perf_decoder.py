#!/usr/bin/env python3
"""Throughput of the Python receiver on a realistic stream (every message kind, 5 % corrupted frames).

Prints the figures as JSON for tools/perf.py; with a path argument it also writes the stream there
for the C benchmark. The scheduler must keep up with two 115200-baud links
(23 kB/s together); the figure shows how far above that the decoder sits.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

from mmproto import MESSAGE_TYPES, StreamDecoder

RUNS = 7
FRAMES = 20_000
LIMITS = {"u8": 0xFF, "u16": 0xFFFF, "u32": 0xFFFFFFFF}


def workload() -> bytes:
    rng = random.Random(7)
    classes = list(MESSAGE_TYPES.values())
    out = bytearray()
    for seq in range(FRAMES):
        cls = rng.choice(classes)
        frame = bytearray(cls(*(rng.randint(0, LIMITS[k]) for _, k in cls.FIELDS)).wire(seq & 0xFF))
        if rng.random() < 0.05:
            frame[rng.randrange(len(frame) - 1)] ^= 0x5A
        out += frame
    return bytes(out)


def main() -> None:
    data = workload()
    if len(sys.argv) > 1:  # the C benchmark decodes the very same bytes
        Path(sys.argv[1]).parent.mkdir(parents=True, exist_ok=True)
        Path(sys.argv[1]).write_bytes(data)
    rates, frame_rates = [], []
    for _ in range(RUNS):
        decoder = StreamDecoder()
        start = time.perf_counter()
        for i in range(0, len(data), 256):  # serial reads arrive in chunks
            decoder.feed(data[i:i + 256])
        elapsed = time.perf_counter() - start
        rates.append(len(data) / elapsed / 1e6)
        frame_rates.append(decoder.counters.frames_ok / elapsed)
    print(json.dumps([
        {"name": "python decoder throughput", "unit": "MB/s", "median": statistics.median(rates),
         "max": max(rates), "runs": RUNS, "note": f"{len(data)} B stream, 5% corrupt frames"},
        {"name": "python decoder frame rate", "unit": "frames/s", "median": statistics.median(frame_rates),
         "max": max(frame_rates), "runs": RUNS, "note": "needed: 2 links x 115200 baud ~ 2000 frames/s"},
    ]))


if __name__ == "__main__":
    main()
