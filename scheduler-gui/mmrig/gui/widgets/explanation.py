"""The pane under the run table that says why the selected event was as late as it was (mmanalysis.explain): a line
with the largest part, then every part in the order the event met them, each with its time and share (the largest
in bold), then the notes; wrapped to the pane's width, scrolling when longer."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser

from mmanalysis.explain import Explanation, part_words
from mmanalysis.runexplainer import Refused, one_line

NOTE_STYLE = "color:#444;font-size:small;"
HEIGHT = 150        # the pane's height when it opens: a headline and 7 parts at the default font, the table above


class ExplanationPane(QTextBrowser):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("explanation")
        self.setOpenLinks(False)
        self.setStyleSheet("QTextBrowser#explanation{background:#f7f7f2;}")
        self.event: int | None = None           # the event shown (or being explained)
        self.hide()

    def show_html(self, event: int | None, body: str) -> None:
        """BODY in the pane (the live panel opens it: open_explanation)."""
        self.event = event
        self.setHtml(body)

    def show_waiting(self, event: int, what: str = "") -> None:
        self.show_html(event, f"<p><b>Event {event}</b>: explaining{' (' + html.escape(what) + ')' if what else ''}"
                              " ...</p>")

    def show_message(self, event: int | None, text: str) -> None:
        head = f"<b>Event {event}</b>: " if event is not None else ""
        self.show_html(event, f"<p>{head}{html.escape(text)}</p>")

    def show_item(self, item: Explanation | Refused) -> None:
        if isinstance(item, Refused):
            self.show_html(item.event, f"<p>{html.escape(one_line(item))}</p>")
            return
        big = item.largest()
        parts = "".join(f"<li>{'<b>' if p is big else ''}{html.escape(part_words(p))}{'</b>' if p is big else ''}</li>"
                        for p in item.parts if p.key != "wakeup.rounding" or abs(p.us) >= 0.05)
        notes = " ".join(html.escape(n[0].upper() + n[1:]) + "." for n in item.notes)
        self.show_html(item.event,
                       f"<p><b>Event {item.event}</b> ({html.escape(item.outcome)}, {item.latency_us:.1f} us, tick "
                       f"{item.scheduled_tc}): largest part <b>{html.escape(part_words(big))}</b>. In the order the "
                       f"event met them:</p><ol style='margin-top:0;-qt-list-indent:1'>{parts}</ol>"
                       + (f"<p style='{NOTE_STYLE}'>{notes}</p>" if notes else ""))

    def clear_event(self) -> None:
        self.event = None
        self.clear()
        self.hide()


__all__ = ["ExplanationPane", "HEIGHT"]
