"""Makes this folder's fixture (root, trace-cmd): a real scheduler trace of a planted cause, cut to the window of
one event. A stand-in firing thread (SCHED_FIFO 80, pinned to CPU 1, clock_nanosleep to a moment every ms, as
mmsched/host/native/firethread.c) and spinner.py (SCHED_FIFO 90 on the same CPU, 5 ms) run under mmsched.run.hosttrace's
recording; the moment the spinner delayed most becomes `event.json`'s row (its wake-up and write as the stand-in
measured them; the other budget parts are set numbers, the test checks they pass through) and `report.txt` the
`trace-cmd report -t` lines around it.

    PYTHONPATH=... python analysis/tests/data/explain/record.py
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmanalysis.schedtrace import LINE
from mmsched.run.hosttrace import HostTrace, refusal

HERE = Path(__file__).parent
FIRER = r"""
import ctypes, json, os, sys, time
class ts(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
libc = ctypes.CDLL(None, use_errno=True)
os.sched_setaffinity(0, {1})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(80))
libc.prctl(15, b"firer", 0, 0, 0)
t = float(sys.argv[1])
out = []
for i in range(100):
    t += 0.001
    req = ts(int(t), int((t % 1) * 1e9))
    libc.clock_nanosleep(1, 1, ctypes.byref(req), None)   # CLOCK_MONOTONIC, TIMER_ABSTIME
    woke = time.monotonic()
    out.append((t, woke, time.monotonic()))
os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
print(json.dumps({"tid": os.getpid(), "samples": out}))
"""


def main() -> None:
    if (why := refusal()) is not None:
        sys.exit(why)
    with tempfile.TemporaryDirectory() as tmp:
        trace = HostTrace(Path(tmp) / "fixture.host.dat", buffer_kb=4096)
        trace.start()
        begin = time.monotonic()
        spin = subprocess.Popen([sys.executable, str(HERE / "spinner.py"), "1", "90", f"{begin + 0.45 + 0.0003:.6f}",
                                 "0.005", "mmspinner"], stdout=subprocess.PIPE, text=True)
        firer = subprocess.run([sys.executable, "-c", FIRER, f"{begin + 0.4:.6f}"], capture_output=True, text=True,
                               check=True)
        spun = spin.communicate()[0].split()
        section = trace.stop()
        text = subprocess.run(["trace-cmd", "report", "-t", "-i", str(trace.dest)], capture_output=True, text=True,
                              check=True).stdout
    doc = json.loads(firer.stdout)
    moment, woke, wrote = max(doc["samples"], key=lambda s: s[1] - s[0])
    lo, hi = moment - 0.010, wrote + 0.001
    keep = [ln for ln in text.splitlines() if (m := LINE.match(ln)) is None or lo <= float(m["ts"]) <= hi]
    (HERE / "report.txt").write_text("\n".join(keep) + "\n")
    wakeup_us = round((wrote - moment) * 1e6, 3)
    parts = {"est_error_us": 12.5, "write_us": 8.0, "line_us": 30.0, "floor_us": 4.7}
    row = {"event": 17, "mode": "normal", "outcome": "late", "scheduled_tc": 70, "sent_s": round(wrote - begin, 6),
           "wakeup_us": wakeup_us, **parts, "latency_us": round(wakeup_us + sum(parts.values()), 3)}
    sidecar = {"run_clock": {"clock": "CLOCK_MONOTONIC", "t0_s": round(begin, 6)}, "cpu": {"firer_tid": doc["tid"]},
               "host_trace": {"steal_s": section["steal_s"]}}
    (HERE / "event.json").write_text(json.dumps({"row": row, "sidecar": sidecar,
                                                 "spinner": {"began": float(spun[0]), "ended": float(spun[1])}},
                                                indent=1) + "\n")
    print(f"event: wake-up {wakeup_us} us; spinner {float(spun[1]) - float(spun[0]):.6f} s; {len(keep)} lines")


if __name__ == "__main__":
    main()
