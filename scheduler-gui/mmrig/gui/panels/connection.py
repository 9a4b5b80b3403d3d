"""The connection panel: the virtual bench (its profiler the AVR or the paper's 8051 image, the USB-serial adapter
its lines model) or boards on serial ports (and whether opening a port resets the board), "Connect / identify" (a probe in a thread of its own),
and the links' health. It chooses the endpoint through mmrig.endpoints.choose_endpoint."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings, Qt, QThread, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QGridLayout, QGroupBox, QLabel, QPushButton

from mmproto import fw_version_text
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Endpoint

from mmrig.endpoints import Target, choose_endpoint
from mmrig.gui.widgets.controls import radio_pair
from mmrig.gui.worker import Problem, ProbeWorker


def list_serial_ports() -> list[tuple[str, str]]:
    from mmsched.run.boards import list_ports   # the one listing, `mmrig boards`' too

    return [(p.device, p.description) for p in list_ports()]


class ConnectionPanel(QGroupBox):
    """Where runs go. Signals: `bench_changed` (the bench chosen or not: only it traces the executor),
    `tick_changed` (ms: the profiler's tick as its HELLO says), `timer_hz_changed` (its counter's rate), `message` (a line for the log), `problem`
    (a Problem to show: the probe failed)."""

    bench_changed = Signal(bool)
    tick_changed = Signal(float)
    timer_hz_changed = Signal(float)
    message = Signal(str)
    problem = Signal(object)

    PROFILER_KIND_TIP = ("The bench's profiler: the ATmega2560 image, or the paper's 87C51 image on ucsim's 8051 "
                         "core, whose polled event input adds up to 684 us to each stamp (docs/bench.md)")

    LINE_TIP = ("The USB-serial adapter the bench puts on its lines, in virtual time: none, an FTDI cable (its "
                "latency timer holds the nodes' bytes up to 16 ms, or 1 ms when set so) or the Mega's own 16U2 "
                "(a flush every 4.1 ms); the scheduler's view of each tick moves by what it holds "
                "(docs/usb-serial.md)")
    LINES = (("none (ideal)", "ideal", "no adapter: the node's bytes reach the PC as their stop bit ends"),
             ("FTDI, 16 ms timer", "ftdi:latency=16", "an FTDI cable at its default latency timer"),
             ("FTDI, 1 ms timer", "ftdi:latency=1", "an FTDI cable with its latency timer set to 1 ms"),
             ("Mega's 16U2", "cdc-16u2", "an Arduino Mega's own USB port: its ATmega16U2's firmware flushes every "
                                         "4.096 ms or past 96 bytes"))

    def __init__(self, parent=None) -> None:
        super().__init__("Connection", parent)
        self.mode = "mixed"          # the run settings' mode: normal mode needs no executor port
        self.last_health: dict[str, Any] | None = None
        self._build()
        self.conn_bench.toggled.connect(self.on_connection_changed)
        self.refresh_button.clicked.connect(self.refresh_ports)

    def _build(self) -> None:
        cl = QGridLayout(self)
        self.conn_bench, self.conn_serial, self.conn_group = radio_pair(self, "virtual bench", "serial ports")
        cl.addWidget(self.conn_bench, 0, 0)
        cl.addWidget(self.conn_serial, 0, 1)
        self.profiler_port = QComboBox()
        self.executor_port = QComboBox()
        for c in (self.profiler_port, self.executor_port):
            c.setEditable(True)
            c.setMinimumWidth(150)
        cl.addWidget(QLabel("profiler"), 1, 0)
        cl.addWidget(self.profiler_port, 1, 1)
        self.executor_label = QLabel("executor")
        cl.addWidget(self.executor_label, 2, 0)
        cl.addWidget(self.executor_port, 2, 1)
        self.refresh_button = QPushButton("Refresh ports")
        self.probe_button = QPushButton("Connect / identify")
        cl.addWidget(self.refresh_button, 3, 0)
        cl.addWidget(self.probe_button, 3, 1)
        self.reset_on_open = QCheckBox("Opening a port resets the board (Arduino)")
        self.reset_on_open.setChecked(True)
        self.reset_on_open.setToolTip("An Arduino's USB port resets the board when it is opened, and its bootloader "
                                      "waits 0.8 s: the scheduler listens for the board's own HELLO first instead of "
                                      "asking at once (a byte then keeps it in the bootloader). Uncheck for an adapter "
                                      "that does not reset the board (docs/hardware.md).")
        cl.addWidget(self.reset_on_open, 5, 0, 1, 2)
        self.line_model = QComboBox()
        for text, spec, tip in self.LINES:
            self.line_model.addItem(text, spec)
            self.line_model.setItemData(self.line_model.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.line_model.setToolTip(self.LINE_TIP)
        # on the bench the executor row chooses the line (the bench's executor has no port to choose; boards have
        # the adapter they have): on_connection_changed shows one
        cl.addWidget(self.line_model, 2, 1)
        self.profiler_kind = QComboBox()
        # short names, so the whole of each shows in the panel's width; the rest is each item's tooltip
        for text, kind, tip in (("AVR (ATmega2560)", "avr", "the ATmega2560 image: events stamped by input capture"),
                                ("8051 (87C51, polled)", "8051", "the paper's 87C51 image on ucsim's 8051 core: "
                                                                 "events polled, up to 684 us added to each stamp")):
            self.profiler_kind.addItem(text, kind)
            self.profiler_kind.setItemData(self.profiler_kind.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.profiler_kind.setToolTip(self.PROFILER_KIND_TIP)
        # on the bench the profiler row chooses its image, with boards its port (on_connection_changed shows one)
        cl.addWidget(self.profiler_kind, 1, 1)
        self.health_label = QLabel("not connected")
        self.health_label.setWordWrap(True)
        self.health_label.setTextFormat(Qt.TextFormat.RichText)
        self.health_label.setMinimumHeight(70)
        self.health_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        cl.addWidget(self.health_label, 4, 0, 1, 2)

    # ---- settings kept between starts --------------------------------------------------------------------
    def restore(self, s: QSettings) -> None:
        (self.conn_serial if s.value("connection", "bench") == "serial" else self.conn_bench).setChecked(True)
        self.profiler_port.setEditText(str(s.value("profiler_port", "")))
        self.executor_port.setEditText(str(s.value("executor_port", "")))
        self.reset_on_open.setChecked(str(s.value("reset_on_open", "true")).lower() == "true")
        kind = self.profiler_kind.findData(str(s.value("profiler_kind", "avr")))
        self.profiler_kind.setCurrentIndex(kind if kind >= 0 and self.has_8051() else 0)
        self.line_model.setCurrentIndex(max(0, self.line_model.findData(str(s.value("line_model", "ideal")))))

    def save(self, s: QSettings) -> None:
        s.setValue("connection", "serial" if self.conn_serial.isChecked() else "bench")
        s.setValue("profiler_port", self.profiler_port.currentText())
        s.setValue("executor_port", self.executor_port.currentText())
        s.setValue("reset_on_open", self.reset_on_open.isChecked())
        s.setValue("profiler_kind", self.profiler_kind.currentData())
        s.setValue("line_model", self.line_model.currentData())

    # ---- state -------------------------------------------------------------------------------------------
    def on_bench(self) -> bool:
        return self.conn_bench.isChecked()

    def set_mode(self, mode: str) -> None:
        """The run settings' mode changed: normal mode has no executor port."""
        self.mode = mode
        self.executor_port.setEnabled(self.conn_serial.isChecked() and mode != "normal")

    def on_connection_changed(self, *_: Any) -> None:
        serial_on = self.conn_serial.isChecked()
        self.profiler_port.setEnabled(serial_on)
        self.executor_port.setEnabled(serial_on and self.mode != "normal")
        self.refresh_button.setEnabled(serial_on)
        self.reset_on_open.setEnabled(serial_on)
        self.reset_on_open.setVisible(serial_on)
        self.profiler_kind.setEnabled(not serial_on and self.has_8051())
        self.profiler_kind.setVisible(not serial_on)
        self.line_model.setEnabled(not serial_on)
        self.line_model.setVisible(not serial_on)
        self.executor_port.setVisible(serial_on)
        self.executor_label.setText("executor" if serial_on else "USB line")
        self.profiler_port.setVisible(serial_on)
        self.bench_changed.emit(not serial_on)

    def set_running(self, on: bool) -> None:
        for w in (self.conn_bench, self.conn_serial, self.probe_button):
            w.setEnabled(not on)
        if not on:
            self.on_connection_changed()

    def has_8051(self) -> bool:
        """Whether the bench program has the 8051 core (tools/ucsim.sh built it); the box says why not."""
        from mmhil.bench import HAS_8051   # the GUI is an entry point: it may know the bench

        if not HAS_8051:
            self.profiler_kind.setToolTip(self.PROFILER_KIND_TIP + ". Not here: ucsim's 8051 core is not built "
                                          "(tools/ucsim.sh, which make setup runs)")
        return HAS_8051

    def refresh_ports(self) -> None:
        try:
            ports = list_serial_ports()
        except Exception as exc:  # noqa: BLE001
            self.message.emit(f"cannot list serial ports: {exc}")
            ports = []
        for combo in (self.profiler_port, self.executor_port):
            text = combo.currentText()
            combo.clear()
            for dev, desc in ports:
                combo.addItem(dev, desc)
                combo.setItemData(combo.count() - 1, desc, Qt.ItemDataRole.ToolTipRole)
            combo.setEditText(text)
        self.message.emit(f"serial ports: {', '.join(d for d, _ in ports) or 'none found'}")

    def endpoint(self) -> Endpoint:
        """The bench or the boards, as the radio buttons say (the GUI is an entry point: it chooses; the core
        runs against either). ValueError for a port the run's mode needs and that is not given."""
        if self.conn_bench.isChecked():
            return choose_endpoint(Target(profiler_kind=self.profiler_kind.currentData(),      # the paced bench
                                          line_model=self.line_model.currentData()))
        prof = self.profiler_port.currentText().strip() or None
        exe = self.executor_port.currentText().strip() or None
        if prof is None:
            raise ValueError("choose the profiler's serial port (or the virtual bench)")
        if exe is None and self.mode != "normal":
            raise ValueError(f"{self.mode} mode needs the executor's serial port too")
        return choose_endpoint(Target.of(prof, exe, reset_on_open=self.reset_on_open.isChecked()))

    # ---- health --------------------------------------------------------------------------------------------
    def show_health(self, h: dict[str, Any]) -> None:
        """The links' health (mmrig.child.health_of): each node's identity and counters, the bench's lag."""
        lines, tips = [], []
        for name, n in h.get("nodes", {}).items():
            hello = n.get("hello")
            if name == "profiler" and hello and hello.get("timer_hz"):
                self.tick_changed.emit(1000.0 * hello["tick_counts"] / hello["timer_hz"])
                self.timer_hz_changed.emit(float(hello["timer_hz"]))
            # one line a node in the panel's 360 px (two made the left column taller than a 1280 x 800 screen):
            # the tick in ms; its exact counts and the protocol version in the tooltip
            ident = (f"fw {fw_version_text(hello['fw_version'])}, {hello['cpu_hz'] / 1e6:g} MHz, tick "
                     f"{1000.0 * hello['tick_counts'] / hello['timer_hz']:.3f} ms, {hello['baud']} Bd"
                     if hello and hello.get("timer_hz") else "no HELLO")
            if hello:
                tips.append(f"{name}: firmware {fw_version_text(hello['fw_version'])}, protocol "
                            f"{hello['proto_version']}, CPU {hello['cpu_hz']} Hz, tick {hello['tick_counts']} counts "
                            f"of a {hello['timer_hz']} Hz timer, {hello['baud']} Bd")
            err = n.get("errors", 0) + n.get("seq_lost", 0)
            state = f"<span style='color:#c0392b'>GONE: {n['vanished']}</span>" if n.get("vanished") else ""
            lines.append(f"<b>{name}</b>: {ident}<br>&nbsp;&nbsp;in {n['bytes_in']} B / {n['frames_in']} frames, "
                         f"out {n['frames_out']} frames, errors <b>{err}</b> {state}")
        b = h.get("bench")
        if b:
            bad = b.get("exceeded") or 0
            lines.append(f"<b>bench</b>: lag max {b.get('lag_max_us') or 0:.0f} us (bound {b.get('bound_us') or 0:.0f}), "
                         f"p99 {b.get('lag_p99_us') or 0:.0f} us" + (f", <span style='color:#c0392b'>{bad} over</span>" if bad else ""))
        self.health_label.setText("<br>".join(lines) or "no nodes")
        self.health_label.setToolTip("\n".join(tips))
        self.last_health = h

    def probe(self, endpoint: Endpoint, cfg: RunConfig) -> None:
        """Connect without running, in a thread of its own: each node's HELLO, then the health shown."""
        self.health_label.setText("connecting...")
        self.probe_button.setEnabled(False)
        self._probe = ProbeWorker(endpoint, cfg)
        self._probe_thread = QThread()
        self._probe.moveToThread(self._probe_thread)
        self._probe_thread.started.connect(self._probe.run)
        self._probe.done.connect(self._probe_done)
        self._probe.failed.connect(self._probe_failed)
        self._probe_thread.start()

    def _probe_finish(self) -> None:
        self._probe_thread.quit()
        self._probe_thread.wait(5000)
        self.probe_button.setEnabled(True)

    def _probe_done(self, h: dict[str, Any]) -> None:
        self._probe_finish()
        self.show_health(h)
        self.message.emit("connected: " + ", ".join(f"{n} says HELLO" for n, v in h["nodes"].items() if v.get("hello")))

    def _probe_failed(self, p: Problem) -> None:
        self._probe_finish()
        self.health_label.setText(f"<span style='color:#c0392b'>{p.title}</span>")
        self.problem.emit(p)
