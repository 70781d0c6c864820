"""A queue's message policy, applied by the engine to every new message and every new body,
whatever API brought it (v1, v2, SQS): the size limit (``maxMessageBytes``) and the default
first-delivery delay (``delaySeconds``). Adapters only translate a refusal into their wire's
error; none of them decides it. (Before, v2 and SQS each checked and v1 checked neither: a
v1 put bypassed both.)
"""

from __future__ import annotations

from cassieq.engine.errors import InvalidArgument, MessageTooLarge
from cassieq.model import OutgoingMessage, QueueOptions, message_bytes, utf8_len

# The longest lease (or delay) a request may ask for, in seconds: a queue's and a shared
# subscription's alike.
MAX_INVISIBILITY_S = 7 * 24 * 3600


def check_seconds(name: str, value: int) -> None:
    """InvalidArgument naming ``name`` unless 0 <= ``value`` <= MAX_INVISIBILITY_S."""
    if not 0 <= value <= MAX_INVISIBILITY_S:
        raise InvalidArgument(f"{name} must be between 0 and {MAX_INVISIBILITY_S}")


def size_of(message: OutgoingMessage) -> int:
    """The bytes a message counts against maxMessageBytes: as its API counts them when it
    set ``size`` (SQS counts attribute types and decoded binary values), else body, names
    and values in UTF-8."""
    if message.size is not None:
        return message.size
    return message_bytes(message.body, message.attributes)


def check_message(options: QueueOptions, message: OutgoingMessage, index: int = 0) -> None:
    """Refuse a message over the queue's limit (``index``: its place in the request)."""
    size = size_of(message)
    if size > options.max_message_bytes:
        raise MessageTooLarge(
            f"messages[{index}]",
            size,
            options.max_message_bytes,
            " (body and attributes, UTF-8)",
        )


def check_body(options: QueueOptions, body: str, index: int = 0) -> None:
    """Refuse a new body (a visibility change's, a v1 update's) over the queue's limit."""
    size = utf8_len(body)
    if size > options.max_message_bytes:
        raise MessageTooLarge(f"entries[{index}].body", size, options.max_message_bytes)


def first_delay_ms(options: QueueOptions, message: OutgoingMessage) -> int:
    """The message's own delay, or the queue's delaySeconds when it gave none."""
    if message.delay_ms is None:
        return options.delay_seconds * 1000
    return message.delay_ms
