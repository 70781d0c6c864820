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
from ...models.update_message_body import UpdateMessageBody
from ...models.update_message_request import UpdateMessageRequest
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    *,
    body: UpdateMessageRequest,
    pop_receipt: str,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    params: dict[str, Any] = {}

    params["popReceipt"] = pop_receipt


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/api/v1/accounts/{account}/queues/{queue}/messages".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),),
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody | None:
    if response.status_code == 200:
        response_200 = UpdateMessageBody.from_dict(response.json())



        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody]:
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
    body: UpdateMessageRequest,
    pop_receipt: str,

) -> Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody]:
    """ Update a message's payload and/or invisibility; returns a new receipt

    Args:
        account (str):
        queue (str):
        pop_receipt (str):
        body (UpdateMessageRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
body=body,
pop_receipt=pop_receipt,

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
    body: UpdateMessageRequest,
    pop_receipt: str,

) -> AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody | None:
    """ Update a message's payload and/or invisibility; returns a new receipt

    Args:
        account (str):
        queue (str):
        pop_receipt (str):
        body (UpdateMessageRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody
     """


    response = sync_detailed(
        account=account,
queue=queue,
client=client,
body=body,
pop_receipt=pop_receipt,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    queue: str,
    *,
    client: AuthenticatedClient,
    body: UpdateMessageRequest,
    pop_receipt: str,

) -> Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody]:
    """ Update a message's payload and/or invisibility; returns a new receipt

    Args:
        account (str):
        queue (str):
        pop_receipt (str):
        body (UpdateMessageRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
body=body,
pop_receipt=pop_receipt,

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
    body: UpdateMessageRequest,
    pop_receipt: str,

) -> AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody | None:
    """ Update a message's payload and/or invisibility; returns a new receipt

    Args:
        account (str):
        queue (str):
        pop_receipt (str):
        body (UpdateMessageRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | ResourceErrorBody | UpdateMessageBody
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
client=client,
body=body,
pop_receipt=pop_receipt,

    )
    errors.raise_for_status(response)
    return response.parsed
