#!/usr/bin/env python3
"""Writes the shared protocol test vectors (protocol/SPEC.md section 9).

    python protocol/vectors/generate.py           # rewrite the .vec files
    python protocol/vectors/generate.py --check   # exit 1 if a committed file differs

Field values are chosen here by hand; the bytes come from mmproto, whose COBS is the `cobs` package and whose
CRC is Python's `binascii` (each CRC checked here against the `crc` package too), so the C implementation is
checked against code it shares nothing with. CRC and
COBS reference values are published ones (the CRC catalogue's check value; the COBS examples of
Cheshire and Baker's paper as tabulated on Wikipedia).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from mmproto import messages as m
from mmproto.decoder import StreamDecoder
from mmproto.framing import MAX_ENCODED, MAX_PAYLOAD, crc16, encode_frame
from mmproto.vectors import CobsVector, CrcVector, MessageVector, StreamVector, Vector, write

HERE = Path(__file__).resolve().parent
U32 = 0xFFFFFFFF


def crc_vectors() -> list[Vector]:
    published = [CrcVector("catalogue_check_123456789", b"123456789", 0x29B1),
                 CrcVector("empty_is_init", b"", 0xFFFF)]
    computed = [CrcVector(name, data, crc16(data)) for name, data in (
        ("one_zero", b"\x00"), ("one_ff", b"\xff"), ("two_zeros", b"\x00\x00"),
        ("all_byte_values", bytes(range(256))), ("hello_header", b"\x01\x00"))]
    from crc import Calculator, Crc16
    catalogue = Calculator(Crc16.IBM_3740)
    for v in published + computed:
        assert crc16(v.data) == v.crc == catalogue.checksum(v.data), f"the CRCs disagree on {v.name}"
    return published + computed


def cobs_vectors() -> list[Vector]:
    ramp = bytes(range(1, 255))
    table = [
        ("one_zero", b"\x00", b"\x01\x01"),
        ("two_zeros", b"\x00\x00", b"\x01\x01\x01"),
        ("zero_between", b"\x00\x11\x00", b"\x01\x02\x11\x01"),
        ("inner_zero", b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
        ("no_zero", b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
        ("trailing_zeros", b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
        ("run_254", ramp, b"\xff" + ramp),
        ("zero_then_254", b"\x00" + ramp, b"\x01\xff" + ramp),
        ("run_255", ramp + b"\xff", b"\xff" + ramp + b"\x02\xff"),
    ]
    return [CobsVector(name, data, encoded) for name, data, encoded in table]


def message_cases() -> list[tuple[str, int, m.Message]]:
    v = m.PROTO_VERSION
    hello_8051 = m.Hello(v, m.NodeKind.PROFILER, 0x0100, 11_059_200, 921_600, 65_536, 9600,
                         m.HELLO_FLAG_POLLED | m.HELLO_FLAG_8051, 0)
    hello_avr = m.Hello(v, m.NodeKind.PROFILER, 0x0100, 16_000_000, 16_000_000, 1_137_778, 9600,
                        m.HELLO_FLAG_CAPTURE, m.ResetCause.POWER_ON)
    hello_exec = m.Hello(v, m.NodeKind.EXECUTOR, 0x0100, 16_000_000, 2_000_000, 0, 115_200, 0,
                         m.ResetCause.WATCHDOG)
    cases: list[tuple[str, int, m.Message]] = [
        ("hello_profiler_8051", 0, hello_8051),
        ("hello_profiler_avr", 0, hello_avr),
        ("hello_executor", 0, hello_exec),
        ("query_hello", 7, m.Query(m.Hello.TYPE)),
        ("query_counters", 8, m.Query(m.Counters.TYPE)),
        ("query_status", 255, m.Query(m.Status.TYPE)),
        ("error_past_due", 3, m.Error(m.ErrorCode.PAST_DUE, m.Schedule.TYPE, 513, 1000)),
        ("error_all_zero", 0, m.Error(0, 0, 0, 0)),
        ("error_horizon", 4, m.Error(m.ErrorCode.HORIZON, m.Schedule.TYPE, 7, 0x00012345)),
        ("counters_mixed", 42, m.Counters(1000, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)),
        ("counters_all_max", 200, m.Counters(*[0xFFFF] * 13)),
        ("counters_all_zero", 1, m.Counters(*[0] * 13)),
        ("timecode_first", 1, m.Timecode(0)),
        ("timecode_wrap8", 2, m.Timecode(256)),
        ("timecode_max", 3, m.Timecode(U32)),
        ("result_edge", 10, m.Result(5, m.RESULT_FLAG_STROBE, 77, 123_456, 37)),
        ("result_fire_late", 11, m.Result(7, m.RESULT_FLAG_FIRE, 0xBEEF, 300, 13_331)),
        ("result_lost_before", 12, m.Result(0, m.RESULT_FLAG_LOST_BEFORE, 0, 0x01000000, 65_535)),
        ("result_max", 255, m.Result(7, 0x07, 0xFFFF, U32, U32)),
        ("fire_id0", 0, m.Fire(0, 0)),
        ("fire_id7", 99, m.Fire(7, 0xFFFF)),
        ("hist_arm_khz", 3, m.HistArm(1002, 0, 16_000, 600_000, 16_000, 1_600, 0, 4, 14, m.HistArm.FLAG_RAW)),
        ("hist_arm_end", 4, m.HistArm(0, 0, 0, 0, 0, 0, 0, 0, 1, 0)),
        ("hist_arm_max", 255, m.HistArm(U32, U32, U32, U32, U32, 0xFFFF, 7, 15, 0xFF, 0xFF)),
        ("hist_summary_first", 0, m.HistSummary(0, m.HistSummary.FLAG_ARMED, 0, 0, 0, 0, 0, m.HistSummary.NO_MIN, 0, 0, 0, 0, 0)),
        ("hist_summary_final", 9, m.HistSummary(600, m.HistSummary.FLAG_FINAL, 598_321, 12, 1_660, 7, 1, 64, 1_402, 433_017, 0x2F0A_1B00, 0x0001, 6)),
        ("hist_summary_max", 255, m.HistSummary(0xFFFF, 0xFF, U32, U32, U32, U32, 0xFFFF, U32, U32, U32, U32, 0xFFFF, 0xFF)),
        ("hist_cells_low", 10, m.HistCells(3, 0, 0, 0, 0, 0, 12, 905, 40_112, 0x00010000)),
        ("hist_cells_overflow", 11, m.HistCells(600, 1000, 5, 0, 0, 0, 0, 0, 0, 0)),
        ("hist_cells_max", 255, m.HistCells(0xFFFF, 0xFFFF, U32, U32, U32, U32, U32, U32, U32, U32)),
        ("schedule_two_ahead", 4, m.Schedule(1, 3, 1002)),
        ("schedule_zero_bytes", 5, m.Schedule(0x0100, 0, 0x00010000)),
        ("schedule_max", 6, m.Schedule(0xFFFF, 7, U32)),
        ("periodic_khz", 7, m.Periodic(1, 0, 1002, 0, 16_000, 1_137_778, 10_000, m.Periodic.FLAG_QUIET)),
        ("periodic_mid_tick", 8, m.Periodic(0x0100, 5, 0x00010000, 568_889, 922, 65_536, 1, 0)),
        ("periodic_max", 255, m.Periodic(0xFFFF, 7, U32, U32, U32, U32, 0xFFFF, 0xFF)),
        ("ack_typical", 4, m.Ack(1, 3, 1000, 0x8000, 1)),
        ("ack_max", 255, m.Ack(0xFFFF, 7, U32, 0xFFFF, 0xFF)),
        ("mode_mixed_isr", 0, m.Mode(m.ExecutorMode.MIXED, m.Dispatch.ISR, 0, 0, 0, 0, 0, 0)),
        ("mode_verification_task", 1, m.Mode(m.ExecutorMode.VERIFICATION, m.Dispatch.TASK, 2, 1, 1, 0, 0, 0)),
        ("mode_idle", 2, m.Mode(m.ExecutorMode.IDLE, 0, 0, 0xFFFF, 0, 0, 0, 0)),
        ("mode_mixed_task_loaded", 3, m.Mode(m.ExecutorMode.MIXED, m.Dispatch.TASK, 0, 0, 0, 1, 10_000, 2_000)),
        ("mode_load_heaviest", 4, m.Mode(m.ExecutorMode.MIXED, m.Dispatch.ISR, 0, 0, 0, 1, 1_000, 500)),
        ("mode_load_longest_period", 5, m.Mode(m.ExecutorMode.IDLE, 0, 0, 0, 0, 0, 0xFFFF, 0x7FFF)),
        ("status_typical", 9, m.Status(2, 0, 5000, 3, 16, 4000, 120, 200, 80, 0, 0, 0, 0, 0, 0)),
        ("status_loaded", 10, m.Status(2, 1, 5000, 3, 16, 4000, 120, 200, 80, 1, 10_000, 2_000, 1_234_567, 1500, 2)),
        ("status_max", 255, m.Status(0xFF, 0xFF, U32, 0xFF, 0xFF, U32, 0xFFFF, 0xFFFF, 0xFFFF,
                                     0xFF, 0xFFFF, 0xFFFF, U32, U32, 0xFFFF)),
        ("local_event", 17, m.LocalEvent(9, 2, 777)),
        ("fired", 18, m.Fired(9, 2, 777)),
        ("fired_wrap", 19, m.Fired(0xFFFF, 7, 0x100)),
        ("cancel_one", 20, m.Cancel(513, 0)),
        ("cancel_all", 21, m.Cancel(0, m.CANCEL_ALL)),
        ("cancelled_one", 22, m.Cancelled(513, 1, 3)),
        ("cancelled_all", 23, m.Cancelled(0, 16, 0)),
        ("nop", 24, m.Nop(0)),
        ("nop_fill", 25, m.Nop(0xA5)),
        ("baud_115200", 26, m.Baud(1152)),
        ("baud_9600", 27, m.Baud(96)),
    ]
    covered = {type(msg) for _, _, msg in cases}
    assert covered == set(m.MESSAGE_TYPES.values()), "every message type needs a vector"
    return cases


def message_vectors() -> list[Vector]:
    out: list[Vector] = []
    for name, seq, msg in message_cases():
        payload = msg.payload(seq)
        fields = [(fname, kind, getattr(msg, fname)) for fname, kind in msg.FIELDS]
        out.append(MessageVector(name, msg.TYPE, m.SPEC_NAMES[type(msg)], seq, fields, payload, crc16(payload),
                                 msg.wire(seq)))
    return out


def raw_frame(payload: bytes) -> bytes:
    """A frame with a valid CRC around any payload, for messages that must fail message checks."""
    return encode_frame(payload)


def stream(name: str, data: bytes) -> StreamVector:
    decoder = StreamDecoder()
    frames = [r.payload for r in decoder.feed(data)]
    return StreamVector(name, data, frames, decoder.counters.as_dict())


def stream_vectors() -> list[Vector]:
    tc = [m.Timecode(i).wire(i) for i in range(6)]
    sched = m.Schedule(1, 3, 1002).wire(9)
    hello = message_cases()[0][2]
    out = [
        stream("single_frame", tc[0]),
        stream("back_to_back", tc[0] + tc[1] + tc[2]),
        stream("empty_frames_ignored", b"\x00\x00" + tc[0] + b"\x00\x00\x00" + tc[1]),
        stream("partial_frame_pending", tc[0] + tc[1][:5]),
        stream("garbage_runs_into_next_frame", b"\x13\x37\xaa" + tc[0] + tc[1]),
        stream("garbage_with_own_delimiter", b"\x13\x37\xaa\x00" + tc[0] + tc[1]),
        stream("bit_flip_in_body", tc[0][:4] + bytes([tc[0][4] ^ 0x10]) + tc[0][5:] + tc[1]),
        stream("bit_flip_in_crc", tc[0][:-3] + bytes([tc[0][-3] ^ 0x01]) + tc[0][-2:] + tc[1]),
        stream("frame_cut_short", sched[:6] + b"\x00" + tc[1]),
        stream("code_byte_points_past_end", b"\x09\x01\x02\x00" + tc[1]),
        stream("too_short_empty_block", b"\x01\x00" + tc[1]),
        stream("too_short_two_bytes", b"\x03\x10\x05\x00" + tc[1]),
        stream("too_short_three_bytes", b"\x04\x10\x05\x06\x00" + tc[1]),
        stream("too_long_46_bytes", bytes([0x55]) * (MAX_ENCODED + 1) + b"\x00" + tc[1]),
        stream("too_long_garbage_flood", bytes(random.Random(1).randrange(1, 256) for _ in range(600))
               + b"\x00" + tc[1] + tc[2]),
        stream("code_ff_block", b"\xff" + bytes(range(1, 40)) + b"\x00" + tc[1]),
        stream("unknown_type", raw_frame(b"\x7e\x00\x01\x02") + tc[1]),
        stream("unknown_type_zero", raw_frame(b"\x00\x00") + tc[1]),
        stream("bad_length_short_body", raw_frame(b"\x10\x00\x01\x02\x03") + tc[1]),
        stream("bad_length_long_body", raw_frame(b"\x12\x00\x01\x02\x03\x04") + tc[1]),
        stream("max_payload_is_not_too_long", raw_frame(bytes([0x7F, 0]) + bytes(range(1, MAX_PAYLOAD - 1)))),
        stream("largest_message", m.Status(*[0xFF] * 15).wire(0) + m.Hello(1, 1, 2, 3, 4, 5, 6, 7, 8).wire(1)),
        stream("seq_gap_counted", tc[0] + tc[1] + tc[5]),
        stream("seq_wrap_not_a_gap", m.Timecode(1).wire(254) + m.Timecode(2).wire(255) + m.Timecode(3).wire(0)),
        stream("seq_gap_across_wrap", m.Timecode(1).wire(254) + m.Timecode(3).wire(1)),
        stream("hello_resets_seq", tc[0] + tc[1] + tc[2] + hello.wire(0) + tc[1]),
        stream("lost_frame_between_good", tc[0] + tc[1][:4] + tc[2] + tc[3]),
    ]
    out += [random_stream(seed) for seed in (1, 2, 3, 4)]
    return out


def random_stream(seed: int) -> StreamVector:
    """Valid frames of every kind mangled at random: dropped, flipped, inserted and truncated bytes."""
    rng = random.Random(seed)
    cases = message_cases()
    data = bytearray()
    for seq in range(120):
        frame = bytearray(cases[rng.randrange(len(cases))][2].wire(seq & 0xFF))
        roll = rng.random()
        if roll < 0.08:
            del frame[rng.randrange(len(frame))]
        elif roll < 0.16:
            frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
        elif roll < 0.22:
            frame[rng.randrange(len(frame)):rng.randrange(len(frame)) + 1] = bytes(rng.randrange(256)
                                                                                 for _ in range(rng.randrange(1, 9)))
        elif roll < 0.26:
            frame = frame[:rng.randrange(1, len(frame))]
        elif roll < 0.30:
            continue
        data += frame
    return stream(f"random_mangled_seed{seed}", bytes(data))


FILES = {
    "crc.vec": ("CRC-16/IBM-3740 values. The first two are published; the rest come from the crc package.",
                crc_vectors),
    "cobs.vec": ("Plain COBS (no CRC, no delimiter): the published examples.", cobs_vectors),
    "messages.vec": ("One valid message of each kind, with boundary values.", message_vectors),
    "streams.vec": ("Byte streams fed to a fresh decoder, with the frames and counters expected.", stream_vectors),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    stale = []
    for filename, (about, build) in FILES.items():
        header = f"{about}\nGenerated by protocol/vectors/generate.py; do not edit by hand."
        target = args.out / filename
        if args.check:
            scratch = Path(target.with_suffix(".check"))
            write(scratch, header, build())
            if not target.exists() or scratch.read_text() != target.read_text():
                stale.append(filename)
            scratch.unlink()
        else:
            write(target, header, build())
            print(f"wrote {target}")
    if stale:
        print("stale vector files (run protocol/vectors/generate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
