from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.auth_error_body import AuthErrorBody
from ...models.errors_body import ErrorsBody
from ...models.get_message_body import GetMessageBody
from ...models.resource_error_body import ResourceErrorBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    account: str,
    queue: str,
    *,
    invisibility_time_seconds: int | Unset = 30,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["invisibilityTimeSeconds"] = invisibility_time_seconds


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/accounts/{account}/queues/{queue}/messages/next".format(account=quote(str(account), safe=""),queue=quote(str(queue), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> GetMessageBody | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_200_type_0 = GetMessageBody.from_dict(data)



                return response_200_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(GetMessageBody | None, data)

        response_200 = _parse_response_200(response.json())

        return response_200

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

    if response.status_code == 422:
        response_422 = ErrorsBody.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody]:
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
    invisibility_time_seconds: int | Unset = 30,

) -> Response[Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody]:
    """ Get the next visible message (204 when there is none)

    Args:
        account (str):
        queue (str):
        invisibility_time_seconds (int | Unset):  Default: 30.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
invisibility_time_seconds=invisibility_time_seconds,

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
    invisibility_time_seconds: int | Unset = 30,

) -> Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody | None:
    """ Get the next visible message (204 when there is none)

    Args:
        account (str):
        queue (str):
        invisibility_time_seconds (int | Unset):  Default: 30.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody
     """


    response = sync_detailed(
        account=account,
queue=queue,
client=client,
invisibility_time_seconds=invisibility_time_seconds,

    )
    # cassieq: an error answer raises its typed exception (errors.ApiError), body attached.
    errors.raise_for_status(response)
    return response.parsed

async def asyncio_detailed(
    account: str,
    queue: str,
    *,
    client: AuthenticatedClient,
    invisibility_time_seconds: int | Unset = 30,

) -> Response[Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody]:
    """ Get the next visible message (204 when there is none)

    Args:
        account (str):
        queue (str):
        invisibility_time_seconds (int | Unset):  Default: 30.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody]
     """


    kwargs = _get_kwargs(
        account=account,
queue=queue,
invisibility_time_seconds=invisibility_time_seconds,

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
    invisibility_time_seconds: int | Unset = 30,

) -> Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody | None:
    """ Get the next visible message (204 when there is none)

    Args:
        account (str):
        queue (str):
        invisibility_time_seconds (int | Unset):  Default: 30.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | AuthErrorBody | ErrorsBody | GetMessageBody | None | ResourceErrorBody
     """


    response = await asyncio_detailed(
        account=account,
queue=queue,
client=client,
invisibility_time_seconds=invisibility_time_seconds,

    )
    errors.raise_for_status(response)
    return response.parsed
