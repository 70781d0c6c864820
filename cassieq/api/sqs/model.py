"""SQS's service model, as botocore ships it: the actions, their input and output shapes.

Both codecs are driven by it, so every action's parameters are decoded and checked the same
way. The JSON model carries no query-protocol names, so the few that differ (flattened
lists and maps, named after their items) are in the table below.
"""

from __future__ import annotations

import functools

from botocore.loaders import Loader
from botocore.model import OperationModel, ServiceModel

API_VERSION = "2012-11-05"
XML_NAMESPACE = f"http://queue.amazonaws.com/doc/{API_VERSION}/"
TARGET_PREFIX = "AmazonSQS."

# Query protocol: a flattened list's items are <item name>.N (and so many <item name>
# elements in XML), by the list's shape.
LIST_ITEM = {
    "AWSAccountIdList": "AWSAccountId",
    "ActionNameList": "ActionName",
    "AttributeNameList": "AttributeName",
    "BatchResultErrorEntryList": "BatchResultErrorEntry",
    "BinaryList": "BinaryListValue",
    "ChangeMessageVisibilityBatchRequestEntryList": "ChangeMessageVisibilityBatchRequestEntry",
    "ChangeMessageVisibilityBatchResultEntryList": "ChangeMessageVisibilityBatchResultEntry",
    "DeleteMessageBatchRequestEntryList": "DeleteMessageBatchRequestEntry",
    "DeleteMessageBatchResultEntryList": "DeleteMessageBatchResultEntry",
    "ListMessageMoveTasksResultEntryList": "ListMessageMoveTasksResultEntry",
    "MessageAttributeNameList": "MessageAttributeName",
    "MessageList": "Message",
    "MessageSystemAttributeList": "MessageSystemAttributeName",
    "QueueUrlList": "QueueUrl",
    "SendMessageBatchRequestEntryList": "SendMessageBatchRequestEntry",
    "SendMessageBatchResultEntryList": "SendMessageBatchResultEntry",
    "StringList": "StringListValue",
    "TagKeyList": "TagKey",
}
# A flattened map's entries are <entry>.N.<key name> / <entry>.N.<value name>, by shape.
MAP_ENTRY = {
    "MessageBodyAttributeMap": ("MessageAttribute", "Name", "Value"),
    "MessageBodySystemAttributeMap": ("MessageSystemAttribute", "Name", "Value"),
    "MessageSystemAttributeMap": ("Attribute", "Name", "Value"),
    "QueueAttributeMap": ("Attribute", "Name", "Value"),
    "TagMap": ("Tag", "Key", "Value"),
}


@functools.cache
def service() -> ServiceModel:
    return ServiceModel(Loader().load_service_model("sqs", "service-2", API_VERSION), "sqs")


@functools.cache
def action_names() -> frozenset[str]:
    return frozenset(service().operation_names)


def operation(action: str) -> OperationModel | None:
    if action not in action_names():
        return None
    return service().operation_model(action)


def list_item_name(shape_name: str, member_name: str) -> str:
    return LIST_ITEM.get(shape_name, member_name)


def map_entry_names(shape_name: str, member_name: str) -> tuple[str, str, str]:
    return MAP_ENTRY.get(shape_name, (member_name, "Name", "Value"))
