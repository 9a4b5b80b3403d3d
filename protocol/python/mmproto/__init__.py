"""mmproto: the mmrig wire protocol (protocol/SPEC.md) in Python."""

import serial as _serial

# unix://PATH, a virtual bench's line socket, for every pyserial opener in this process (urlhandler/)
if "mmproto.urlhandler" not in _serial.protocol_handler_packages:
    _serial.protocol_handler_packages.append("mmproto.urlhandler")

from .decoder import Received, StreamDecoder
from .framing import (CRC_CHECK, CRC_NAME, MAX_BODY, MAX_ENCODED, MAX_FRAME, MAX_PAYLOAD, DecoderCounters,
                      Outcome, crc16, encode_frame)
from .latency import TimeBase, extend_timecode
from .link import NODE_KINDS, Arrival, Item, Link, LinkDown, LinkError, Written, poll_until
from .messages import (CANCEL_ALL, SCHEDULE_HORIZON_TICKS, Cancel, Cancelled, ResetCause, HELLO_FLAG_8051, HELLO_FLAG_CAPTURE, HELLO_FLAG_HIST, HELLO_FLAG_POLLED, LOAD_PERIOD_MIN_US, PROFILER_KINDS, MESSAGE_TYPES, PROTO_VERSION,
                       RESULT_FLAG_FIRE, RESULT_FLAG_LOST_BEFORE, RESULT_FLAG_STROBE, SPEC_NAMES, Ack, BadLength, Baud,
                       Counters, Dispatch, Error, ErrorCode, ExecutorMode, Fire, Fired, Hello, HistArm, HistCells, HistSummary, LocalEvent, Message,
                       MessageError, Mode, NodeKind, Nop, Periodic, Query, Result, Schedule, Status, Timecode, UnknownType,
                       fw_version_text, load_error, parse_payload)
from .sequence import SeqTracker

__all__ = [
    "CANCEL_ALL", "SCHEDULE_HORIZON_TICKS", "Cancel", "Cancelled", "ResetCause",
    "Arrival", "HELLO_FLAG_8051", "HELLO_FLAG_CAPTURE", "HELLO_FLAG_HIST", "HELLO_FLAG_POLLED", "Item", "Link", "LinkDown", "LinkError", "Written",
    "LOAD_PERIOD_MIN_US", "PROFILER_KINDS", "load_error",
    "NODE_KINDS", "RESULT_FLAG_FIRE", "RESULT_FLAG_LOST_BEFORE", "RESULT_FLAG_STROBE",
    "Ack", "BadLength", "Baud", "CRC_CHECK", "CRC_NAME", "Counters", "DecoderCounters", "Dispatch", "Error", "ErrorCode",
    "ExecutorMode", "Fire", "Fired", "Hello", "HistArm", "HistCells", "HistSummary", "LocalEvent", "MAX_BODY", "MAX_ENCODED", "MAX_FRAME", "MAX_PAYLOAD",
    "MESSAGE_TYPES", "Message", "MessageError", "Mode", "NodeKind", "Nop", "Outcome", "PROTO_VERSION", "Periodic", "Query", "Received",
    "Result", "SPEC_NAMES", "Schedule", "SeqTracker", "Status", "StreamDecoder", "TimeBase", "Timecode",
    "UnknownType", "crc16", "encode_frame", "extend_timecode", "fw_version_text", "parse_payload", "poll_until",
]
