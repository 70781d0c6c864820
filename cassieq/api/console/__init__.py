"""The operator's web console at /console (cassieq.api.console.views)."""

from cassieq.api.console.history import History
from cassieq.api.console.views import console_router

__all__ = ["History", "console_router"]
