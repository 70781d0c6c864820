# The live-server fixtures of the API tests serve the end-to-end tests too.
from tests.api.conftest import account, server

__all__ = ["account", "server"]
