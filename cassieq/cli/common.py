"""What every command module of the CLI shares."""

from __future__ import annotations

import click


def err(message: str) -> None:
    """A progress or diagnostic line for the person at the terminal (stderr)."""
    click.echo(message, err=True)
