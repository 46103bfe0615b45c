"""The report's charts as static SVG: no script, no library, nothing fetched.

:func:`histogram_svg` draws score distributions (one or two runs, overlaid);
:func:`interval_svg` draws means or changes with their intervals on one axis. Every label is
escaped (:func:`html.escape`), so a run name cannot become markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["COLOURS", "histogram_svg", "interval_svg"]

COLOURS = ("#2563eb", "#d97706")
"""The new run's colour and the baseline's."""

_W, _H, _PAD = 560, 200, 36


def _text(x: float, y: float, label: object, anchor: str = "middle", size: int = 12) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}">'
        f"{html.escape(str(label))}</text>"
    )


def histogram_svg(series: Mapping[str, Sequence[float]], *, bins: int = 20, title: str = "") -> str:
    """Overlaid histograms of scores in [0, 1], one per series (label -> values).

    Examples
    --------
    >>> svg = histogram_svg({"<b>run</b>": [0.1, 0.5, 0.5]}, bins=4)
    >>> svg.startswith("<svg") and "&lt;b&gt;run&lt;/b&gt;" in svg and "<b>" not in svg
    True
    """
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts = {k: np.histogram(np.clip(v, 0, 1), bins=edges)[0] for k, v in series.items()}
    top = max([int(c.max()) for c in counts.values() if c.size] + [1])
    plot_w, plot_h = _W - 2 * _PAD, _H - 2 * _PAD
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" role="img" '
        f'class="chart"><title>{html.escape(title)}</title>'
    ]
    bar_w = plot_w / bins
    for k, (label, c) in enumerate(counts.items()):
        colour = COLOURS[k % len(COLOURS)]
        for i, n in enumerate(c):
            if n:
                h = plot_h * n / top
                parts.append(
                    f'<rect x="{_PAD + i * bar_w + 1:.1f}" y="{_PAD + plot_h - h:.1f}" '
                    f'width="{bar_w - 2:.1f}" height="{h:.1f}" fill="{colour}" '
                    f'fill-opacity="0.45"><title>{html.escape(str(label))}: {n} in '
                    f"[{edges[i]:.2f}, {edges[i + 1]:.2f})</title></rect>"
                )
        key_x = _W - _PAD - 170
        parts.append(f'<rect x="{key_x}" y="{8 + 16 * k}" width="10" height="10" fill="{colour}"/>')
        parts.append(_text(key_x + 16, 17 + 16 * k, label, "start"))
    base = _PAD + plot_h
    parts.append(f'<line x1="{_PAD}" y1="{base}" x2="{_W - _PAD}" y2="{base}" stroke="#555"/>')
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(_text(_PAD + plot_w * tick, base + 16, f"{tick:g}"))
    parts.append(_text(_PAD - 6, _PAD + 4, top, "end"))
    parts.append("</svg>")
    return "".join(parts)


def interval_svg(
    rows: Sequence[tuple[str, float, float, float]],
    *,
    low: float | None = None,
    high: float | None = None,
    zero: bool = False,
    title: str = "",
) -> str:
    """Points with their intervals, one row each: ``(label, value, low, high)``.

    The axis spans ``low`` to ``high`` (default: the rows' range, padded); ``zero`` draws a
    line at 0 (for changes). A NaN interval draws the point alone.

    Examples
    --------
    >>> svg = interval_svg([("CUS", -0.04, -0.12, 0.01)], zero=True)
    >>> "CUS" in svg and "<line" in svg
    True
    """
    finite = [v for _, *vals in rows for v in vals if math.isfinite(v)] or [0.0, 1.0]
    lo = min(finite) if low is None else low
    hi = max(finite) if high is None else high
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = (hi - lo) or 1.0
    if low is None:
        lo -= 0.08 * span
    if high is None:
        hi += 0.08 * span
    span = hi - lo
    left, right, row_h = 110, _W - 20, 28
    height = 36 + row_h * len(rows)

    def x(v: float) -> float:
        return left + (right - left) * (v - lo) / span

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {height}" role="img" '
        f'class="chart"><title>{html.escape(title)}</title>'
    ]
    if zero:
        parts.append(
            f'<line x1="{x(0):.1f}" y1="6" x2="{x(0):.1f}" y2="{height - 24}" stroke="#999" '
            'stroke-dasharray="4 3"/>'
        )
    for i, (label, value, a, b) in enumerate(rows):
        y = 18 + row_h * i
        parts.append(_text(left - 8, y + 4, label, "end"))
        if math.isfinite(a) and math.isfinite(b):
            parts.append(
                f'<line x1="{x(a):.1f}" y1="{y}" x2="{x(b):.1f}" y2="{y}" stroke="#333" '
                'stroke-width="2"/>'
            )
        colour = COLOURS[0] if not zero or value >= 0 else "#dc2626"
        parts.append(f'<circle cx="{x(value):.1f}" cy="{y}" r="5" fill="{colour}"/>')
    axis = height - 20
    parts.append(f'<line x1="{left}" y1="{axis}" x2="{right}" y2="{axis}" stroke="#555"/>')
    ticks, decimals = _nice_ticks(lo, hi)
    for v in ticks:
        text = f"{v:+.{decimals}f}" if zero and v != 0 else f"{v:.{decimals}f}"
        parts.append(_text(x(v), axis + 14, text))
    parts.append("</svg>")
    return "".join(parts)


def _nice_ticks(lo: float, hi: float, most: int = 6) -> tuple[list[float], int]:
    """Ticks on ``[lo, hi]`` at a round step, and the decimals the step needs.

    The step is 1, 2, 2.5 or 5 times a power of ten, at most ``most`` ticks, 0 among them
    when it is inside. Evenly spaced at even values, so the labels read as a ruler (lo +
    span * k / 4 printed -0.04, -0.01, +0.02: issue 43).
    """
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [lo], 2
    raw = span / max(1, most - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if round(step / 10.0**-decimals, 6) % 1:  # 2.5 x 10^k needs one decimal more
        decimals += 1
    first = math.ceil(lo / step - 1e-9)
    ticks = [round(k * step, decimals + 2) for k in range(first, math.floor(hi / step + 1e-9) + 1)]
    return [0.0 if t == 0 else t for t in ticks], decimals
