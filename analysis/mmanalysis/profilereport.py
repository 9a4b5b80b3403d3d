"""The report's "Executor profile" section: for each traced run (`mmrig run --trace`, the
sidecar's `executor_profile`), the per-task table (C_i, T_i, U_i) of Prisching and Rinner's "Thread-based
analysis of embedded applications", the processor time by category of Kohout's "Hardware Support for Real-Time
Operating Systems" (2002), and the service-call pairs of Nordström et al.'s "Application Specific Real-Time
Microkernel in Hardware" with the paper's section 7.1 context-switch figures beside ours; then the traced runs
side by side."""

from __future__ import annotations

from typing import Any, Callable

from .exectrace import utilisation

# Paper, section 7.1 (RTK on its PC): a full context switch 14.245 us; 6.41 us without the FPU's context.
PAPER_CONTEXT_SWITCH_US = (14.245, 6.41)

TASK_HEADERS = ["kind", "name", "category", "instances", "C_i min (us)", "C_i avg (us)", "C_i max (us)",
                "T_i avg (us)", "U_i (share of the trace)"]
CALL_HEADERS = ["service call", "before", "after", "before (us)", "after (us)", "difference (us)", "ratio", "n"]
SIDE_HEADERS = ["run", "executor load", "dispatch", "U", "idle", "asleep", "tick", "dispatch work", "serial", "load",
                "context switch (us)", "its restore (us)", "edge to edge min / median / max (us)"]

WORDS = ("Taken by the bench from outside the executor, with no instrumentation in the firmware: the cycle at "
         "which FreeRTOS's current-task pointer changed, each interrupt's entry and return, sleep, and the wired "
         "pins. C_i is an instance's computation time (a task's, without the interrupts inside it), T_i the time "
         "between the starts of successive instances, U_i the cycles it ran over the trace's span, and U their sum "
         "over everything but the idle task (with the idle share it makes at most 1). Each service-call row sets an interrupt that returns to the task it interrupted "
         "beside the same interrupt when the kernel switches task inside it; where the handler does the same "
         "work either way (PCINT2 and Timer1's compares wake the timecode task), the difference is the context "
         "switch (save, vTaskSwitchContext, restore), and its restore half is timed exactly from the store "
         "that changes pxCurrentTCB to the RETI into the incoming task. "
         "'Edge to edge' is the executor's dispatch as the wires show it: from the timecode edge it sees to the "
         "event edge it drives.")


def traced(meta: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """Run name -> its executor profile, for the runs that have a readable one."""
    return {r: m["executor_profile"] for r, m in meta.items()
            if isinstance(m.get("executor_profile"), dict) and "tasks" in m["executor_profile"]}


def untraceable(meta: dict[str, dict]) -> dict[str, str]:
    """Run name -> why its trace could not be used (traced runs whose profile is an error)."""
    return {r: str(m["executor_profile"]["error"]) for r, m in meta.items()
            if isinstance(m.get("executor_profile"), dict) and "error" in m["executor_profile"]}


def _f(x: Any, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def task_rows(p: dict[str, Any]) -> list[list[Any]]:
    return [[r["kind"], r["name"], r["category"], r["instances"], _f(r["C_us"]["min"]), _f(r["C_us"]["avg"]),
             _f(r["C_us"]["max"]), _f(r["T_us"]["avg"], ".0f"), f"{r['share']:.4f}"]
            for r in p["tasks"]]


def call_rows(p: dict[str, Any]) -> list[list[Any]]:
    rows = [[c["call"], c["before"], c["after"], _f(c["before_us"]), _f(c["after_us"]), _f(c["difference_us"]),
             _f(c["ratio"], ".2f"), f"{c['n_before']} / {c['n_after']}"] for c in p["service_calls"]]
    cs = p.get("context_switch") or {}
    if cs:
        rows.append(["context switch, ours (same-work interrupts)", "-", ", ".join(cs.get("from") or []) or
                     cs.get("why", "-"), "-", _f(cs.get("us")), "-", "-", "-"])
        rows.append(["its restore half: pxCurrentTCB store to the RETI", "-", "-", "-", _f(cs.get("restore_us")),
                     "-", "-", str(cs.get("restore_n", "-"))])
    full, no_fpu = PAPER_CONTEXT_SWITCH_US
    rows.append(["context switch, the paper (RTK, section 7.1)", "-", "full / without the FPU", "-",
                 f"{full} / {no_fpu}", "-", "-", "-"])
    return rows


def context_switch_us(p: dict[str, Any]) -> float | None:
    """Our context switch (exectrace.context_switch: same-work interrupts, switching against not), or None
    where the trace has no such pairs (profiles written before it existed have none either)."""
    return (p.get("context_switch") or {}).get("us")


def side_rows(profiles: dict[str, dict[str, Any]], meta: dict[str, dict]) -> list[list[Any]]:
    rows = []
    for run, p in profiles.items():
        cfg = meta[run].get("config") or {}
        cat = p["by_category"]
        d = p.get("dispatch_us") or {}
        edge = (f"{_f(d.get('min'))} / {_f(d.get('median'))} / {_f(d.get('max'))}" if d.get("n") else "-")
        rows.append([run, cfg.get("executor_load_text", "none"), cfg.get("dispatch", "-"), _f(utilisation(p), ".4f"),
                     f"{p['idle']['share']:.1%}", f"{p['idle']['asleep_share']:.1%}", f"{cat['tick']:.2%}",
                     f"{cat['dispatch']:.2%}", f"{cat['serial']:.2%}", f"{cat['load']:.2%}",
                     _f(context_switch_us(p)), _f((p.get("context_switch") or {}).get("restore_us")), edge])
    return rows


def section(meta: dict[str, dict], table: Callable[[list[str], list[list[Any]]], str], heading: Callable[[str, int], str],
            para: Callable[[str], str]) -> list[str]:
    """The section in whatever markup `table`, `heading` and `para` write (the report's Markdown or HTML).
    Empty when no run was traced."""
    profiles = traced(meta)
    broken = untraceable(meta)
    if not profiles and not broken:
        return []
    out = [heading("Executor profile (traced runs)", 2), para(WORDS)]
    if len(profiles) > 1:
        out += [heading("Side by side", 3), table(SIDE_HEADERS, side_rows(profiles, meta))]
    for run, p in profiles.items():
        out += [heading(f"{run}: {p['seconds']:.2f} s, {p['switches']} task switches, {p['interrupts']} interrupts", 3),
                table(TASK_HEADERS, task_rows(p)),
                para(f"U = {utilisation(p):.4f}; idle {p['idle']['share']:.1%} (asleep {p['idle']['asleep_share']:.1%}, the "
                     f"idle task awake {p['idle']['idle_task_share']:.1%}). Processor time by category: "
                     + ", ".join(f"{k} {v:.2%}" for k, v in p["by_category"].items()) + "."),
                table(CALL_HEADERS, call_rows(p))]
    for run, why in broken.items():
        out.append(para(f"{run}: traced, but its trace could not be used: {why}"))
    return out
