from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.auth_error_body import AuthErrorBody
from ...models.errors_body import ErrorsBody
from ...models.queue_create_options import QueueCreateOptions
from ...models.resource_error_body import ResourceErrorBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    account: str,
    *,
    body: QueueCreateOptions,
    error_if_exists: bool | Unset = False,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    params: dict[str, Any] = {}

    params["errorIfExists"] = error_if_exists


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/accounts/{account}/queues".format(account=quote(str(account), safe=""),),
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    if response.status_code == 200:
        response_200 = cast(Any, None)
        return response_200

    if response.status_code == 201:
        response_201 = cast(Any, None)
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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
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
    body: QueueCreateOptions,
    error_if_exists: bool | Unset = False,

) -> Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Create a queue (201), or find it existing (200; 409 with errorIfExists=true); 409 when the account
    has CASSIEQ_MAX_QUEUES_PER_ACCOUNT queues already; 422 when dlqName names no existing queue

    Args:
        account (str):
        error_if_exists (bool | Unset):  Default: False.
        body (QueueCreateOptions):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
body=body,
error_if_exists=error_if_exists,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    account: str,
    *,
    client: AuthenticatedClient,
    body: QueueCreateOptions,
    error_if_exists: bool | Unset = False,

) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Create a queue (201), or find it existing (200; 409 with errorIfExists=true); 409 when the account
    has CASSIEQ_MAX_QUEUES_PER_ACCOUNT queues already; 422 when dlqName names no existing queue

    Args:
        account (str):
        error_if_exists (bool | Unset):  Default: False.
        body (QueueCreateOptions):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | AuthErrorBody | ErrorsBody | ResourceErrorBody
     """


    response = sync_detailed(
        account=account,
client=client,
body=body,
error_if_exists=error_if_exists,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    *,
    client: AuthenticatedClient,
    body: QueueCreateOptions,
    error_if_exists: bool | Unset = False,

) -> Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Create a queue (201), or find it existing (200; 409 with errorIfExists=true); 409 when the account
    has CASSIEQ_MAX_QUEUES_PER_ACCOUNT queues already; 422 when dlqName names no existing queue

    Args:
        account (str):
        error_if_exists (bool | Unset):  Default: False.
        body (QueueCreateOptions):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
body=body,
error_if_exists=error_if_exists,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    account: str,
    *,
    client: AuthenticatedClient,
    body: QueueCreateOptions,
    error_if_exists: bool | Unset = False,

) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Create a queue (201), or find it existing (200; 409 with errorIfExists=true); 409 when the account
    has CASSIEQ_MAX_QUEUES_PER_ACCOUNT queues already; 422 when dlqName names no existing queue

    Args:
        account (str):
        error_if_exists (bool | Unset):  Default: False.
        body (QueueCreateOptions):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | AuthErrorBody | ErrorsBody | ResourceErrorBody
     """


    response = await asyncio_detailed(
        account=account,
client=client,
body=body,
error_if_exists=error_if_exists,

    )
    errors.raise_for_status(response)
    return response.parsed
