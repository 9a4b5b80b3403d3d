"""The firmware version in one form everywhere: the GUI's link health says it as the command line does
(mmproto.fw_version_text: HELLO's major * 256 + minor as "3.0"), never the raw 16-bit number."""

from __future__ import annotations


def test_the_link_health_says_the_firmware_version_as_the_command_line_does(make_win) -> None:
    from mmproto import fw_version_text

    win = make_win()
    hello = {"fw_version": 3 << 8, "proto_version": 1, "cpu_hz": 16_000_000, "tick_counts": 1_137_778,
             "timer_hz": 16_000_000, "baud": 9600}
    node = {"hello": hello, "bytes_in": 10, "frames_in": 2, "frames_out": 1, "errors": 0, "seq_lost": 0}
    win.connection.show_health({"nodes": {"profiler": node, "executor": dict(node, hello=dict(hello, fw_version=1 << 8))}})
    text = win.connection.health_label.text()
    assert fw_version_text(768) == "3.0"
    assert "fw 3.0," in text and "fw 1.0," in text, text
    assert "768" not in text and "fw 256" not in text, text
    assert "profiler: firmware 3.0, protocol 1" in win.connection.health_label.toolTip()
