"""The generated client (api_spec/client) with a credential of cassieq_client_auth."""

from __future__ import annotations

from typing import cast

import httpx
from cassieq_client import AuthenticatedClient, Client


def client_with(base_url: str, auth: httpx.Auth) -> AuthenticatedClient:
    """A Client whose requests carry ``auth`` (a key, a signature or a grant), as
    api_spec/client/README.md makes one. The generated functions are typed for an
    AuthenticatedClient, which carries a bearer token cassieq does not use: the Client is
    given to them as one."""
    return cast(AuthenticatedClient, Client(base_url=base_url, httpx_args={"auth": auth}))
