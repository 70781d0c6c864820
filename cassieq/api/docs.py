"""The API's documentation pages: Swagger UI and ReDoc from packaged files (no CDN: the pages
work with no network), and the security schemes that let "Authorize" send credentials.

Swagger UI's dist comes from the PyPI package ``swagger-ui-bundle-v2``; ReDoc's standalone
bundle is vendored in ``assets/redoc`` (see its VENDORED.md).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING

import swagger_ui_bundle
from litestar import Litestar, Router
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import RedocRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, Schema, SecurityRequirement, SecurityScheme
from litestar.routes import HTTPRoute
from litestar.static_files import create_static_files_router

from cassieq import __version__
from cassieq.api.security import account_before_request, admin_guard
from cassieq.auth.signing import REQUEST_TIME_HEADER
from cassieq.auth.signing_v2 import DATE_HEADER
from cassieq.auth.signing_v2 import SCHEME as V2_SCHEME

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator
    from litestar.typing import FieldDefinition

SCHEMA_PATH = "/schema"
ASSETS_PATH = f"{SCHEMA_PATH}/assets"
REDOC_DIR = Path(__file__).parent / "assets" / "redoc"

# Several schemes fill the same Authorization header: authorize with one of them.
SECURITY_SCHEMES: dict[str, SecurityScheme] = {
    "Key": SecurityScheme(
        type="apiKey",
        name="Authorization",
        security_scheme_in="header",
        description="An account key: enter `Key <key>`.",
    ),
    "Signed": SecurityScheme(
        type="apiKey",
        name="Authorization",
        security_scheme_in="header",
        description=(
            "The v1 request signature: enter `Signed <signature>`, with the signed time in "
            f"`{REQUEST_TIME_HEADER}` (the SignedTime scheme)."
        ),
    ),
    "SignedTime": SecurityScheme(
        type="apiKey",
        name=REQUEST_TIME_HEADER,
        security_scheme_in="header",
        description="The time a v1 Signed request was signed at (goes with Signed).",
    ),
    "GrantLevels": SecurityScheme(
        type="apiKey",
        name="auth",
        security_scheme_in="query",
        description=(
            "A signed query string (POST /api/v1/permissions): its `auth` levels; `sig` is the "
            "GrantSignature scheme. Grants with `st`, `et` or `q` add those as query parameters."
        ),
    ),
    "GrantSignature": SecurityScheme(
        type="apiKey",
        name="sig",
        security_scheme_in="query",
        description="The `sig` of a signed query string (goes with GrantLevels).",
    ),
    "Operator": SecurityScheme(
        type="http",
        scheme="bearer",
        description="The operator token (CASSIEQ_ADMIN_TOKEN).",
    ),
    "V2Signature": SecurityScheme(
        type="apiKey",
        name="Authorization",
        security_scheme_in="header",
        description=(
            f"/api/v2 only: `{V2_SCHEME} Key=<keyName>, Signature=<signature>`, with the "
            f"signed time in `{DATE_HEADER}` (the V2Date scheme)."
        ),
    ),
    "V2Date": SecurityScheme(
        type="apiKey",
        name=DATE_HEADER,
        security_scheme_in="header",
        description="The time a v2 signature was made at (goes with V2Signature).",
    ),
}

# Alternatives (a list of requirements: any one of them; the schemes inside one: all).
V1_ACCOUNT: list[SecurityRequirement] = [
    {"Key": []},
    {"Signed": [], "SignedTime": []},
    {"GrantLevels": [], "GrantSignature": []},
]
# v1's Signed is refused on /api/v2 (#40 finding 10): it covers neither query nor body.
V2_ACCOUNT: list[SecurityRequirement] = [
    {"Key": []},
    {"GrantLevels": [], "GrantSignature": []},
    {"V2Signature": [], "V2Date": []},
]
OPERATOR: list[SecurityRequirement] = [{"Operator": []}]


def openapi_config() -> OpenAPIConfig:
    # No favicon: Litestar's default one is fetched from a CDN.
    swagger = SwaggerRenderPlugin(
        js_url=f"{ASSETS_PATH}/swagger/swagger-ui-bundle.js",
        css_url=f"{ASSETS_PATH}/swagger/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS_PATH}/swagger/swagger-ui-standalone-preset.js",
        favicon="",
    )
    redoc = RedocRenderPlugin(
        js_url=f"{ASSETS_PATH}/redoc/redoc.standalone.js", google_fonts=False, favicon=""
    )
    return OpenAPIConfig(
        title="cassieq",
        version=__version__,
        description=(
            "A message queue on Apache Cassandra, wire-compatible with the CassieQ v1 API. "
            "Queue routes take `Authorization: Key <key>`, `Authorization: Signed <sig>` with "
            "`x-cassieq-request-time` (v1 only), or a signed query string; /api/v2 routes take "
            "`Authorization: CQ2-HMAC-SHA256 Key=<keyName>, Signature=<sig>` with "
            "`x-cassieq-date` in place of v1's `Signed`; operator routes take "
            '`Authorization: Bearer <CASSIEQ_ADMIN_TOKEN>`. In Swagger UI, "Authorize" '
            'with one scheme per header (Key, for instance) and "Try it out".'
        ),
        path=SCHEMA_PATH,
        components=Components(security_schemes=dict(SECURITY_SCHEMES)),
        render_plugins=[swagger, redoc],
    )


def asset_routes() -> list[Router]:
    """The pages' scripts and styles, served by this server."""
    return [
        create_static_files_router(
            path=f"{ASSETS_PATH}/swagger",
            directories=[Path(swagger_ui_bundle.swagger_ui_path)],
            name="swagger-assets",
        ),
        create_static_files_router(
            path=f"{ASSETS_PATH}/redoc", directories=[REDOC_DIR], name="redoc-assets"
        ),
    ]


def document_security(app: Litestar) -> None:
    """Each route's security requirements, from its guard (or the queue API's account check,
    a before_request hook): they cannot drift from what the route checks. Runs before the
    schema is first built (Litestar builds it lazily)."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            handler.security = _requirements(handler, route.path)


def _requirements(handler: HTTPRouteHandler, path: str) -> list[SecurityRequirement] | None:
    guards = handler.resolve_guards()
    if admin_guard in guards:
        return OPERATOR
    if handler.resolve_before_request() is account_before_request:
        return V2_ACCOUNT if path.startswith("/api/v2/") else V1_ACCOUNT
    return None


class ExampleBodies(StructSchemaPlugin):
    """A request body's example, from its struct's ``EXAMPLE`` (a ClassVar), as the schema's
    ``examples``. Swagger UI's "Try it out" sends ``examples[0]`` as it is; without one it makes
    a body up from the schema, which failed (a made-up dlqName, delaySeconds 900: #39).
    tests/api/test_openapi_examples.py sends every example to a fresh server. Litestar's own
    struct plugin, which this extends, is not exported publicly (litestar is pinned below 3)."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return super().is_plugin_supported_field(field_definition) and hasattr(
            field_definition.type_, "EXAMPLE"
        )

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        schema.examples = [copy.deepcopy(field_definition.type_.EXAMPLE)]
        return schema
