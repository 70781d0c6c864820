from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.redrive_request import RedriveRequest
from ...models.redrive_started import RedriveStarted
from ...models.v2_error_body import V2ErrorBody
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    *,
    body: None | RedriveRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v2/accounts/{account}/queues/{queue}/redrive".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),),
    }

    
    if isinstance(body, RedriveRequest):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> RedriveStarted | V2ErrorBody | None:
    if response.status_code == 202:
        response_202 = RedriveStarted.from_dict(response.json())



        return response_202

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[RedriveStarted | V2ErrorBody]:
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
    body: None | RedriveRequest,

) -> Response[RedriveStarted | V2ErrorBody]:
    """ Move this dead-letter queue's messages back: to `to`, else each to the queue it came from (else to
    the only queue naming this one as its dead-letter queue), at most maxPerSecond (100) a second, in
    the background of this server. A server that stops mid-task leaves its status 'running': start again
    to move the rest

    Args:
        account (str):
        queue (str):
        body (None | RedriveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[RedriveStarted | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
body=body,

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
    body: None | RedriveRequest,

) -> RedriveStarted | V2ErrorBody | None:
    """ Move this dead-letter queue's messages back: to `to`, else each to the queue it came from (else to
    the only queue naming this one as its dead-letter queue), at most maxPerSecond (100) a second, in
    the background of this server. A server that stops mid-task leaves its status 'running': start again
    to move the rest

    Args:
        account (str):
        queue (str):
        body (None | RedriveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        RedriveStarted | V2ErrorBody
     """


    response = sync_detailed(
        account=account,
queue=queue,
client=client,
body=body,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    queue: str,
    *,
    client: AuthenticatedClient,
    body: None | RedriveRequest,

) -> Response[RedriveStarted | V2ErrorBody]:
    """ Move this dead-letter queue's messages back: to `to`, else each to the queue it came from (else to
    the only queue naming this one as its dead-letter queue), at most maxPerSecond (100) a second, in
    the background of this server. A server that stops mid-task leaves its status 'running': start again
    to move the rest

    Args:
        account (str):
        queue (str):
        body (None | RedriveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[RedriveStarted | V2ErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
body=body,

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
    body: None | RedriveRequest,

) -> RedriveStarted | V2ErrorBody | None:
    """ Move this dead-letter queue's messages back: to `to`, else each to the queue it came from (else to
    the only queue naming this one as its dead-letter queue), at most maxPerSecond (100) a second, in
    the background of this server. A server that stops mid-task leaves its status 'running': start again
    to move the rest

    Args:
        account (str):
        queue (str):
        body (None | RedriveRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        RedriveStarted | V2ErrorBody
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
client=client,
body=body,

    )
    errors.raise_for_status(response)
    return response.parsed
