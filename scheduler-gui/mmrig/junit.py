"""`mmrig run --junit FILE`: the run's gates as a JUnit XML report for CI (GitLab, Jenkins, GitHub actions'
test reporters; pytest's own layout), written with the standard library's xml.etree only.

One `<testsuite name="mmrig run NAME">` inside `<testsuites>`: a testcase `valid` (a `<failure>` when the run
is invalid, an `<error>` when there was no run: a usage or rig error), then one testcase per gate, named
after it (`fail_on_late`, `max_latency_us`, `min_on_time`, ...), with a `<failure>` when it failed and
`<skipped>` when it was not judged (the run was invalid, or there was none). Every failure's message names the
run's files, so the report leads to the data. `<properties>` hold the run's files and settings;
`<system-out>` the summary as `mmrig run` printed it.
"""

from __future__ import annotations

import datetime as dt
import platform
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Mapping, Sequence

from mmanalysis.safefiles import atomic_write

from mmrig.gates import GateResult


def files_words(files: Sequence[str | Path]) -> str:
    return "files: " + ", ".join(str(f) for f in files) if files else "no files written (no --out)"


def junit_xml(name: str, gates: Sequence[GateResult], *, valid: bool, reasons: Sequence[str] = (),
              files: Sequence[str | Path] = (), error: str | None = None, time_s: float = 0.0,
              properties: Mapping[str, Any] | None = None, system_out: str = "") -> bytes:
    """The report as UTF-8 XML bytes. `error`: there was no run (usage or rig error), said in these words."""
    classname = f"mmrig.run.{name}"
    where = files_words(files)
    cases: list[ET.Element] = []
    failures = errors = skipped = 0

    valid_case = ET.Element("testcase", classname=classname, name="valid", time=f"{time_s:.3f}")
    if error is not None:
        ET.SubElement(valid_case, "error", message=f"no run: {error}", type="rig_error").text = error
        errors += 1
    elif not valid:
        why = "; ".join(reasons) or "invalid run"
        ET.SubElement(valid_case, "failure", message=f"invalid run: {why} ({where})",
                      type="invalid_run").text = f"{why}\n{where}"
        failures += 1
    cases.append(valid_case)

    for g in gates:
        case = ET.Element("testcase", classname=classname, name=g.gate, time="0")
        if error is not None:
            ET.SubElement(case, "skipped", message=f"{g.figure}: not judged, there was no run")
            skipped += 1
        elif g.status == "fail":
            ET.SubElement(case, "failure", message=f"{g.text} ({where})", type="gate").text = f"{g.text}\n{where}"
            failures += 1
        elif g.status == "skipped":
            ET.SubElement(case, "skipped", message=f"{g.text} ({where})")
            skipped += 1
        cases.append(case)

    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", name=f"mmrig run {name}", tests=str(len(cases)),
                          failures=str(failures), errors=str(errors), skipped=str(skipped), time=f"{time_s:.3f}",
                          timestamp=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                          hostname=platform.node())
    props = ET.SubElement(suite, "properties")
    for i, f in enumerate(files):
        ET.SubElement(props, "property", name=f"file{i}", value=str(f))
    for k, v in (properties or {}).items():
        ET.SubElement(props, "property", name=str(k), value="" if v is None else str(v))
    suite.extend(cases)
    if system_out:
        ET.SubElement(suite, "system-out").text = system_out
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(path: str | Path, xml: bytes) -> Path:
    """PATH written as every file of a run is (safefiles.atomic_write: never through a link planted under it)."""
    path = Path(path)
    atomic_write(path, xml)
    return path


__all__ = ["files_words", "junit_xml", "write_junit"]
