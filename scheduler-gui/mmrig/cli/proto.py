"""`mmrig proto`: the wire protocol's tools: every message's size and line time, and a decoder for a capture
file or a live port."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import serial

from mmproto import StreamDecoder
from mmproto.messages import SPEC_NAMES
from mmproto.wiretime import markdown_table


def cmd_proto_sizes(args: argparse.Namespace) -> int:
    print(markdown_table(tuple(args.baud)))
    return 0


def cmd_proto_decode(args: argparse.Namespace) -> int:
    """Decodes a capture file or a live serial port (any pyserial URL) and prints each message."""
    decoder = StreamDecoder()
    if Path(args.source).is_file():
        chunks = [Path(args.source).read_bytes()]
        source = None
    else:
        try:
            source = serial.serial_for_url(args.source, baudrate=args.baud, timeout=0.2)
        except (serial.SerialException, ValueError) as exc:
            print(f"mmrig proto decode: cannot open {args.source}: {exc}", file=sys.stderr)
            return 2
        deadline = time.monotonic() + args.duration if args.duration else None
        chunks = iter(lambda: source.read(256) if deadline is None or time.monotonic() < deadline else None, None)
    try:
        for chunk in chunks:
            for r in decoder.feed(chunk):
                lost = f"  ({r.lost_before} lost before)" if r.lost_before else ""
                print(f"seq {r.seq:3d}  {SPEC_NAMES[type(r.message)]:<11} {r.message}{lost}")
    except KeyboardInterrupt:
        pass
    except serial.SerialException as exc:
        print(f"mmrig proto decode: port {args.source} failed: {exc}", file=sys.stderr)
    finally:
        if source is not None:
            source.close()
    print("counters: " + " ".join(f"{k}={v}" for k, v in decoder.counters.as_dict().items()))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    proto = sub.add_parser("proto", help="wire protocol tools").add_subparsers(dest="proto_command", required=True)
    sizes = proto.add_parser("sizes", help="bytes and line time of every message (SPEC.md section 8)")
    sizes.add_argument("--baud", type=int, nargs="+", default=[9600, 115200], metavar="RATE",
                       help="the line rates to give each message's time at (default 9600 115200)")
    sizes.set_defaults(func=cmd_proto_sizes)
    decode = proto.add_parser("decode", help="decode a capture file or a serial port (pyserial URL)")
    decode.add_argument("source", help="file path, /dev/ttyUSB0, socket://host:port, loop://, ...")
    decode.add_argument("--baud", type=int, default=9600, metavar="RATE",
                        help="a serial port's line rate (default 9600, the nodes' rate as built)")
    decode.add_argument("--duration", type=float, default=0.0, help="stop reading a port after this many seconds")
    decode.set_defaults(func=cmd_proto_decode)
