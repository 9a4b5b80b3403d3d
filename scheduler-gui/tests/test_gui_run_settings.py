"""The run settings panel: the rate slider says what 0 means (one event every tick), in the tick the profiler's
HELLO gives; it reaches 1 ms in normal mode (a schedule grid), and the link rate beside it says what the
profiler's line carries."""

from __future__ import annotations

import pytest


def test_rate_slider_says_every_tick_at_zero(make_win) -> None:
    win = make_win()
    win.run_settings.rate.setValue(0)
    assert "every tick" in win.run_settings.rate_label.text() and "71.1 ms" in win.run_settings.rate_label.text()
    assert "every tick" in win.run_settings.rate.toolTip() and win.run_settings.rate.toolTip() == win.run_settings.rate_label.toolTip()
    assert win.config().rate_ms is None
    win.run_settings.set_rate_ms(150)
    assert win.run_settings.rate_label.text() == "schedule rate: every 150 ms" and "150 ms" in win.run_settings.rate.toolTip()
    assert "every tick" not in win.run_settings.rate_label.text() and win.config().rate_ms == 150.0
    # the profiler's HELLO gives the tick: the words follow it
    win.run_settings.rate.setValue(0)
    win.connection.show_health({"nodes": {"profiler": {"hello": {"fw_version": 1, "proto_version": 4, "cpu_hz": 16_000_000,
                                                       "tick_counts": 1000, "timer_hz": 100_000, "baud": 9600},
                                             "bytes_in": 0, "frames_in": 0, "frames_out": 0}}})
    assert "every tick (10.0 ms)" in win.run_settings.rate_label.text()


def test_rate_slider_reaches_one_millisecond_in_normal_mode_with_a_link_that_carries_it(make_win, qtbot) -> None:
    from PySide6.QtCore import Qt

    win = make_win()
    rs = win.run_settings
    rs.set_mode("normal")
    rs.rate.setFocus()
    rs.rate.setValue(0)
    qtbot.keyClick(rs.rate, Qt.Key.Key_Right)                       # one step right of "every tick": 1 ms
    assert rs.rate_ms() == 1.0 and rs.rate_label.text() == "schedule rate: every 1 ms (1,000/s)"
    # as built (9600 baud) the profiler's line carries 41 RESULTs a second: said in red beside the link rate,
    # and the run refused with the line budget's reason
    assert rs.link_label.text() == "carries 41/s, not 1,000" and "c0392b" in rs.link_label.styleSheet()
    assert "faster link rate" in rs.link_label.toolTip() and "as built" in rs.link_label.toolTip()
    with pytest.raises(ValueError, match="--baud 250000"):
        win.config()
    rs.baud.setCurrentIndex(rs.baud.findData(500000))
    assert rs.link_label.text() == "carries 1,197 events/s" and rs.link_label.styleSheet() == ""
    cfg = win.config()
    assert (cfg.mode, cfg.rate_ms, cfg.baud) == ("normal", 1.0, 500000)


def test_mixed_mode_keeps_the_rate_at_ten_milliseconds_or_more_unless_periodic(make_win) -> None:
    """The executor's list fires at tick starts: moments inside ticks are normal mode's (the PC fires them) and
    mixed mode's periodic generation's (the executor fires a PERIODIC series)."""
    win = make_win()
    rs = win.run_settings
    rs.set_mode("normal")
    rs.set_rate_ms(2)
    assert rs.rate_ms() == 2.0
    rs.set_mode("mixed")
    assert rs.rate_ms() == 10.0
    rs.set_rate_ms(3)
    assert rs.rate_ms() == 10.0
    rs.set_rate_ms(None)
    assert rs.rate_ms() is None                                     # every tick stays every tick
    rs.generation.setCurrentText("periodic")
    rs.set_rate_ms(1)
    rs.baud.setCurrentIndex(rs.baud.findData(500000))
    cfg = win.config()
    assert (cfg.mode, cfg.generation, cfg.rate_ms, cfg.baud) == ("mixed", "periodic", 1.0, 500000)
    assert rs.link_label.text() == "carries 1,340 events/s"
    rs.generation.setCurrentText("free")
    assert rs.rate_ms() == 10.0


def test_rate_and_link_rate_are_kept_between_starts_and_old_settings_still_read(make_win, tmp_path) -> None:
    from PySide6.QtCore import QSettings

    ini = tmp_path / "kept.ini"
    win = make_win(ini)
    win.run_settings.set_mode("normal")
    win.run_settings.set_rate_ms(4)
    win.run_settings.baud.setCurrentIndex(win.run_settings.baud.findData(250000))
    win.save_settings()
    again = make_win(ini)
    assert (again.run_settings.rate_ms(), again.run_settings.link_baud()) == (4.0, 250000)
    # a settings file of the slider in 10 ms steps (rate = 15: 150 ms), from before the 1 ms positions
    old = tmp_path / "old.ini"
    s = QSettings(str(old), QSettings.Format.IniFormat)
    s.setValue("rate", 15)
    s.sync()
    assert make_win(old).run_settings.rate_ms() == 150.0
