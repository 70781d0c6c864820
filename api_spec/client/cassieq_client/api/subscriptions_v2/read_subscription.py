from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.read_body import ReadBody
from ...models.v2_error_body import V2ErrorBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    subscription: str,
    *,
    limit: int | Unset = 100,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/accounts/{account}/queues/{queue}/subscriptions/{subscription}/messages".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),subscription=quote(str(subscription), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ReadBody | V2ErrorBody | None:
    if response.status_code == 200:
        response_200 = ReadBody.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = V2ErrorBody.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = V2ErrorBody.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = V2ErrorBody.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = V2ErrorBody.from_dict(response.json())



        return response_404

    if response.status_code == 422:
        response_422 = V2ErrorBody.from_dict(response.json())



        return response_422

    if response.status_code == 503:
        response_503 = V2ErrorBody.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ReadBody | V2ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account: str,
    queue: str,
    subscription: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,

) -> Response[ReadBody | V2ErrorBody]:
    """ An ordered subscription: up to limit messages after its committed position, in id order within each
    partition; next is the position after the last one. The position does not move: commit it (POST
    .../position) once they are processed. 422 on a shared subscription (receive it)

    Args:
        account (str):
        queue (str):
        subscription (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ReadBody | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
subscription=subscription,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    account: str,
    queue: str,
    subscription: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,

) -> ReadBody | V2ErrorBody | None:
    """ An ordered subscription: up to limit messages after its committed position, in id order within each
    partition; next is the position after the last one. The position does not move: commit it (POST
    .../position) once they are processed. 422 on a shared subscription (receive it)

    Args:
        account (str):
        queue (str):
        subscription (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ReadBody | V2ErrorBody
     """


    response = sync_detailed(
        account=account,
queue=queue,
subscription=subscription,
client=client,
limit=limit,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    queue: str,
    subscription: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,

) -> Response[ReadBody | V2ErrorBody]:
    """ An ordered subscription: up to limit messages after its committed position, in id order within each
    partition; next is the position after the last one. The position does not move: commit it (POST
    .../position) once they are processed. 422 on a shared subscription (receive it)

    Args:
        account (str):
        queue (str):
        subscription (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ReadBody | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
subscription=subscription,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    account: str,
    queue: str,
    subscription: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = 100,

) -> ReadBody | V2ErrorBody | None:
    """ An ordered subscription: up to limit messages after its committed position, in id order within each
    partition; next is the position after the last one. The position does not move: commit it (POST
    .../position) once they are processed. 422 on a shared subscription (receive it)

    Args:
        account (str):
        queue (str):
        subscription (str):
        limit (int | Unset):  Default: 100.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ReadBody | V2ErrorBody
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
subscription=subscription,
client=client,
limit=limit,

    )
    errors.raise_for_status(response)
    return response.parsed
