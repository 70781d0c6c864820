"""structlog set-up: console lines for people, JSON lines for machines."""

from __future__ import annotations

import logging
import sys

import structlog

from cassieq.config import LogFormat


def configure_logging(fmt: LogFormat = "console", level: str = "info") -> None:
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    # The driver logs every reconnection attempt at WARNING; keep them, drop the chatter.
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=sys.stderr)
