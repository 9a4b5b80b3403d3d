"""SPEC.md is the source of truth: its tables must agree with the Python implementation."""

import re

from mmproto import MESSAGE_TYPES, SPEC_NAMES, framing
from mmproto.messages import ErrorCode
from mmproto.wiretime import markdown_table


def spec_messages(text: str) -> dict[int, tuple[str, list[tuple[int, str, str]]]]:
    """{type: (name, [(offset, field, kind), ...])} from the '### 0xNN NAME' sections."""
    found: dict[int, tuple[str, list[tuple[int, str, str]]]] = {}
    for match in re.finditer(r"^### 0x([0-9A-F]{2}) (\w+)\n(.*?)(?=^### |^## )", text, re.M | re.S):
        rows = re.findall(r"^\| (\d+) \| (\w+) \| (u8|u16|u32) \|", match.group(3), re.M)
        found[int(match.group(1), 16)] = (match.group(2), [(int(o), f, k) for o, f, k in rows])
    return found


def test_spec_catalogue_matches_python(spec_text: str) -> None:
    spec = spec_messages(spec_text)
    assert set(spec) == set(MESSAGE_TYPES)
    for msg_type, cls in MESSAGE_TYPES.items():
        name, rows = spec[msg_type]
        assert name == SPEC_NAMES[cls]
        assert [(f, k) for _, f, k in rows] == list(cls.FIELDS), name
        offset = 0
        for row_offset, field, kind in rows:
            assert row_offset == offset, f"{name}.{field} offset"
            offset += {"u8": 1, "u16": 2, "u32": 4}[kind]
        assert offset == cls.body_len() <= framing.MAX_BODY


def test_spec_wire_table_is_current(spec_text: str) -> None:
    block = re.search(r"<!-- wire-table:begin.*?-->\n(.*?)\n<!-- wire-table:end -->", spec_text, re.S)
    assert block, "SPEC.md lost its wire-table markers"
    assert block.group(1) == markdown_table(), "regenerate with `mmrig proto sizes` and paste into SPEC.md"


def test_spec_sizes_and_crc(spec_text: str) -> None:
    for name in ("MAX_BODY", "MAX_PAYLOAD", "MAX_FRAME", "MAX_ENCODED"):
        row = re.search(rf"\(`{name}`\) \| (\d+) \|", spec_text)
        assert row and int(row.group(1)) == getattr(framing, name), name
    assert framing.CRC_NAME in spec_text and f"0x{framing.CRC_CHECK:04X}" in spec_text
    assert framing.crc16(b"123456789") == framing.CRC_CHECK


def test_spec_error_codes(spec_text: str) -> None:
    rows = dict(re.findall(r"^\| (\d+) \| ([A-Z_]+) \|", spec_text, re.M))
    for code in ErrorCode:
        assert rows.get(str(code.value)) == code.name
