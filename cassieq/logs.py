"""structlog set-up: console lines for people, JSON lines for machines.

Everything the process logs goes through the same renderer: cassieq's own structlog
events, and the standard library's records (uvicorn's server and error lines, the
Cassandra driver's), which reach the root logger's one handler. With the JSON format
every line of the process's output is one JSON object; a plain line among them would
break a log shipper that parses them.
"""

from __future__ import annotations

import logging
import sys

import structlog

from cassieq.config import LogFormat

# Loggers that configure handlers of their own elsewhere: theirs go, so that their records
# reach the root handler (and are rendered once).
_FOREIGN = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi", "cassandra")


def configure_logging(fmt: LogFormat = "console", level: str = "info") -> None:
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_ProcessAnnouncedOnce())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                # uvicorn adds a colored copy of its message for its own formatter.
                _drop_color_message,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    # The driver logs every reconnection attempt at WARNING; keep them, drop the chatter.
    root.setLevel(max(numeric, logging.WARNING))
    for name in _FOREIGN:
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
    # uvicorn's own lines (started, listening, shutting down) at the chosen level.
    logging.getLogger("uvicorn").setLevel(numeric)


class _ProcessAnnouncedOnce(logging.Filter):
    """uvicorn announces the process (``Started``/``Finished server process [pid]``) once
    per listener, and cassieq serves the API and the admin port with two listeners in one
    process: the first start is kept, and the finish of the last listener to finish (the
    first one finishes while the other still shuts down, the application's with it)."""

    STARTED = "Started server process [%d]"
    FINISHED = "Finished server process [%d]"

    def __init__(self) -> None:
        super().__init__()
        self._started = 0
        self._finished = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "uvicorn.error":
            return True
        if record.msg == self.STARTED:
            self._started += 1
            return self._started == 1
        if record.msg == self.FINISHED:
            self._finished += 1
            return self._finished == self._started
        return True


def _drop_color_message(
    _: object, __: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    event.pop("color_message", None)
    return event
