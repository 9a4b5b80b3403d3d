"""The Python implementation against the shared vector files (the C tests read the same files)."""

from pathlib import Path

import pytest
from cobs import cobs
from crc import Calculator, Crc16
from hypothesis import given
from hypothesis import strategies as st

from mmproto import MESSAGE_TYPES, SPEC_NAMES, StreamDecoder, crc16, parse_payload
from mmproto.framing import encode_frame
from mmproto.vectors import CobsVector, CrcVector, MessageVector, StreamVector, read

VECTOR_DIR = Path(__file__).resolve().parents[2] / "vectors"


def load(name: str, kind: type) -> list:
    vectors = read(VECTOR_DIR / name)
    assert vectors and all(isinstance(v, kind) for v in vectors), name
    return vectors


CRC = load("crc.vec", CrcVector)
COBS = load("cobs.vec", CobsVector)
MESSAGES = load("messages.vec", MessageVector)
STREAMS = load("streams.vec", StreamVector)


def test_catalogue_check_value_is_in_the_vectors() -> None:
    check = next(v for v in CRC if v.data == b"123456789")
    assert check.crc == 0x29B1 == crc16(b"123456789")


@pytest.mark.parametrize("v", CRC, ids=lambda v: v.name)
def test_crc(v: CrcVector) -> None:
    assert crc16(v.data) == v.crc


@pytest.mark.parametrize("v", COBS, ids=lambda v: v.name)
def test_cobs(v: CobsVector) -> None:
    assert cobs.encode(v.data) == v.encoded
    assert cobs.decode(v.encoded) == v.data


@pytest.mark.parametrize("v", MESSAGES, ids=lambda v: v.name)
def test_message(v: MessageVector) -> None:
    cls = MESSAGE_TYPES[v.type]
    assert SPEC_NAMES[cls] == v.type_name
    assert [(name, kind) for name, kind, _ in v.fields] == list(cls.FIELDS)
    msg = cls(*(value for _, _, value in v.fields))
    assert msg.payload(v.seq) == v.payload
    assert crc16(v.payload) == v.crc
    assert msg.wire(v.seq) == v.wire == encode_frame(v.payload)
    assert parse_payload(v.payload) == (v.seq, msg)
    received = StreamDecoder().feed(v.wire)
    assert [(r.seq, r.message) for r in received] == [(v.seq, msg)]


def test_every_message_type_has_a_vector() -> None:
    assert {v.type for v in MESSAGES} == set(MESSAGE_TYPES)


@pytest.mark.parametrize("v", STREAMS, ids=lambda v: v.name)
def test_stream_in_one_piece(v: StreamVector) -> None:
    decoder = StreamDecoder()
    assert [r.payload for r in decoder.feed(v.input)] == v.frames
    assert decoder.counters.as_dict() == v.counters


@pytest.mark.parametrize("v", STREAMS, ids=lambda v: v.name)
def test_stream_byte_by_byte(v: StreamVector) -> None:
    decoder = StreamDecoder()
    frames = [r.payload for i in range(len(v.input)) for r in decoder.feed(v.input[i:i + 1])]
    assert frames == v.frames
    assert decoder.counters.as_dict() == v.counters


def test_committed_vectors_are_what_the_generator_writes(tmp_path: Path) -> None:
    import subprocess
    import sys

    generator = VECTOR_DIR / "generate.py"
    subprocess.run([sys.executable, str(generator), "--out", str(tmp_path)], check=True, capture_output=True)
    for name in ("crc.vec", "cobs.vec", "messages.vec", "streams.vec"):
        assert (tmp_path / name).read_text() == (VECTOR_DIR / name).read_text(), f"{name} is stale"


@given(st.binary(max_size=300))
def test_the_crc_is_the_crc_packages_catalogue_crc_on_any_bytes(data: bytes) -> None:
    # crc16 is binascii's C code; the `crc` package's catalogue entry is the independent reference
    assert crc16(data) == Calculator(Crc16.IBM_3740).checksum(data)
