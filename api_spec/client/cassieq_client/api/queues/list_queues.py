from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.auth_error_body import AuthErrorBody
from ...models.errors_body import ErrorsBody
from ...models.queue_definition_body import QueueDefinitionBody
from typing import cast



def _get_kwargs(
    account: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/accounts/{account}/queues".format(account=quote(str(account), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AuthErrorBody | ErrorsBody | list[QueueDefinitionBody] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in (_response_200):
            response_200_item = QueueDefinitionBody.from_dict(response_200_item_data)



            response_200.append(response_200_item)

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

    if response.status_code == 422:
        response_422 = ErrorsBody.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AuthErrorBody | ErrorsBody | list[QueueDefinitionBody]]:
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

) -> Response[AuthErrorBody | ErrorsBody | list[QueueDefinitionBody]]:
    """ List the account's queues

    Args:
        account (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | list[QueueDefinitionBody]]
     """


    kwargs = _get_kwargs(
        account=account,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    account: str,
    *,
    client: AuthenticatedClient,

) -> AuthErrorBody | ErrorsBody | list[QueueDefinitionBody] | None:
    """ List the account's queues

    Args:
        account (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | list[QueueDefinitionBody]
     """


    response = sync_detailed(
        account=account,
client=client,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    *,
    client: AuthenticatedClient,

) -> Response[AuthErrorBody | ErrorsBody | list[QueueDefinitionBody]]:
    """ List the account's queues

    Args:
        account (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuthErrorBody | ErrorsBody | list[QueueDefinitionBody]]
     """


    kwargs = _get_kwargs(
        account=account,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    account: str,
    *,
    client: AuthenticatedClient,

) -> AuthErrorBody | ErrorsBody | list[QueueDefinitionBody] | None:
    """ List the account's queues

    Args:
        account (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuthErrorBody | ErrorsBody | list[QueueDefinitionBody]
     """


    response = await asyncio_detailed(
        account=account,
client=client,

    )
    errors.raise_for_status(response)
    return response.parsed
