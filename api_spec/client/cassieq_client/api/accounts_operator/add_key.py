from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.auth_error_body import AuthErrorBody
from ...models.errors_body import ErrorsBody
from ...models.key_create_request import KeyCreateRequest
from ...models.resource_error_body import ResourceErrorBody
from typing import cast



def _get_kwargs(
    account: str,
    *,
    body: KeyCreateRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/accounts/{account}/keys".format(account=quote(str(account), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AuthErrorBody | ErrorsBody | ResourceErrorBody | str | None:
    if response.status_code == 201:
        response_201 = cast(str, response.json())
        return response_201

    if response.status_code == 400:
        response_400 = ErrorsBody.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = AuthErrorBody.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = AuthErrorBody.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = ResourceErrorBody.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = ResourceErrorBody.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = ErrorsBody.from_dict(response.json())



        return response_413

    if response.status_code == 422:
        response_422 = ErrorsBody.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account: str,
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,

) -> Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | str]:
    """ Add a key; the answer is the new key (a JSON string)

    Args:
        account (str):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | str]
     """


    kwargs = _get_kwargs(
        account=account,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    account: str,
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,

) -> AuthErrorBody | ErrorsBody | ResourceErrorBody | str | None:
    """ Add a key; the answer is the new key (a JSON string)

    Args:
        account (str):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | ResourceErrorBody | str
     """


    response = sync_detailed(
        account=account,
client=client,
body=body,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,

) -> Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | str]:
    """ Add a key; the answer is the new key (a JSON string)

    Args:
        account (str):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | str]
     """


    kwargs = _get_kwargs(
        account=account,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    account: str,
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,

) -> AuthErrorBody | ErrorsBody | ResourceErrorBody | str | None:
    """ Add a key; the answer is the new key (a JSON string)

    Args:
        account (str):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | ResourceErrorBody | str
     """


    response = await asyncio_detailed(
        account=account,
client=client,
body=body,

    )
    errors.raise_for_status(response)
    return response.parsed
