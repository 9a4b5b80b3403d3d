"""Windows sized for the screen they open on. Each window asks for the size it is laid out for best (the main
window 1280 x 800, the profile window 1500 x 950, ...) and gets at most the screen's available geometry (the
screen less the desktop's panels), placed inside it: on a 1280 x 800 laptop a larger window would open with its
legend, time axis and bottom tables off the screen's edge."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

# What every window's layout must fit (its minimum size): a 1280 x 800 screen less a desktop panel of up to
# 40 px (GNOME's top bar, a taskbar). The tests hold each window to it.
SMALL_SCREEN = QSize(1280, 760)


def available(w: QWidget) -> QRect:
    """The available geometry of the screen W is on (or will open on: its parent's, else the primary)."""
    screen = w.screen() or (w.parentWidget().screen() if w.parentWidget() is not None else None) \
        or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def fit_to_screen(w: QWidget, width: int, height: int) -> QSize:
    """Resizes W to WIDTH x HEIGHT, or less where the screen has less room, and moves it inside the screen.
    A shown window's frame (title bar, borders) is counted; before it is shown its frame is not known, and a
    window manager places a new window's frame inside the work area itself."""
    room = available(w)
    frame = w.frameGeometry().size() - w.geometry().size() if w.isVisible() else QSize(0, 0)
    size = QSize(max(1, min(width, room.width() - frame.width())), max(1, min(height, room.height() - frame.height())))
    w.resize(size)
    if w.isVisible() or w.isWindow() and w.parentWidget() is None:
        geo = w.frameGeometry() if w.isVisible() else QRect(w.pos(), size)
        x = min(max(geo.x(), room.x()), room.right() + 1 - geo.width())
        y = min(max(geo.y(), room.y()), room.bottom() + 1 - geo.height())
        if (x, y) != (geo.x(), geo.y()):
            w.move(QPoint(max(x, room.x()), max(y, room.y())))
    return size
