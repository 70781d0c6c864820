"""The progress bar of the long commands (put --file, drain): on a terminal only, and gone
once done. It shows the count, the rate (messages a second over rich's recent window) and
the time left at that rate."""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Messages a second (rich's TransferSpeedColumn counts bytes)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("?/s" if speed is None else f"{speed:,.0f}/s", style="progress.data.speed")


def progress(visible: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeRemainingColumn(),
        disable=not visible,
        transient=True,
    )
