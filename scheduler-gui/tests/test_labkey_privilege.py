"""`mmrig lab key` makes its runs as a student's (mmrig.labkey.privilege): a child started with as_student can
neither take SCHED_FIFO nor lower its nice value, whoever started it (root included), unless --realtime."""

from __future__ import annotations

import subprocess
import sys

from mmrig.cli import build_parser
from mmrig.labkey.privilege import as_student, scheduling

PROBE = """
import os
out = []
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    out.append("fifo")
except PermissionError:
    out.append("no fifo")
try:
    os.nice(-5)
    out.append("nice -5")
except PermissionError:
    out.append("no nice")
print(", ".join(out))
"""


def test_a_child_as_a_student_gets_no_real_time_priority():
    r = subprocess.run([sys.executable, "-c", PROBE], preexec_fn=as_student, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == "no fifo, no nice", (r.stdout, r.stderr)


def test_the_key_runs_as_a_student_unless_asked():
    assert build_parser().parse_args(["lab", "key"]).realtime is False
    assert build_parser().parse_args(["lab", "key", "--realtime"]).realtime is True


def test_the_scheduling_read_from_the_sidecars():
    metas = [{"bench": {"host": {"sched": "other", "mlock": False}}}, {"bench": None},
             {"bench": {"host": {"sched": "fifo 10", "mlock": True}}}]
    assert scheduling(metas) == "fifo 10, other; mlock false, mlock true"
    assert scheduling([{"bench": None}]) == "-"
