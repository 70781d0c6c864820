"""Tables for people, JSON for scripts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click
from rich.console import Console
from rich.table import Table


def emit(
    data: Any, as_json: bool, *, columns: Sequence[str] | None = None, title: str | None = None
) -> None:
    if as_json:
        click.echo(json.dumps(data))
        return
    console = Console()
    if isinstance(data, Mapping):
        table = Table(title=title, show_header=False)
        table.add_column("field", style="bold")
        table.add_column("value")
        for key, value in data.items():
            table.add_row(str(key), _text(value))
        console.print(table)
    elif isinstance(data, list):
        cols = list(
            columns or (data[0].keys() if data and isinstance(data[0], Mapping) else ["value"])
        )
        table = Table(title=title)
        for col in cols:
            table.add_column(col)
        for row in data:
            cells = [_text(row.get(c)) for c in cols] if isinstance(row, Mapping) else [_text(row)]
            table.add_row(*cells)
        console.print(table)
    else:
        click.echo(_text(data))


def _text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return "" if value is None else str(value)
