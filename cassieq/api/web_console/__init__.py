"""The operator's web console at /console (cassieq.api.web_console.views)."""

from cassieq.api.web_console.history import History
from cassieq.api.web_console.views import console_router

__all__ = ["History", "console_router"]
