"""Operator routes: accounts and their keys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from litestar import Controller, Request, Response, delete, get, post
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import FromPath, JSONBody

from cassieq.api.dependencies import Engine
from cassieq.api.errors import errors
from cassieq.api.http.bodies import check_json_depth
from cassieq.api.security import admin_guard
from cassieq.api.v1.dto import AccountBody, KeyCreateRequest
from cassieq.engine.errors import InvalidArgument
from cassieq.model import MAX_NAME_LENGTH, NAME_PATTERN


@dataclass
class _AccountNameBody(Operation):
    """The contract's body is the name as a JSON string; {"accountName": ...} is accepted too."""

    def __post_init__(self) -> None:
        # Litestar passes request_body=None for a handler without `data`: document ours.
        name = Schema(type=OpenAPIType.STRING, pattern=NAME_PATTERN, max_length=MAX_NAME_LENGTH)
        self.request_body = RequestBody(
            content={
                "application/json": OpenAPIMediaType(
                    schema=Schema(
                        one_of=[
                            name,
                            Schema(
                                type=OpenAPIType.OBJECT,
                                properties={"accountName": name},
                                required=["accountName"],
                            ),
                        ],
                        # Not `dev`: `cassieq dev` has created that one (a 409).
                        examples=["team-a"],
                    )
                )
            },
            required=True,
        )


class AccountController(Controller):
    path = "/api/v1/accounts"
    tags = ["accounts (operator)"]
    guards = [admin_guard]

    @get(operation_id="listAccounts", summary="List accounts", responses=errors(401, 403))
    async def list_accounts(self, engine: Engine) -> list[AccountBody]:
        return [AccountBody.of(a) for a in await engine.list_accounts()]

    @post(
        operation_id="createAccount",
        summary="Create an account with keys 'primary' and 'secondary'",
        status_code=201,
        operation_class=_AccountNameBody,
        responses=errors(400, 401, 403, 409, 413),
    )
    async def create_account(self, engine: Engine, request: Request[Any, Any, Any]) -> AccountBody:
        name = _account_name(await request.body())
        return AccountBody.of(await engine.create_account(name))

    @get(
        "/{account:str}",
        operation_id="getAccount",
        summary="Show an account",
        responses=errors(401, 403, 404),
    )
    async def get_account(self, engine: Engine, account: FromPath[str]) -> AccountBody:
        return AccountBody.of(await engine.account(account))

    @delete(
        "/{account:str}",
        operation_id="deleteAccount",
        summary="Delete an account",
        status_code=204,
        responses=errors(401, 403),
    )
    async def delete_account(self, engine: Engine, account: FromPath[str]) -> None:
        await engine.delete_account(account)

    @post(
        "/{account:str}/keys",
        operation_id="addKey",
        summary="Add a key; the answer is the new key (a JSON string)",
        status_code=201,
        responses=errors(400, 401, 403, 404, 409, 413),
    )
    async def add_key(
        self, engine: Engine, account: FromPath[str], data: JSONBody[KeyCreateRequest]
    ) -> Response[bytes]:
        key = await engine.add_key(account, data.key_name)
        # A JSON string, like every body of the contract (Litestar would send str as text).
        return Response(msgspec.json.encode(key), status_code=201, media_type="application/json")

    @delete(
        "/{account:str}/keys/{key_name:str}",
        operation_id="deleteKey",
        summary="Delete a key: its signatures stop working at once",
        status_code=204,
        responses=errors(401, 403, 404),
    )
    async def delete_key(
        self, engine: Engine, account: FromPath[str], key_name: FromPath[str]
    ) -> None:
        await engine.delete_key(account, key_name)


class _LooseAccountName(msgspec.Struct, frozen=True, rename="camel"):
    # The name is checked by the engine, which words the contract's 422 message.
    account_name: str


def _account_name(body: bytes) -> str:
    check_json_depth(body)  # msgspec skips an unknown field by recursing into it
    try:
        value = msgspec.json.decode(body, type=str | _LooseAccountName)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        # An invalid body: 422, like every other body the contract's clients send wrong.
        raise InvalidArgument(
            f'the body must be the account name as a JSON string ("acme") or '
            f'{{"accountName": "acme"}}: {exc}'
        ) from None
    return value if isinstance(value, str) else value.account_name
