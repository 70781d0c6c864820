from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.account_body import AccountBody
from ...models.auth_error_body import AuthErrorBody
from ...models.create_account_body_type_1 import CreateAccountBodyType1
from ...models.errors_body import ErrorsBody
from ...models.resource_error_body import ResourceErrorBody
from typing import cast



def _get_kwargs(
    *,
    body: CreateAccountBodyType1 | str,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/accounts",
    }

    
    if isinstance(body, CreateAccountBodyType1):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    if response.status_code == 201:
        response_201 = AccountBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateAccountBodyType1 | str,

) -> Response[AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Create an account with keys 'primary' and 'secondary'

    Args:
        body (CreateAccountBodyType1 | str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: CreateAccountBodyType1 | str,

) -> AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Create an account with keys 'primary' and 'secondary'

    Args:
        body (CreateAccountBodyType1 | str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody
     """


    response = sync_detailed(
        client=client,
body=body,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateAccountBodyType1 | str,

) -> Response[AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Create an account with keys 'primary' and 'secondary'

    Args:
        body (CreateAccountBodyType1 | str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CreateAccountBodyType1 | str,

) -> AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Create an account with keys 'primary' and 'secondary'

    Args:
        body (CreateAccountBodyType1 | str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AccountBody | AuthErrorBody | ErrorsBody | ResourceErrorBody
     """


    response = await asyncio_detailed(
        client=client,
body=body,

    )
    errors.raise_for_status(response)
    return response.parsed
