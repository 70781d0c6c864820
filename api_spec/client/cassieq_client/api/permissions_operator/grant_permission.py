from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.auth_error_body import AuthErrorBody
from ...models.errors_body import ErrorsBody
from ...models.permission_body import PermissionBody
from ...models.permission_request import PermissionRequest
from ...models.resource_error_body import ResourceErrorBody
from typing import cast



def _get_kwargs(
    *,
    body: PermissionRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/permissions",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody | None:
    if response.status_code == 201:
        response_201 = PermissionBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: PermissionRequest,

) -> Response[AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody]:
    """ Issue a signed query string for an account key

    Args:
        body (PermissionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody]
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
    body: PermissionRequest,

) -> AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody | None:
    """ Issue a signed query string for an account key

    Args:
        body (PermissionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody
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
    body: PermissionRequest,

) -> Response[AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody]:
    """ Issue a signed query string for an account key

    Args:
        body (PermissionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody]
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
    body: PermissionRequest,

) -> AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody | None:
    """ Issue a signed query string for an account key

    Args:
        body (PermissionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | PermissionBody | ResourceErrorBody
     """


    response = await asyncio_detailed(
        client=client,
body=body,

    )
    errors.raise_for_status(response)
    return response.parsed
