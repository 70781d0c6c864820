"""What handlers are given by Litestar's dependency injection: ``engine``, ``metrics``, or
``app`` (the engine, the receipt signer, the settings, the background loop's health...).

Handlers name what they use (``engine: Engine``) instead of reaching into the app's state;
a test can give a handler another engine by overriding one dependency. The values are the
app's own, made once in ``create_app``: each provider caches its value (``use_cache``), so
a request pays a dictionary look-up per dependency, never a validation. ``SkipValidation``
keeps Litestar from checking each value against its type on every request (it would try to
convert an engine into a ``QueueEngine`` as if it were request data).
"""

from __future__ import annotations

from litestar.di import Provide
from litestar.params import SkipValidation

from cassieq.api.metrics import Metrics
from cassieq.api.state import AppState
from cassieq.engine import QueueEngine

# A handler names one dependency: Litestar resolves two or more in an anyio task group, which
# measured about 150 µs a request (a third of what a v1 get costs the app in process), and
# one costs nothing measurable. A handler that needs more than one part takes ``app``.
App = SkipValidation[AppState]
Engine = SkipValidation[QueueEngine]
AppMetrics = SkipValidation[Metrics]


def dependencies(state: AppState) -> dict[str, Provide]:
    """The app-level providers, one per part a handler may name."""

    def constant(value: object) -> Provide:
        def provide() -> object:
            return value

        return Provide(provide, use_cache=True, sync_to_thread=False)

    provided = {
        "app": constant(state),
        "engine": constant(state.engine),
    }
    if state.metrics is not None:  # the app factory always makes them; tests may not
        provided["metrics"] = constant(state.metrics)
    return provided
