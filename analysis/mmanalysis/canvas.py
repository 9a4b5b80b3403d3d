"""A figure's canvas made to hold everything drawn on it: legends placed beside their axes, labels, titles.

Matplotlib draws a legend placed outside its axes (bbox_to_anchor past the right edge, as every latency
figure's is) wherever that falls, inside the figure's canvas or not. Cropping at save time to the drawn extent
(savefig's bbox 'tight') measured the extent at the figure's own 100 dpi and wrote the PNG at 110: text is
hinted per pixel size, so at 110 dpi the CDF's legend came out wider than measured and its right edge, the end
of "mean 47.03 us", was cut off. `fit` instead sizes the figure itself to what is drawn, at the DPI it is
written at, so the figure a notebook shows, the PNG and the SVG are one canvas with nothing outside it, and a
test can check every text's extent against the figure's own.
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.transforms import Bbox

DPI = 110            # the PNGs' resolution; a figure is measured at it
PAD_IN = 0.1         # margin around what is drawn, inches (savefig's default pad_inches)
_TOLERANCE_IN = 0.01


def beside(legend: Legend | None) -> Legend | None:
    """Marks LEGEND, placed beside its axes (past their right edge), as outside the layout: tight_layout would
    narrow the axes until the legend fit the figure's width (a histogram's panels were squeezed to a third of
    it), where `fit` widens the figure for it instead."""
    if legend is not None:
        legend.set_in_layout(False)
    return legend


def fit(fig: Figure, dpi: float = DPI, pad_in: float = PAD_IN) -> Figure:
    """Resizes FIG so that everything drawn lies inside it, PAD_IN from its edges, and returns it. Axes keep
    their size in inches and their places relative to one another; figure-level texts (a suptitle) and legends
    move with them. Measured at DPI, which the figure keeps, so that what is written at DPI is what was measured.
    A text wrapped to the figure's width may wrap anew on the new width: measured again until nothing moves."""
    fig.set_dpi(dpi)
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    legends = [lg for lg in [*(ax.get_legend() for ax in fig.axes), *fig.legends] if lg is not None]
    outside = [lg for lg in legends if not lg.get_in_layout()]
    for lg in outside:                      # (beside: out of tight_layout's way, never out of the canvas)
        lg.set_in_layout(True)
    try:
        _fit(fig, pad_in)
    finally:
        for lg in outside:
            lg.set_in_layout(False)
    return fig


def _fit(fig: Figure, pad_in: float) -> None:
    for _ in range(3):
        box = fig.get_tightbbox(fig.canvas.get_renderer())          # inches, from the figure's lower left
        w, h = fig.get_size_inches()
        x0, y0 = box.x0 - pad_in, box.y0 - pad_in
        new_w, new_h = box.width + 2 * pad_in, box.height + 2 * pad_in
        if max(abs(x0), abs(y0), abs(new_w - w), abs(new_h - h)) < _TOLERANCE_IN:
            break
        for ax in fig.axes:
            p = ax.get_position()
            ax.set_position([(p.x0 * w - x0) / new_w, (p.y0 * h - y0) / new_h, p.width * w / new_w,
                             p.height * h / new_h])
        for text in fig.texts:
            if text.get_transform() == fig.transFigure:
                x, y = text.get_position()
                text.set_position(((x * w - x0) / new_w, (y * h - y0) / new_h))
        old = Bbox.from_bounds(-x0 / new_w, -y0 / new_h, w / new_w, h / new_h)   # the old canvas, in the new one
        for legend in fig.legends:
            anchor = legend.get_bbox_to_anchor().transformed(fig.transFigure.inverted())
            legend.set_bbox_to_anchor(Bbox.from_extents(
                old.x0 + anchor.x0 * old.width, old.y0 + anchor.y0 * old.height,
                old.x0 + anchor.x1 * old.width, old.y0 + anchor.y1 * old.height), transform=fig.transFigure)
        fig.set_size_inches(new_w, new_h)


__all__ = ["DPI", "PAD_IN", "beside", "fit"]
