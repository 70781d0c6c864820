"""What the app keeps for its handlers: settings, the engine, the receipt signer,
the replay cache of v2 signatures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cassieq.api.admission import FairAdmission
from cassieq.api.quotas import AccountQuotas
from cassieq.api.rate_limit import AccountBudgets
from cassieq.api.unverified_bodies import UnverifiedBodies
from cassieq.auth.receipt_keys import ReceiptSigner
from cassieq.auth.replay import ReplayCache
from cassieq.config import Settings
from cassieq.engine import QueueEngine
from cassieq.engine.worker import LoopHealth

if TYPE_CHECKING:
    from cassieq.api.metrics import Metrics


@dataclass(frozen=True)
class AppState:
    settings: Settings
    engine: QueueEngine
    receipts: ReceiptSigner
    # v2 signatures seen within the allowed clock skew (this server's only).
    replay: ReplayCache
    # `cassieq dev` only: requests on the admin port from loopback need no operator token,
    # as on CassieQ's dev image. Never set from the environment.
    open_admin_port: bool = False
    # The background loop's health (/ready, /metrics) and this app's Prometheus registry.
    background: LoopHealth = field(default_factory=LoopHealth)
    metrics: Metrics | None = None
    # Each account's request budget on this server (cassieq.api.rate_limit).
    budgets: AccountBudgets = field(default_factory=lambda: AccountBudgets.of(Settings()))
    # Each account's quotas of messages stored and in flight (cassieq.api.quotas).
    quotas: AccountQuotas = field(default_factory=lambda: AccountQuotas(0, 0))
    # Places for authenticated requests, taken in turns by accounts when busy (admission.py).
    admission: FairAdmission = field(default_factory=lambda: FairAdmission(0))
    # Room for v2 bodies read before their signature is checked (unverified_bodies.py).
    unverified: UnverifiedBodies = field(
        default_factory=lambda: UnverifiedBodies(
            Settings().http_unverified_body_bytes,
            Settings().http_unverified_body_bytes_per_account,
        )
    )
