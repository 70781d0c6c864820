"""The progress bar of the long commands (put --file, drain): on a terminal only, and gone
once done."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn


def progress(visible: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        disable=not visible,
        transient=True,
    )
