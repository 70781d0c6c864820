from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.statistics_v2_body import StatisticsV2Body
from ...models.v2_error_body import V2ErrorBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    *,
    detail: bool | Unset = False,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["detail"] = detail


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v2/accounts/{account}/queues/{queue}/statistics".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> StatisticsV2Body | V2ErrorBody | None:
    if response.status_code == 200:
        response_200 = StatisticsV2Body.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[StatisticsV2Body | V2ErrorBody]:
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
    detail: bool | Unset = False,

) -> Response[StatisticsV2Body | V2ErrorBody]:
    """ Queue statistics: size, visible, inFlight, delayed, published, delivered, acked, deadLettered,
    expired, oldestMessageAgeSeconds, deadLetterPending (past maxDeliveryCount, kept while the dead-
    letter queue is missing); with detail=true also the pipeline's latest snapshot, once one exists

    Args:
        account (str):
        queue (str):
        detail (bool | Unset): Add the latest snapshot of `cassieq pipeline stats` (delivery-count
            histogram, ack latency, oldest unacked age) as `detail`, when one exists Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[StatisticsV2Body | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
detail=detail,

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
    detail: bool | Unset = False,

) -> StatisticsV2Body | V2ErrorBody | None:
    """ Queue statistics: size, visible, inFlight, delayed, published, delivered, acked, deadLettered,
    expired, oldestMessageAgeSeconds, deadLetterPending (past maxDeliveryCount, kept while the dead-
    letter queue is missing); with detail=true also the pipeline's latest snapshot, once one exists

    Args:
        account (str):
        queue (str):
        detail (bool | Unset): Add the latest snapshot of `cassieq pipeline stats` (delivery-count
            histogram, ack latency, oldest unacked age) as `detail`, when one exists Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        StatisticsV2Body | V2ErrorBody
     """


    response = sync_detailed(
        account=account,
queue=queue,
client=client,
detail=detail,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    queue: str,
    *,
    client: AuthenticatedClient,
    detail: bool | Unset = False,

) -> Response[StatisticsV2Body | V2ErrorBody]:
    """ Queue statistics: size, visible, inFlight, delayed, published, delivered, acked, deadLettered,
    expired, oldestMessageAgeSeconds, deadLetterPending (past maxDeliveryCount, kept while the dead-
    letter queue is missing); with detail=true also the pipeline's latest snapshot, once one exists

    Args:
        account (str):
        queue (str):
        detail (bool | Unset): Add the latest snapshot of `cassieq pipeline stats` (delivery-count
            histogram, ack latency, oldest unacked age) as `detail`, when one exists Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[StatisticsV2Body | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
detail=detail,

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
    detail: bool | Unset = False,

) -> StatisticsV2Body | V2ErrorBody | None:
    """ Queue statistics: size, visible, inFlight, delayed, published, delivered, acked, deadLettered,
    expired, oldestMessageAgeSeconds, deadLetterPending (past maxDeliveryCount, kept while the dead-
    letter queue is missing); with detail=true also the pipeline's latest snapshot, once one exists

    Args:
        account (str):
        queue (str):
        detail (bool | Unset): Add the latest snapshot of `cassieq pipeline stats` (delivery-count
            histogram, ack latency, oldest unacked age) as `detail`, when one exists Default: False.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        StatisticsV2Body | V2ErrorBody
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
client=client,
detail=detail,

    )
    errors.raise_for_status(response)
    return response.parsed
