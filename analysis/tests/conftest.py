from __future__ import annotations

from pathlib import Path

import pytest

from mmanalysis import synth


@pytest.fixture(scope="session")
def experiments_dir(tmp_path_factory) -> Path:
    """The five experiments as synthetic runs (200 events each), in the on-disk format."""
    d = tmp_path_factory.mktemp("results")
    synth.write_experiments(d, count=200, seed=3)
    return d
