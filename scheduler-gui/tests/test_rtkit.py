"""RealtimeKit for a user without RLIMIT_RTPRIO (mmsched.host.rtkit): normal mode's firing thread and the paced bench's
stamping thread get real-time priority through it (its SCHED_RR) where the kernel refuses them SCHED_FIFO, at most its ceiling, and the run says which
way each came. A child without CAP_SYS_NICE stands for such a user (setpriv, as root), or the user himself.

Where no RealtimeKit answers (CI, a machine without rtkit or a system D-Bus) the tests that need one skip; what a run
does then (refused, as cyclictest refuses) is test_cli_realtime.py's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from mmsched.host import rtkit

PROBE = textwrap.dedent("""
    import json, os, sys
    from mmproto import Link
    from mmsched.run.nativefirer import NativeFirer
    master, slave = os.openpty()
    link = Link("profiler", os.ttyname(slave), lambda item: None).open()
    firer = NativeFirer(link, lambda ev, w: None, priority=int(sys.argv[1]), interval_s=0.001).start()
    print(json.dumps({"sched": firer.sched, "via": firer.sched_via, "why": firer.sched_why}))
    firer.stop(); link.close()
""")


def without_sys_nice() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root, and no setpriv to drop CAP_SYS_NICE with")
    return ["setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"]


def rtkit_grants() -> rtkit.Limits:
    """RealtimeKit's limits where it answers and grants this user a real-time thread, else the test skips."""
    lim = rtkit.limits()
    if isinstance(lim, str):
        pytest.skip(lim)
    probe = subprocess.run([*without_sys_nice(), sys.executable, "-c", PROBE, "1"], capture_output=True, text=True,
                           timeout=60)
    got = json.loads(probe.stdout.strip().splitlines()[-1]) if probe.returncode == 0 else {}
    if got.get("via") != "rtkit":
        pytest.skip(f"RealtimeKit does not grant this user a real-time thread here: {got.get('why') or probe.stderr}")
    return lim


def test_the_firing_thread_gets_sched_fifo_through_rtkit_at_most_its_ceiling() -> None:
    lim = rtkit_grants()
    want = lim.max_realtime_priority + 10
    out = subprocess.run([*without_sys_nice(), sys.executable, "-c", PROBE, str(want)], capture_output=True, text=True,
                         timeout=60)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # (rtkit's policy is SCHED_RR: a thread that sleeps between its writes never meets another at its priority)
    assert got["via"] == "rtkit" and got["sched"] == f"rr {lim.max_realtime_priority}", got
    assert f"real-time priority {want} asked, {lim.max_realtime_priority} given" in got["why"], got


@pytest.mark.paced                      # it opens a paced bench: the long tier's
def test_a_paced_bench_without_the_right_gets_its_stamping_thread_through_rtkit() -> None:
    rtkit_grants()
    code = textwrap.dedent("""
        import json
        from mmhil.endpoint import BenchEndpoint
        from mmsched.model.config import RunConfig
        ep = BenchEndpoint()
        try:
            ep.open(RunConfig(mode="mixed", count=1))
            st = ep.bench.status()
            print(json.dumps({"rtkit": ep.rtkit, "host": st["host"]["sched"], "hostin": st["hostin"]["sched"]}))
        finally:
            ep.close()
    """)
    out = subprocess.run([*without_sys_nice(), sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["rtkit"]["stamping"]["sched"] == got["hostin"] == "rr 11", got
    assert got["host"] == got["rtkit"]["simulation"]["sched"] == "rr 10", got


def test_with_rtkit_off_nothing_is_asked(monkeypatch) -> None:
    monkeypatch.setenv("MMRIG_RTKIT", "off")
    assert rtkit.limits() == "RealtimeKit not asked (MMRIG_RTKIT=off)"
    assert rtkit.realtime(1, 10).priority is None
