from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.auth_error_body import AuthErrorBody
from ...models.errors_body import ErrorsBody
from ...models.resource_error_body import ResourceErrorBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    *,
    body: str,
    initial_invisibility_seconds: int | None | Unset = UNSET,
    initial_invisiblity_time: int | None | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    params: dict[str, Any] = {}

    json_initial_invisibility_seconds: int | None | Unset
    if isinstance(initial_invisibility_seconds, Unset):
        json_initial_invisibility_seconds = UNSET
    else:
        json_initial_invisibility_seconds = initial_invisibility_seconds
    params["initialInvisibilitySeconds"] = json_initial_invisibility_seconds

    json_initial_invisiblity_time: int | None | Unset
    if isinstance(initial_invisiblity_time, Unset):
        json_initial_invisiblity_time = UNSET
    else:
        json_initial_invisiblity_time = initial_invisiblity_time
    params["initialInvisiblityTime"] = json_initial_invisiblity_time


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/accounts/{account}/queues/{queue}/messages".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),),
        "params": params,
    }

    _kwargs["content"] = body.encode()
    headers["Content-Type"] = "text/plain"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
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
    queue: str,
    *,
    client: AuthenticatedClient,
    body: str,
    initial_invisibility_seconds: int | None | Unset = UNSET,
    initial_invisiblity_time: int | None | Unset = UNSET,

) -> Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Put a message (the raw request body)

    Args:
        account (str):
        queue (str):
        initial_invisibility_seconds (int | None | Unset): Seconds before the message is first
            visible (default: the queue's delaySeconds, 0 unless set)
        initial_invisiblity_time (int | None | Unset): Deprecated spelling CassieQ still accepts;
            not with the other
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
body=body,
initial_invisibility_seconds=initial_invisibility_seconds,
initial_invisiblity_time=initial_invisiblity_time,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    account: str,
    queue: str,
    *,
    client: AuthenticatedClient,
    body: str,
    initial_invisibility_seconds: int | None | Unset = UNSET,
    initial_invisiblity_time: int | None | Unset = UNSET,

) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Put a message (the raw request body)

    Args:
        account (str):
        queue (str):
        initial_invisibility_seconds (int | None | Unset): Seconds before the message is first
            visible (default: the queue's delaySeconds, 0 unless set)
        initial_invisiblity_time (int | None | Unset): Deprecated spelling CassieQ still accepts;
            not with the other
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | AuthErrorBody | ErrorsBody | ResourceErrorBody
     """


    response = sync_detailed(
        account=account,
queue=queue,
client=client,
body=body,
initial_invisibility_seconds=initial_invisibility_seconds,
initial_invisiblity_time=initial_invisiblity_time,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    queue: str,
    *,
    client: AuthenticatedClient,
    body: str,
    initial_invisibility_seconds: int | None | Unset = UNSET,
    initial_invisiblity_time: int | None | Unset = UNSET,

) -> Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Put a message (the raw request body)

    Args:
        account (str):
        queue (str):
        initial_invisibility_seconds (int | None | Unset): Seconds before the message is first
            visible (default: the queue's delaySeconds, 0 unless set)
        initial_invisiblity_time (int | None | Unset): Deprecated spelling CassieQ still accepts;
            not with the other
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
body=body,
initial_invisibility_seconds=initial_invisibility_seconds,
initial_invisiblity_time=initial_invisiblity_time,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    account: str,
    queue: str,
    *,
    client: AuthenticatedClient,
    body: str,
    initial_invisibility_seconds: int | None | Unset = UNSET,
    initial_invisiblity_time: int | None | Unset = UNSET,

) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Put a message (the raw request body)

    Args:
        account (str):
        queue (str):
        initial_invisibility_seconds (int | None | Unset): Seconds before the message is first
            visible (default: the queue's delaySeconds, 0 unless set)
        initial_invisiblity_time (int | None | Unset): Deprecated spelling CassieQ still accepts;
            not with the other
        body (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | AuthErrorBody | ErrorsBody | ResourceErrorBody
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
client=client,
body=body,
initial_invisibility_seconds=initial_invisibility_seconds,
initial_invisiblity_time=initial_invisiblity_time,

    )
    errors.raise_for_status(response)
    return response.parsed
