"""Tables for people, JSON (--json) or tab-separated lines (--plain) for scripts.

Nothing is ever cut short: a pop receipt or a key copied from the terminal must work. One
record is printed as ``field: value`` lines, never in a table (a value longer than the
terminal is left to the terminal to wrap, so a copy of it is whole); a list is a table
whose cells fold onto more lines instead of ending in "…".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click
from rich.console import Console
from rich.table import Table


def emit(
    data: Any,
    as_json: bool,
    *,
    columns: Sequence[str] | None = None,
    title: str | None = None,
    plain: bool = False,
) -> None:
    if as_json:
        click.echo(json.dumps(data))
    elif isinstance(data, Mapping):
        _record(data, title if not plain else None)
    elif isinstance(data, list):
        cols = list(
            columns or (data[0].keys() if data and isinstance(data[0], Mapping) else ["value"])
        )
        rows = [
            [_text(row.get(c)) for c in cols] if isinstance(row, Mapping) else [_text(row)]
            for row in data
        ]
        if plain:
            click.echo("\t".join(cols))
            for cells in rows:
                click.echo("\t".join(_one_line(cell) for cell in cells))
        else:
            _table(cols, rows, title)
    else:
        click.echo(_text(data))


def _record(data: Mapping[str, Any], title: str | None) -> None:
    if title:
        click.echo(click.style(title, bold=True))
    width = max((len(str(k)) for k in data), default=0)
    for key, value in data.items():
        name = click.style(str(key).ljust(width), bold=True)
        if isinstance(value, Mapping) and value:
            # An account's keys: one per line, nothing glued to a key that could be copied.
            click.echo(name)
            inner = max(len(str(k)) for k in value)
            for k, v in value.items():
                click.echo(f"  {str(k).ljust(inner)}  {_text(v)}")
        else:
            # click.echo, not rich: rich would wrap (or cut) a long value at the width.
            click.echo(f"{name}  {_text(value)}")


def _table(cols: list[str], rows: list[list[str]], title: str | None) -> None:
    table = Table(title=title)
    for col in cols:
        # fold: a long value (an id, a receipt, a body) goes on over more lines, whole.
        table.add_column(col, overflow="fold")
    for cells in rows:
        table.add_row(*cells)
    Console().print(table)


def _text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return "" if value is None else str(value)


def _one_line(cell: str) -> str:
    # Tab-separated output: a tab or newline inside a value would shift the columns.
    return cell.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
