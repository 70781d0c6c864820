"""Small line charts as inline SVG, drawn on the server: no script, nothing fetched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH, HEIGHT = 560, 160
LEFT, RIGHT, TOP, BOTTOM = 48, 8, 10, 22


@dataclass(frozen=True)
class Series:
    label: str
    colour: str  # a CSS colour of this module's own palette, never input
    points: Sequence[tuple[int, float]]  # (ms, value)


def line_chart(title: str, series: Sequence[Series], unit: str = "") -> Markup:
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
        f'height="{HEIGHT - TOP - BOTTOM}" fill="#fafafa" stroke="#ccc"/>',
    ]
    if len(xs) < 2:
        parts.append(
            f'<text x="{WIDTH // 2}" y="{HEIGHT // 2}" text-anchor="middle" fill="#777">'
            "collecting samples (one every 10 s while this queue is watched)</text>"
        )
        return Markup("".join([*parts, "</svg>"]))  # noqa: S704 (numbers and escaped text)
    x0, x1 = min(xs), max(xs)
    top = max(max(ys), 1.0)
    span_x = max(x1 - x0, 1)

    def px(x: int) -> float:
        return LEFT + (x - x0) / span_x * (WIDTH - LEFT - RIGHT)

    def py(y: float) -> float:
        return HEIGHT - BOTTOM - y / top * (HEIGHT - TOP - BOTTOM)

    parts.append(
        f'<text x="{LEFT - 4}" y="{TOP + 8}" text-anchor="end">{_num(top)}{escape(unit)}</text>'
    )
    parts.append(f'<text x="{LEFT - 4}" y="{HEIGHT - BOTTOM}" text-anchor="end">0</text>')
    minutes = (x1 - x0) / 60_000
    parts.append(
        f'<text x="{LEFT}" y="{HEIGHT - 6}">{minutes:.1f} min ago</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 6}" text-anchor="end">now</text>'
    )
    for i, s in enumerate(series):
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
        parts.append(
            f'<polyline fill="none" stroke="{s.colour}" stroke-width="2" points="{points}"/>'
            f'<text x="{LEFT + 8 + i * 130}" y="{TOP + 14}" fill="{s.colour}">'
            f"{escape(s.label)}</text>"
        )
    return Markup("".join([*parts, "</svg>"]))  # noqa: S704 (numbers and escaped text)


def _num(value: float) -> str:
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.2f}"
