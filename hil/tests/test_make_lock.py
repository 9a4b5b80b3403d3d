"""The images are built by one make at a time (mmhil.bench.make): two test workers that each found an image
missing ran make in one folder at once, and the executor's variant images share its kernel objects, so one make
deleted an object file another was linking."""

from __future__ import annotations

import threading
from pathlib import Path

from mmhil.bench import make

# A recipe that fails when another copy of it is running in the same folder at the same moment.
ALONE = """all:
\t@test ! -e running || { echo "another make is building here"; exit 1; }
\t@touch running; sleep 0.3; rm running
"""


def test_two_makes_of_one_folder_run_one_after_the_other(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(ALONE)
    codes: list[int] = []
    threads = [threading.Thread(target=lambda: codes.append(make(tmp_path, "all").returncode)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [0, 0, 0]
