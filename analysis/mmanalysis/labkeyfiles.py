"""Where `mmrig lab key` writes the instructor's key and where the class report looks for it: the key (KEY_FILE
unless --out says otherwise) and its runs in the folder beside it named after it (key_runs_folder: lab-key.md's
runs in lab-key-runs/). Here, in mmanalysis, because the class report reads them and mmanalysis never imports
mmrig; light, since `mmrig`'s option parser takes the default from it."""

from __future__ import annotations

from pathlib import Path

KEY_FILE = "lab-key.md"


def key_runs_folder(key: Path) -> Path:
    """The folder `mmrig lab key --out KEY` writes the key's runs to: beside KEY, its name and "-runs"."""
    return key.with_name(key.stem + "-runs")


KEY_FOLDER = key_runs_folder(Path(KEY_FILE)).name   # in a class folder: the key's runs, read as the key, no group
