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
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    *,
    pop_receipt: str,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["popReceipt"] = pop_receipt


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/api/v1/accounts/{account}/queues/{queue}/messages".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

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
    pop_receipt: str,

) -> Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Ack a message (204); 409 when the receipt is stale

    Args:
        account (str):
        queue (str):
        pop_receipt (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
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
    pop_receipt: str,

) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Ack a message (204); 409 when the receipt is stale

    Args:
        account (str):
        queue (str):
        pop_receipt (str):

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
    pop_receipt: str,

) -> Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]:
    """ Ack a message (204); 409 when the receipt is stale

    Args:
        account (str):
        queue (str):
        pop_receipt (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
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
    pop_receipt: str,

) -> Any | AuthErrorBody | ErrorsBody | ResourceErrorBody | None:
    """ Ack a message (204); 409 when the receipt is stale

    Args:
        account (str):
        queue (str):
        pop_receipt (str):

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
pop_receipt=pop_receipt,

    )
    errors.raise_for_status(response)
    return response.parsed
