from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.subscription_detail_body import SubscriptionDetailBody
from ...models.v2_error_body import V2ErrorBody
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    subscription: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/accounts/{account}/queues/{queue}/subscriptions/{subscription}".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),subscription=quote(str(subscription), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> SubscriptionDetailBody | V2ErrorBody | None:
    if response.status_code == 200:
        response_200 = SubscriptionDetailBody.from_dict(response.json())



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

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[SubscriptionDetailBody | V2ErrorBody]:
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

) -> Response[SubscriptionDetailBody | V2ErrorBody]:
    """ A subscription: its options, committed position, lag (ordered: messages after the position; shared:
    messages not yet acked or passed) and oldestUnackedAgeSeconds (of the first of them; null when none)

    Args:
        account (str):
        queue (str):
        subscription (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[SubscriptionDetailBody | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
subscription=subscription,

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

) -> SubscriptionDetailBody | V2ErrorBody | None:
    """ A subscription: its options, committed position, lag (ordered: messages after the position; shared:
    messages not yet acked or passed) and oldestUnackedAgeSeconds (of the first of them; null when none)

    Args:
        account (str):
        queue (str):
        subscription (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        SubscriptionDetailBody | V2ErrorBody
     """


    response = sync_detailed(
        account=account,
queue=queue,
subscription=subscription,
client=client,

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

) -> Response[SubscriptionDetailBody | V2ErrorBody]:
    """ A subscription: its options, committed position, lag (ordered: messages after the position; shared:
    messages not yet acked or passed) and oldestUnackedAgeSeconds (of the first of them; null when none)

    Args:
        account (str):
        queue (str):
        subscription (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[SubscriptionDetailBody | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
subscription=subscription,

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

) -> SubscriptionDetailBody | V2ErrorBody | None:
    """ A subscription: its options, committed position, lag (ordered: messages after the position; shared:
    messages not yet acked or passed) and oldestUnackedAgeSeconds (of the first of them; null when none)

    Args:
        account (str):
        queue (str):
        subscription (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        SubscriptionDetailBody | V2ErrorBody
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
subscription=subscription,
client=client,

    )
    errors.raise_for_status(response)
    return response.parsed
