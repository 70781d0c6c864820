from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.v2_error_body import V2ErrorBody
from ...models.visibility_request import VisibilityRequest
from ...models.visibility_response import VisibilityResponse
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    subscription: str,
    *,
    body: VisibilityRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/accounts/{account}/queues/{queue}/subscriptions/{subscription}/visibility".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),subscription=quote(str(subscription), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> V2ErrorBody | VisibilityResponse | None:
    if response.status_code == 200:
        response_200 = VisibilityResponse.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[V2ErrorBody | VisibilityResponse]:
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
    body: VisibilityRequest,

) -> Response[V2ErrorBody | VisibilityResponse]:
    """ A shared subscription: give 1-100 of its deliveries a new lease; new receipts. The body and answer
    of messages/visibility, each entry with visibilityTimeoutSeconds and without body (a subscription
    cannot change the queue's message): 422 otherwise

    Args:
        account (str):
        queue (str):
        subscription (str):
        body (VisibilityRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[V2ErrorBody | VisibilityResponse]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
subscription=subscription,
body=body,

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
    body: VisibilityRequest,

) -> V2ErrorBody | VisibilityResponse | None:
    """ A shared subscription: give 1-100 of its deliveries a new lease; new receipts. The body and answer
    of messages/visibility, each entry with visibilityTimeoutSeconds and without body (a subscription
    cannot change the queue's message): 422 otherwise

    Args:
        account (str):
        queue (str):
        subscription (str):
        body (VisibilityRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        V2ErrorBody | VisibilityResponse
     """


    response = sync_detailed(
        account=account,
queue=queue,
subscription=subscription,
client=client,
body=body,

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
    body: VisibilityRequest,

) -> Response[V2ErrorBody | VisibilityResponse]:
    """ A shared subscription: give 1-100 of its deliveries a new lease; new receipts. The body and answer
    of messages/visibility, each entry with visibilityTimeoutSeconds and without body (a subscription
    cannot change the queue's message): 422 otherwise

    Args:
        account (str):
        queue (str):
        subscription (str):
        body (VisibilityRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[V2ErrorBody | VisibilityResponse]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
subscription=subscription,
body=body,

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
    body: VisibilityRequest,

) -> V2ErrorBody | VisibilityResponse | None:
    """ A shared subscription: give 1-100 of its deliveries a new lease; new receipts. The body and answer
    of messages/visibility, each entry with visibilityTimeoutSeconds and without body (a subscription
    cannot change the queue's message): 422 otherwise

    Args:
        account (str):
        queue (str):
        subscription (str):
        body (VisibilityRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        V2ErrorBody | VisibilityResponse
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
subscription=subscription,
client=client,
body=body,

    )
    errors.raise_for_status(response)
    return response.parsed
