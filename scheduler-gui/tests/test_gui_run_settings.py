"""The run settings panel's words: the rate slider says what 0 means (one event every tick), in the tick the
profiler's HELLO gives."""

from __future__ import annotations


def test_rate_slider_says_every_tick_at_zero(make_win) -> None:
    win = make_win()
    win.run_settings.rate.setValue(0)
    assert "every tick" in win.run_settings.rate_label.text() and "71.1 ms" in win.run_settings.rate_label.text()
    assert "every tick" in win.run_settings.rate.toolTip() and win.run_settings.rate.toolTip() == win.run_settings.rate_label.toolTip()
    assert win.config().rate_ms is None
    win.run_settings.rate.setValue(15)
    assert win.run_settings.rate_label.text() == "schedule rate: every 150 ms" and "150 ms" in win.run_settings.rate.toolTip()
    assert "every tick" not in win.run_settings.rate_label.text() and win.config().rate_ms == 150.0
    # the profiler's HELLO gives the tick: the words follow it
    win.run_settings.rate.setValue(0)
    win.connection.show_health({"nodes": {"profiler": {"hello": {"fw_version": 1, "proto_version": 4, "cpu_hz": 16_000_000,
                                                       "tick_counts": 1000, "timer_hz": 100_000, "baud": 9600},
                                             "bytes_in": 0, "frames_in": 0, "frames_out": 0}}})
    assert "every tick (10.0 ms)" in win.run_settings.rate_label.text()
