"""SQS errors as real SQS answers them.

``code`` is what the JSON protocol puts into ``__type``; ``query_code`` is the legacy
(query protocol) code, which the JSON protocol also sends in ``x-amzn-query-error`` and
which boto3 shows as ``Error.Code`` (SQS is ``awsQueryCompatible`` in botocore's model).
"""

from __future__ import annotations

_SQS = "AWS.SimpleQueueService."


class SqsError(Exception):
    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int = 400,
        query_code: str | None = None,
        sender: bool = True,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.query_code = query_code or code
        self.sender = sender
        self.headers = headers or {}  # sent with the error (Retry-After)


# --- parameters -------------------------------------------------------------------------


def invalid_parameter_value(message: str) -> SqsError:
    return SqsError("InvalidParameterValue", message)


def invalid_parameter_combination(message: str) -> SqsError:
    return SqsError("InvalidParameterCombination", message)


def missing_parameter(name: str) -> SqsError:
    return SqsError("MissingParameter", f"The request must contain the parameter {name}.")


def invalid_query_parameter(message: str) -> SqsError:
    return SqsError("InvalidQueryParameter", message)


def malformed_query_string(message: str) -> SqsError:
    return SqsError("MalformedQueryString", message, status=404)


def serialization_error(message: str) -> SqsError:
    """A JSON body that is not JSON (or not an object): what SQS's JSON front answers."""
    return SqsError("SerializationException", message, query_code="InvalidParameterValue")


def invalid_action(action: str) -> SqsError:
    return SqsError("InvalidAction", f"The action {action} is not valid for this endpoint.")


def unsupported_operation(message: str) -> SqsError:
    return SqsError("UnsupportedOperation", message, query_code=_SQS + "UnsupportedOperation")


def invalid_attribute_name(name: str) -> SqsError:
    return SqsError("InvalidAttributeName", f"Unknown Attribute {name}.")


def invalid_attribute_value(message: str) -> SqsError:
    return SqsError("InvalidAttributeValue", message)


def invalid_message_contents(message: str) -> SqsError:
    return SqsError("InvalidMessageContents", message)


def request_too_large(limit: int) -> SqsError:
    return SqsError(
        "RequestEntityTooLarge", f"The request is larger than {limit} bytes.", status=413
    )


def over_limit(message: str) -> SqsError:
    return SqsError("OverLimit", message, status=403)


# --- queues -------------------------------------------------------------------------------


def queue_does_not_exist(name: str | None = None) -> SqsError:
    # Real SQS says the same whatever the queue: it does not tell which names exist.
    del name
    return SqsError(
        "QueueDoesNotExist",
        "The specified queue does not exist.",
        query_code=_SQS + "NonExistentQueue",
    )


def queue_name_exists(attributes: list[str]) -> SqsError:
    return SqsError(
        "QueueNameExists",
        f"A queue already exists with the same name and a different value for attribute(s) "
        f"{', '.join(attributes)}.",
        query_code="QueueAlreadyExists",
    )


def queue_deleted_recently(name: str) -> SqsError:
    return SqsError(
        "QueueDeletedRecently",
        f"You must wait 60 seconds after deleting a queue before you can create another "
        f"with the same name ({name}).",
        query_code=_SQS + "QueueDeletedRecently",
    )


def purge_queue_in_progress(name: str) -> SqsError:
    return SqsError(
        "PurgeQueueInProgress",
        f"Only one PurgeQueue operation on {name} is allowed every 60 seconds.",
        status=403,
        query_code=_SQS + "PurgeQueueInProgress",
    )


# --- batches ------------------------------------------------------------------------------


def empty_batch_request(entry_type: str) -> SqsError:
    """``entry_type``: the request's entry shape (DeleteMessageBatchRequestEntry, ...)."""
    return SqsError(
        "EmptyBatchRequest",
        f"There should be at least one {entry_type} in the request.",
        query_code=_SQS + "EmptyBatchRequest",
    )


def too_many_entries_in_batch_request(n: int) -> SqsError:
    return SqsError(
        "TooManyEntriesInBatchRequest",
        f"Maximum number of entries per request are 10. You have sent {n}.",
        query_code=_SQS + "TooManyEntriesInBatchRequest",
    )


def batch_entry_ids_not_distinct(entry_id: str) -> SqsError:
    return SqsError(
        "BatchEntryIdsNotDistinct",
        f"Id {entry_id} repeated.",
        query_code=_SQS + "BatchEntryIdsNotDistinct",
    )


def invalid_batch_entry_id(entry_id: str) -> SqsError:
    return SqsError(
        "InvalidBatchEntryId",
        f"A batch entry id can only contain alphanumeric characters, hyphens and "
        f"underscores. It can be at most 80 letters long ({entry_id!r}).",
        query_code=_SQS + "InvalidBatchEntryId",
    )


def batch_request_too_long(limit: int) -> SqsError:
    return SqsError(
        "BatchRequestTooLong",
        f"Batch requests cannot be longer than {limit} bytes.",
        query_code=_SQS + "BatchRequestTooLong",
    )


# --- messages -----------------------------------------------------------------------------


def receipt_handle_is_invalid(handle: str | None = None) -> SqsError:
    shown = "The input receipt handle" if handle is None else f'The input receipt handle "{handle}"'
    return SqsError(
        "ReceiptHandleIsInvalid",
        f"{shown} is not a valid receipt handle.",
        query_code="ReceiptHandleIsInvalid",
    )


def message_not_inflight() -> SqsError:
    return SqsError(
        "MessageNotInflight",
        "The message referred to isn't in flight.",
        query_code=_SQS + "MessageNotInflight",
    )


# --- authentication -----------------------------------------------------------------------


def missing_authentication_token() -> SqsError:
    return SqsError(
        "MissingAuthenticationToken",
        "Request is missing Authentication Token",
        status=403,
    )


def incomplete_signature(message: str) -> SqsError:
    return SqsError("IncompleteSignature", message, status=400)


def invalid_client_token_id() -> SqsError:
    return SqsError(
        "InvalidClientTokenId",
        "The security token included in the request is invalid.",
        status=403,
    )


def signature_does_not_match() -> SqsError:
    return SqsError(
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. "
        "Check your AWS Secret Access Key and signing method. Consult the service "
        "documentation for details.",
        status=403,
    )


def signature_does_not_match_because(message: str) -> SqsError:
    """A scope or time that does not fit: AWS answers these as SignatureDoesNotMatch too
    (e.g. "Signature expired: 20150619T100249Z is now earlier than ... - 15 min.)")."""
    return SqsError("SignatureDoesNotMatch", message, status=403)


def request_expired(message: str) -> SqsError:
    """A presigned URL past its X-Amz-Expires (SQS's Common Errors: RequestExpired, 400)."""
    return SqsError("RequestExpired", message, status=400)


def access_denied(message: str = "Access to the resource is denied.") -> SqsError:
    return SqsError("AccessDenied", message, status=403)


def internal_error() -> SqsError:
    return SqsError(
        "InternalError",
        "We encountered an internal error. Please try again.",
        status=500,
        sender=False,
    )


def throttling(message: str, retry_after: str) -> SqsError:
    """The account is over its request budget (cassieq.api.rate_limit): botocore and the
    other AWS SDKs retry ThrottlingException with back-off."""
    return SqsError(
        "ThrottlingException", message, status=429, headers={"Retry-After": retry_after}
    )


def service_unavailable() -> SqsError:
    return SqsError(
        "ServiceUnavailable",
        "The request has failed due to a temporary failure of the server.",
        status=503,
        sender=False,
    )
