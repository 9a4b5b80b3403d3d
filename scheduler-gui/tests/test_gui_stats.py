"""The statistics panel: a variance said the project's one way (mmanalysis.variance_text), live, opened and
compared."""

from __future__ import annotations

import numpy as np


def test_variance_is_shown_as_variance_text(make_win, tmp_path, synthetic_run) -> None:
    # the GUI showed "983881016.6235 us²": the project's one way is mmanalysis.variance_text
    from mmanalysis import variance_text

    lat = [1000.0 + 62_000.0 * (i % 2) for i in range(10)]
    a = synthetic_run(tmp_path, lat, "wide")
    win = make_win()
    assert win.open_run(a)
    var = float(np.var(lat, ddof=1))
    text = win.live.stats.labels["variance_us2"].text()
    assert text == variance_text(var) and "," in text and text.endswith(" us²"), text
    win.live.stats.show_rows(win.model.rows)                  # the live path (the core's summarize) says it the same
    assert win.live.stats.labels["variance_us2"].text() == variance_text(var)
    cmp = win.compare(a, a)
    assert all(p.labels["variance_us2"].text() == variance_text(var) for p in cmp.panels)
