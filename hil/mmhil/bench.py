"""The virtual bench from Python: start `hil/bench/build/mmbench` with the two AVR images, talk to its
control socket, tear it down without leaving a process behind: the bench ends with the process that started it,
however that ended (a pipe only this process holds: --parent-fd, hil/bench/parent.c), and the run folder of a
bench that is gone is removed by the next Bench.start (rundirs.py)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmproto import PROFILER_KINDS

from .paths import PACKAGE_DATA, CheckoutNotFound, find_root, locate, ucsim_built
from . import pacedlog, turns
from .rundirs import PREFIX, record_owner, sweep_stale_run_dirs

LAYOUT = locate()       # a checkout (built there by make) or the installed package's data (paths.py)
ROOT = LAYOUT.root if LAYOUT.root is not None else LAYOUT.bench_dir.parents[1]
BENCH_DIR = LAYOUT.bench_dir
BENCH_BIN = LAYOUT.bench_bin
FIXTURE_ELF = LAYOUT.fixture_elf
PROFILER_ELF = LAYOUT.profiler_elf
EXECUTOR_ELF = LAYOUT.executor_elf
PROFILER_IHX = LAYOUT.profiler_ihx       # the 8051 profiler's image (profiler_kind="8051")
HAS_8051 = ucsim_built(LAYOUT)           # build/ucsim is there: the bench program has the 8051 core
F_CPU = 16_000_000
NODES = ("profiler", "executor")



def exchange(control_path: Path, line: str, timeout: float = 5.0) -> bytes:
    """One command on a fresh connection to a bench's control socket; its reply line as bytes, unparsed."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(control_path))
        s.sendall(line.encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data

class BenchError(RuntimeError):
    """The bench failed; the message ends with the tail of its log."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(f"{message}\n--- bench log (tail) ---\n{log_tail}" if log_tail else message)
        self.log_tail = log_tail


def make(target_dir: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """`make -C TARGET_DIR ARGS...`, output captured, one such make at a time on this machine's checkout (or
    installed copy). Parallel test workers each finding an image missing ran make in one folder at once, and the
    executor's variant images (GAP_US=0, PULLUPS=0) share its kernel objects: one make deleted
    build/avr/kernel/port.o while another linked it ("avr-gcc: error: build/avr/kernel/port.o: No such file")."""
    lock_dir = LAYOUT.root / "build" if LAYOUT.root is not None else BENCH_DIR.parent
    lock_dir.mkdir(parents=True, exist_ok=True)
    from mmanalysis.safefiles import lock_file     # light module: see Bench.start

    with os.fdopen(lock_file(lock_dir / "make.lock"), "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(["make", "-C", str(target_dir), *args], capture_output=True, text=True,
                              timeout=timeout)


def _make(target_dir: Path, goal: str, product: Path, hint: str = "") -> None:
    try:
        done = make(target_dir, goal)
    except FileNotFoundError as exc:
        raise BenchError(f"cannot build {product}: no `make` on this machine{hint}") from exc
    if done.returncode != 0 or not product.exists():
        raise BenchError(f"cannot build {product}: make -C {target_dir} {goal} failed{hint}",
                         done.stdout[-2000:] + done.stderr[-2000:])


def _build_from_package() -> None:
    """The installed package's bench program, built on first use from the sources it ships (one build per
    version of them, under a lock: parallel test workers wait for the first)."""
    missing = [p.name for p in (PROFILER_ELF, EXECUTOR_ELF) if not p.exists()]
    if missing:
        raise BenchError(f"this mmrig was installed without the firmware images ({', '.join(missing)} not in "
                         f"{PACKAGE_DATA}): in a checkout run `make build`, then `pip install .` again; or set "
                         "MMRIG_ROOT to a checkout where they are built")
    if BENCH_BIN.exists():
        return
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    from mmanalysis.safefiles import lock_file

    with os.fdopen(lock_file(BENCH_DIR.parent / f"{BENCH_DIR.name}.lock"), "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if BENCH_BIN.exists():
            return
        shutil.copytree(PACKAGE_DATA / "bench", BENCH_DIR, dirs_exist_ok=True)
        tools = [t for t in ("make", "gcc") if shutil.which(t) is None]
        if not Path("/usr/include/simavr/sim_avr.h").exists() and not Path("/usr/local/include/simavr/sim_avr.h").exists():
            tools.append("simavr's headers")
        hint = (f" (missing: {', '.join(tools)})" if tools else "") + \
            "; the bench program is built on first use from the sources mmrig ships, which needs make, gcc, " \
            "libsimavr and libelf (Debian: apt-get install build-essential libsimavr-dev libelf-dev)"
        print(f"mmhil: building the virtual bench program into {BENCH_DIR} (first use)", file=sys.stderr, flush=True)
        _make(BENCH_DIR, "build/mmbench", BENCH_BIN, hint)


def default_images(profiler_kind: str = "avr") -> dict[str, Path | None]:
    """The images and bench program a Bench of this profiler kind runs by default (the sidecar's firmware hashes)."""
    return {"profiler": PROFILER_IHX if profiler_kind == "8051" else PROFILER_ELF, "executor": EXECUTOR_ELF,
            "bench": BENCH_BIN}


def profiler_kind_of(profiler: Path | None, profiler_kind: str | None) -> str:
    """The profiler's core: as given, else from the image's name as mmbench decides it (Intel HEX, .ihx or
    .hex: the 8051's; anything else an AVR ELF)."""
    if profiler_kind is not None:
        return profiler_kind
    return "8051" if profiler is not None and Path(profiler).suffix in (".ihx", ".hex") else "avr"


def ensure_built(profiler: Path | None = None, executor: Path | None = None,
                 profiler_kind: str | None = None) -> tuple[Path, Path, Path]:
    """Builds what is missing: the bench program and the default images (the 8051 profiler's .ihx for
    profiler_kind "8051"; None: the kind the image's name says, profiler_kind_of)."""
    profiler_kind = profiler_kind_of(profiler, profiler_kind)
    if profiler_kind not in PROFILER_KINDS:
        raise BenchError(f"profiler_kind {profiler_kind!r}: not one of {', '.join(PROFILER_KINDS)}")
    if profiler_kind == "8051":
        if not HAS_8051:
            raise BenchError("the 8051 profiler needs ucsim's core, built into build/ucsim by tools/ucsim.sh "
                             "(the bench program is then rebuilt with it); not in the installed package")
        if profiler is None:
            profiler = PROFILER_IHX
            if PROFILER_IHX is not None and not PROFILER_IHX.exists():
                _make(ROOT / "profiler-fw", "mcs51", PROFILER_IHX, " (the 8051 image needs sdcc)")
    if LAYOUT.source == "none":
        try:
            find_root()
        except CheckoutNotFound as exc:      # an installed package used outside the checkout: say what to do
            raise BenchError(str(exc)) from exc
    profiler = Path(profiler) if profiler else PROFILER_ELF
    executor = Path(executor) if executor else EXECUTOR_ELF
    if LAYOUT.source == "package":
        _build_from_package()
        if FIXTURE_ELF in (profiler, executor) and not FIXTURE_ELF.exists():
            _make(BENCH_DIR, "build/fixture.elf", FIXTURE_ELF, " (the test fixture needs avr-gcc)")
    else:
        if not BENCH_BIN.exists():
            _make(BENCH_DIR, "all", BENCH_BIN)
        if not profiler.exists() and profiler == PROFILER_ELF:
            _make(ROOT / "profiler-fw", "avr", PROFILER_ELF)
        if not executor.exists() and executor == EXECUTOR_ELF:
            _make(ROOT / "executor", "avr", EXECUTOR_ELF)
        if not executor.exists() and executor == FIXTURE_ELF or not profiler.exists() and profiler == FIXTURE_ELF:
            _make(BENCH_DIR, "all", FIXTURE_ELF)
    for p in (profiler, executor):
        if not p.exists():
            raise BenchError(f"image {p} does not exist")
    return BENCH_BIN, profiler, executor


@dataclass
class Bench:
    """One bench process. Use as a context manager:

        with Bench() as bench:
            rig = Rig.on_bench(bench)
    """

    profiler_elf: Path | None = None
    executor_elf: Path | None = None
    run_dir: Path | None = None
    paced: bool = True
    until_s: float | None = None
    baud: int = 9600
    out_buffer: int | None = None
    lag_bound_us: float | None = None
    seed: int | None = None
    vcd_file: Path | None = None
    # the executor trace from cycle 0 (docs/bench.md, "Executor trace"); named as vcd_file is, beside the
    # method exec_trace() that turns it on and off at run time (a field and a method cannot share a name)
    exec_trace_file: Path | None = None
    script: Path | None = None
    trace: Path | None = None
    start_timeout_s: float = 20.0
    # paced only: ask the host for real-time service (--realtime: SCHED_FIFO 10, else nice -10, else
    # none; mlockall; /dev/cpu_dma_latency 0); what was granted is in status()["host"]
    realtime: bool = False
    # lockstep (implies unpaced): virtual time advances only as far as grant() allows
    lockstep: bool = False
    # crystal offsets, integer ppm in -10000..10000 (docs/bench.md, "Crystal offsets"): each core's clock runs
    # at 16 MHz x (1 + ppm/1e6) of the bench's virtual time; status()["nodes"][node]["ppm"] says what ran
    ppm_profiler: int = 0
    ppm_executor: int = 0
    # --arduino: both nodes behave as an Arduino Mega 2560 (docs/bench.md, "Arduino mode"): the stk500v2
    # bootloader runs first after every reset, and every open of a node's port by the host resets that node
    # (DTR); bootloader: another .hex than Debian's stock one (--bootloader)
    arduino: bool = False
    bootloader: Path | None = None
    # --unconnected GROUP per name ("timecode", "event"): those wires left off, their inputs float
    # (docs/bench.md, "Unconnected inputs"); status()["noise_changes"] counts the noise per group
    unconnected: tuple[str, ...] = ()
    # "8051": the paper's profiler, the 87C51 image profiler-fw/build/mcs51/profiler.ihx (or profiler_elf, an
    # .ihx) on ucsim's 8051 core beside the executor (docs/bench.md, "The 8051 profiler"); needs build/ucsim.
    # "avr": an AVR image. None: as the image's name says (an .ihx is the 8051's). running_profiler_kind:
    # what the started bench says it runs (its ready file)
    profiler_kind: str | None = None
    # which host side mmrig's links open (`port`): "socket", each node's line socket (RUN_DIR/NODE.sock, no kernel
    # hop between the PC's write and the bench's reader), or "pty" (RUN_DIR/NODE.tty, what any other program
    # opens; docs/bench.md, "The line sockets", says what each measures). Both are always there.
    line: str = "socket"
    # the USB-serial adapter on both lines, in virtual time (mmhil.linemodel, hil/bench/uart_usb.h): "ideal" (none),
    # "ftdi", "ftdi:latency=MS", "cdc-16u2"
    line_model: str = "ideal"
    running_profiler_kind: str | None = field(default=None, init=False)
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    final_status: dict[str, Any] | None = field(default=None, init=False)
    _own_dir: bool = field(default=False, init=False)
    _log: Path | None = field(default=None, init=False)
    _grant_sock: socket.socket | None = field(default=None, init=False)
    _grant_buf: bytes = field(default=b"", init=False)
    _parent_w: int | None = field(default=None, init=False)   # the write end of the bench's --parent-fd pipe
    _turn: bool = field(default=False, init=False)   # holds the machine's paced turn (mmhil.turns) until close()
    _pipe_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __repr__(self) -> str:
        how = "lockstep" if self.lockstep else "paced" if self.paced else "unpaced"
        state = f"pid {self.process.pid}" if self.alive() and self.process is not None else "not running"
        return f"Bench({how}, {state}, run dir {self.run_dir})"

    # ---- life cycle --------------------------------------------------------------------------
    def command(self) -> list[str]:
        binary, prof, exe = ensure_built(self.profiler_elf, self.executor_elf, self.profiler_kind)
        assert self.run_dir is not None
        cmd = [str(binary), "--profiler", str(prof), "--executor", str(exe), "--run-dir", str(self.run_dir),
               "--baud", str(self.baud)]
        if self.profiler_kind is not None:
            cmd += ["--profiler-kind", self.profiler_kind]
        if self.lockstep:
            cmd.append("--lockstep")
        elif not self.paced:
            cmd.append("--unpaced")
        elif self.realtime:
            cmd.append("--realtime")
        options = {"--until": self.until_s, "--out-buffer": self.out_buffer, "--lag-bound-us": self.lag_bound_us,
                   "--seed": self.seed, "--vcd": self.vcd_file, "--exec-trace": self.exec_trace_file,
                   "--script": self.script, "--trace": self.trace}
        for flag, value in options.items():
            if value is not None:
                cmd += [flag, str(value)]
        for flag, ppm in (("--ppm-profiler", self.ppm_profiler), ("--ppm-executor", self.ppm_executor)):
            if ppm:
                cmd += [flag, str(int(ppm))]
        if self.arduino:
            cmd.append("--arduino")
            if self.bootloader is not None:
                cmd += ["--bootloader", str(self.bootloader)]
        elif self.bootloader is not None:
            raise BenchError("Bench(bootloader=...) is for arduino=True")
        for group in self.unconnected:
            cmd += ["--unconnected", group]
        if self.line_model != "ideal":
            cmd += ["--line-model", self.line_model]
        return cmd

    def start(self) -> "Bench":
        # here, not at the top: the package mmanalysis loads pandas, and this module stays light (tests/test_layers.py)
        from mmanalysis.safefiles import check_private_dir, create_new

        if self.run_dir is None:
            sweep_stale_run_dirs()          # the folders of benches whose process was killed before its close()
            self.run_dir = Path(tempfile.mkdtemp(prefix=PREFIX))
            self._own_dir = True
            record_owner(self.run_dir)
        else:
            # A folder the caller gives is the user's own (made 0700 if missing) before anything is written into
            # it: a link there or one someone else can write to would have bench.log and final_status.json
            # planted under us. mmbench checks it again, by the same rules in the same words (safefiles).
            problem = check_private_dir(self.run_dir)
            if problem is not None:
                raise BenchError(problem)
        self.run_dir = Path(self.run_dir)
        cmd = self.command()
        if self.paced and not self.lockstep:
            pacedlog.note(repr(self))       # MMRIG_PACED_LOG: the test tiers see who starts paced benches
            if not self._turn:
                self._turn = turns.take()   # MMRIG_PACED_TURNS: one paced bench on the machine at a time
        try:
            return self._start(cmd)
        except BaseException:
            self._give_turn()
            raise

    def _give_turn(self) -> None:
        if self._turn:
            self._turn = False
            turns.release()

    def _start(self, cmd: list[str]) -> "Bench":
        from mmanalysis.safefiles import create_new     # light module: see start()

        assert self.run_dir is not None
        self._log = self.run_dir / "bench.log"
        for name in ("ready", "bench.log", "final_status.json"):     # an earlier bench's (unlink: a link, not its target)
            (self.run_dir / name).unlink(missing_ok=True)
        # The bench ends when this process does, however it ends: it watches the read end of a pipe whose write
        # end only this process holds (os.pipe's ends are close-on-exec: no other program started gets it), EOF
        # once the process is gone. Not PR_SET_PDEATHSIG: that fires when the starting *thread* exits, and a
        # bench is started from worker threads that end long before their process (hil/bench/parent.c).
        r, w = os.pipe()
        try:
            with create_new(self._log) as log, create_new(self.run_dir / "final_status.json") as out:
                # a process group of its own: teardown kills the whole group, whatever happens to the test
                self.process = subprocess.Popen([*cmd, "--parent-fd", str(r)], stdout=out, stderr=log,
                                                stdin=subprocess.DEVNULL, start_new_session=True, pass_fds=(r,))
        except BaseException:
            os.close(w)
            raise
        finally:
            os.close(r)
        self._parent_w = w
        deadline = time.monotonic() + self.start_timeout_s
        while not (self.run_dir / "ready").exists():
            code = self.process.poll()
            if code == 0 and self.until_s is not None:
                # it ran to its --until already (unpaced, a starved starting process): done, not failed
                self.running_profiler_kind = None
                return self
            if code is not None:
                self._close_parent_pipe()
                tail = self.log_tail()      # its last line on the first: a caller that shows one line shows why
                last = next((ln for ln in reversed(tail.splitlines()) if ln.strip()), "no output")
                raise BenchError(f"bench exited with status {self.process.returncode} before it was ready: {last}",
                                 tail)
            if time.monotonic() > deadline:
                self.close()
                raise BenchError("bench not ready in time", self.log_tail())
            time.sleep(0.01)
        try:   # the ready file is written whole (renamed into place); an older bench has no profiler_kind
            self.running_profiler_kind = json.loads((self.run_dir / "ready").read_text()).get("profiler_kind", "avr")
        except (OSError, ValueError):
            self.running_profiler_kind = None
        return self

    def __enter__(self) -> "Bench":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait(self, timeout: float | None = None) -> int:
        """Waits for the bench to end by itself (--until); returns its exit status."""
        assert self.process is not None
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired as exc:
            raise BenchError("bench did not end in time", self.log_tail()) from exc
        self._read_final_status()
        return code

    def close(self) -> None:
        """Stops the bench (control `stop`, then SIGTERM, then SIGKILL to its process group)."""
        proc = self.process
        if proc is None:
            return
        if self._grant_sock is not None:
            self._grant_sock.close()
            self._grant_sock = None
        if proc.poll() is None:
            try:
                self.control("stop", timeout=1.0)
            except (OSError, BenchError):
                pass
            try:
                proc.wait(2.0)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGTERM)
                try:
                    proc.wait(2.0)
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    proc.wait()
        self._signal_group(signal.SIGKILL)  # anything left in the group
        self._close_parent_pipe()
        self._give_turn()
        self._read_final_status()
        if self._own_dir and self.run_dir is not None and proc.returncode == 0:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def _close_parent_pipe(self) -> None:
        # Once, whichever thread closes the bench (a run's and a window's teardown can both): a second
        # os.close of the number would close whatever the process opened under it since, a serial port say
        with self._pipe_lock:
            w, self._parent_w = self._parent_w, None
        if w is not None:
            os.close(w)

    def _signal_group(self, sig: int) -> None:
        assert self.process is not None
        try:
            os.killpg(self.process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _read_final_status(self) -> None:
        if self.run_dir is None or self.final_status is not None:
            return
        try:
            text = (self.run_dir / "final_status.json").read_text()
            self.final_status = json.loads(text) if text.strip() else None
        except (OSError, ValueError):
            self.final_status = None

    def log_tail(self, lines: int = 40) -> str:
        if self._log is None or not self._log.exists():
            return ""
        return "\n".join(self._log.read_text(errors="replace").splitlines()[-lines:])

    # ---- paths -----------------------------------------------------------------------------
    def tty(self, node: str) -> str:
        """The node's pty (RUN_DIR/NODE.tty): the port any program opens as a serial port."""
        assert self.run_dir is not None
        return str(self.run_dir / f"{node}.tty")

    def socket_url(self, node: str) -> str:
        """The node's line socket as a pyserial URL (unix://RUN_DIR/NODE.sock, mmproto.urlhandler): the port
        without the pty's kernel hop (docs/bench.md, "The line sockets")."""
        assert self.run_dir is not None
        return f"unix://{self.run_dir / f'{node}.sock'}"

    def port(self, node: str) -> str:
        """The port mmrig's links open for the node: its line socket, or its pty where `line` says so."""
        return self.tty(node) if self.line == "pty" else self.socket_url(node)

    @property
    def profiler_port(self) -> str:
        return self.port("profiler")

    @property
    def executor_port(self) -> str:
        return self.port("executor")

    @property
    def control_path(self) -> Path:
        assert self.run_dir is not None
        return self.run_dir / "control.sock"

    # ---- control channel -------------------------------------------------------------------
    def control(self, line: str, timeout: float = 5.0) -> dict[str, Any]:
        """Sends one command, returns the bench's JSON reply; raises BenchError if it refused."""
        if not self.alive():
            raise BenchError(f"bench is not running (command {line!r})", self.log_tail())
        data = exchange(self.control_path, line, timeout)
        try:
            reply = json.loads(data)
        except ValueError as exc:
            raise BenchError(f"bad reply to {line!r}: {data[:200]!r}", self.log_tail()) from exc
        if not reply.get("ok"):
            raise BenchError(f"bench refused {line!r}: {reply.get('error')}", self.log_tail())
        return reply

    def status(self) -> dict[str, Any]:
        return self.control("status")

    def reset(self, node: str, at_s: float | None = None) -> dict[str, Any]:
        return self.control(f"reset {node}" + (f" at {at_s}" if at_s is not None else ""))

    def fault(self, node: str, direction: str, kind: str, rate: float, delay_us: float | None = None) -> dict[str, Any]:
        """direction: 'in' (host -> MCU) or 'out'; kind: drop, corrupt, delay (delay_us per delayed byte)."""
        return self.control(f"fault {node} {direction} {kind} {rate}" + (f" {delay_us}" if delay_us is not None else ""))

    def clear_faults(self, node: str | None = None) -> dict[str, Any]:
        return self.control("fault clear" + (f" {node}" if node else ""))

    def cut(self, line: str, seconds: float) -> dict[str, Any]:
        """line: profiler.uart, executor.uart, timecode or event."""
        return self.control(f"cut {line} {seconds}")

    def vcd(self, on: bool, path: Path | None = None) -> dict[str, Any]:
        """A VCD of the wired ports. `path`: a file name in the run directory (a path inside it is given
        by its name; the bench refuses any other path, see docs/bench.md); default wires.vcd."""
        if path is not None and self.run_dir is not None and Path(path).parent == Path(self.run_dir):
            path = Path(Path(path).name)
        return self.control("vcd on" + (f" {path}" if path else "") if on else "vcd off")

    def exec_trace(self, on: bool, name: str | Path | None = None) -> Path | None:
        """The executor trace (task switches, interrupts, sleep, pins: hil/bench/exectrace.h) on or off.
        `name`: a file name in the run directory (a path inside it is given by its name; the bench refuses
        any other, as for vcd()); default exectrace.txt. Turning it on while it is on ends the current file
        and starts the new one. Returns the file's path (on: the new file; off: the file just closed)."""
        if name is not None and self.run_dir is not None and Path(name).parent == Path(self.run_dir):
            name = Path(name).name
        reply = self.control("exectrace on" + (f" {name}" if name else "") if on else "exectrace off")
        return Path(reply["exectrace"]) if reply.get("exectrace") else None

    def inject(self, node: str, data: bytes, delay_cycles: int = 0) -> dict[str, Any]:
        """Floor calibration: the bench puts `data` on the node's UART receive line (10 bit times a byte at
        the link's baud, as host bytes go) with the first start bit beginning `delay_cycles` cycles after
        the next change of the profiler's timecode port (the tick edge). Host bytes written to that node
        meanwhile wait until the injection has ended. Returns the reply once armed: id, node, bytes,
        delay_cycles, cycle, virtual_s; the record (edge_cycle, port, start_cycle, late_cycles,
        end_cycle) is in `injections()` once the edge has come (docs/bench.md, "Floor calibration")."""
        if not 1 <= len(data) <= 64:
            raise ValueError(f"inject: {len(data)} bytes; 1..64")
        return self.control(f"inject {node} {bytes(data).hex()} {int(delay_cycles)}")

    def injections(self) -> list[dict[str, Any]]:
        """The last 16 injections' records, oldest first (edge_cycle .. end_cycle None until they happen)."""
        return self.status()["injections"]

    def stop(self) -> None:
        self.control("stop")

    # ---- lockstep, stalls ------------------------------------------------------------------
    def grant(self, cycle: int, frame: bool = True, written: dict[str, int | tuple[int, int]] | None = None,
              timeout: float = 60.0) -> dict[str, Any]:
        """Lockstep: lets virtual time run to `cycle` (with `frame`, only until a 0x00 frame delimiter
        is complete on either node's output). `written`: the total bytes the host has written into
        each node's host stream so far (or (bytes, generation): into that stream, waited for only while it
        holds the line); the bench takes exactly those in first. Returns the bench's reply: cycle,
        virtual_s, stop ("until", "frame", "end"), out (total bytes written to each stream), generation,
        over one persistent control connection (a round trip costs tens of microseconds)."""
        if not self.alive():
            raise BenchError(f"bench is not running (grant {cycle})", self.log_tail())
        line = f"grant {int(cycle)}" + (" frame" if frame else "")
        if written is not None:
            line += " in " + " ".join(f"{node}={n[0]}@{n[1]}" if isinstance(n, tuple) else f"{node}={int(n)}"
                                      for node, n in written.items())
        if self._grant_sock is not None:
            # a bench with a full client table drops a client idle for over 1 s (docs/bench.md, "Control
            # channel"): a connection it closed between grants is opened again (nothing was lost on it)
            try:
                self._grant_sock.settimeout(0.0)   # a peek that never waits (with a timeout, recv would)
                if self._grant_sock.recv(1, socket.MSG_PEEK) == b"":
                    self._grant_sock.close()
                    self._grant_sock = None
            except BlockingIOError:
                pass
            except OSError:
                self._grant_sock.close()
                self._grant_sock = None
        if self._grant_sock is None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(self.control_path))
            self._grant_sock, self._grant_buf = s, b""
        s = self._grant_sock
        s.settimeout(timeout)
        s.sendall(line.encode() + b"\n")
        while b"\n" not in self._grant_buf:
            chunk = s.recv(65536)
            if not chunk:
                self._grant_sock = None
                s.close()
                raise BenchError(f"bench closed the control connection during {line!r}", self.log_tail())
            self._grant_buf += chunk
        data, self._grant_buf = self._grant_buf.split(b"\n", 1)
        reply = json.loads(data)
        if not reply.get("ok"):
            raise BenchError(f"bench refused {line!r}: {reply.get('error')}", self.log_tail())
        return reply

    def stalls(self, since_s: float | None = None) -> list[list[float]]:
        """Paced: the stall intervals [start_s, end_s, max_lag_us] (ending at or after since_s); an
        interval still open comes last, ending at the current virtual time (see docs/bench.md)."""
        return self.control("stalls" + (f" since {since_s}" if since_s is not None else ""))["stalls"]

    def timing(self, since_s: float | None = None) -> dict[str, Any]:
        """Paced: what validity by cause judges events by (mmsched.verdict.validity, mmhil.timing): the host's bytes
        with their stamps on the host clock and how far each read was moved, the output handed to the ptys
        late, the stall intervals; from virtual time since_s on (docs/bench.md, "Validity by cause")."""
        return self.control("timing" + (f" since {since_s}" if since_s is not None else ""), timeout=30.0)

    def injected(self) -> dict[str, Any]:
        """The host's bytes the bench's injected delays held back (`fault NODE in delay`), as runs of each
        node's input stream: {"held_by_fault": [[node, gen, offset, n, held_max_us], ...]} (mmsched.verdict.injected)."""
        return self.control("injected", timeout=30.0)

    def sleep(self, ms: float) -> dict[str, Any]:
        """Stalls the bench's own thread for `ms` ms of wall time right after it replies (a host stall
        on demand); the reply carries the virtual time it happened at."""
        return self.control(f"sleep {int(ms)}")
