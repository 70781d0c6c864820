"""Both codecs: query-protocol requests as AWS's SQS API reference writes them, decoded to
the JSON protocol's shape; JSON bodies checked against the model; XML answers and errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from urllib.parse import parse_qsl

import pytest

from cassieq.api.sqs import errors, json_codec, query_codec
from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.model import XML_NAMESPACE, operation

NS = {"q": XML_NAMESPACE}


def query(action: str, text: str) -> dict[str, object]:
    flat = dict(parse_qsl(text, keep_blank_values=True))
    op = operation(action)
    assert op is not None
    return query_codec.decode(op.input_shape, flat)


def test_send_message_batch_as_in_the_api_reference() -> None:
    params = query(
        "SendMessageBatch",
        "Action=SendMessageBatch&QueueUrl=https://sqs.us-east-2.amazonaws.com/123456789012/MyQueue"
        "&SendMessageBatchRequestEntry.1.Id=test_msg_001"
        "&SendMessageBatchRequestEntry.1.MessageBody=test%20message%20body%201"
        "&SendMessageBatchRequestEntry.2.Id=test_msg_002"
        "&SendMessageBatchRequestEntry.2.MessageBody=test%20message%20body%202"
        "&SendMessageBatchRequestEntry.2.DelaySeconds=60"
        "&SendMessageBatchRequestEntry.2.MessageAttribute.1.Name=test_attribute_name_1"
        "&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue=test_attribute_value_1"
        "&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType=String"
        "&SendMessageBatchRequestEntry.2.MessageAttribute.2.Name=bin"
        "&SendMessageBatchRequestEntry.2.MessageAttribute.2.Value.BinaryValue=AAEC"
        "&SendMessageBatchRequestEntry.2.MessageAttribute.2.Value.DataType=Binary"
        "&Expires=2020-05-05T22%3A52%3A43PST&Version=2012-11-05",
    )
    assert params == {
        "QueueUrl": "https://sqs.us-east-2.amazonaws.com/123456789012/MyQueue",
        "Entries": [
            {"Id": "test_msg_001", "MessageBody": "test message body 1"},
            {
                "Id": "test_msg_002",
                "MessageBody": "test message body 2",
                "DelaySeconds": 60,
                "MessageAttributes": {
                    "test_attribute_name_1": {
                        "StringValue": "test_attribute_value_1",
                        "DataType": "String",
                    },
                    "bin": {"BinaryValue": b"\x00\x01\x02", "DataType": "Binary"},
                },
            },
        ],
    }


def test_create_queue_with_attributes_and_tags() -> None:
    params = query(
        "CreateQueue",
        "Action=CreateQueue&QueueName=MyQueue&Attribute.1.Name=DelaySeconds&Attribute.1.Value=45"
        "&Attribute.2.Name=VisibilityTimeout&Attribute.2.Value=3600"
        "&Tag.1.Key=QueueType&Tag.1.Value=Production&Version=2012-11-05",
    )
    assert params == {
        "QueueName": "MyQueue",
        "Attributes": {"DelaySeconds": "45", "VisibilityTimeout": "3600"},
        "tags": {"QueueType": "Production"},
    }


def test_receive_message_lists_and_untag_keys() -> None:
    params = query(
        "ReceiveMessage",
        "Action=ReceiveMessage&QueueUrl=u&AttributeName.1=All&MessageAttributeName.1=All"
        "&MessageAttributeName.2=color&MaxNumberOfMessages=5&VisibilityTimeout=15"
        "&WaitTimeSeconds=20",
    )
    assert params == {
        "QueueUrl": "u",
        "AttributeNames": ["All"],
        "MessageAttributeNames": ["All", "color"],
        "MaxNumberOfMessages": 5,
        "VisibilityTimeout": 15,
        "WaitTimeSeconds": 20,
    }
    assert query("UntagQueue", "QueueUrl=u&TagKey.2=b&TagKey.1=a") == {
        "QueueUrl": "u",
        "TagKeys": ["a", "b"],
    }


@pytest.mark.parametrize(
    ("action", "text", "code", "names"),
    [
        ("SendMessage", "QueueUrl=u", "MissingParameter", "MessageBody"),
        (
            "SendMessage",
            "QueueUrl=u&MessageBody=b&DelaySeconds=x",
            "InvalidParameterValue",
            "DelaySeconds",
        ),
        (
            "SendMessage",
            "QueueUrl=u&MessageBody=b&MessageAttribute.1.Name=n&MessageAttribute.1.Value.DataType=Binary"
            "&MessageAttribute.1.Value.BinaryValue=%%%",
            "InvalidParameterValue",
            "BinaryValue",
        ),
        ("TagQueue", "QueueUrl=u&Tag.1.Value=v", "MissingParameter", "Tag.1.Key"),
        (
            "SendMessage",
            "QueueUrl=u&MessageBody=b&MessageAttribute.1.Name=n",
            "MissingParameter",
            "Value",
        ),
    ],
)
def test_bad_query_parameters_are_sqs_errors(action: str, text: str, code: str, names: str) -> None:
    with pytest.raises(SqsError) as caught:
        query(action, text)
    assert caught.value.code == code
    assert names in caught.value.message


def test_pathological_names_are_ignored_not_scanned() -> None:
    # 100,000 dots in one name: skipped as no SQS parameter (a quadratic scan would hang).
    params = query("UntagQueue", "QueueUrl=u&TagKey.1=a&" + "TagKey" + ".1" * 100_000 + "=x")
    assert params == {"QueueUrl": "u", "TagKeys": ["a"]}


def test_json_decode_checks_types_and_decodes_blobs() -> None:
    op = operation("SendMessage")
    assert op is not None
    params = json_codec.decode(
        op.input_shape,
        b'{"QueueUrl":"u","MessageBody":"b","DelaySeconds":3,"Unknown":1,'
        b'"MessageAttributes":{"n":{"DataType":"Binary","BinaryValue":"aGk="}}}',
    )
    assert params == {
        "QueueUrl": "u",
        "MessageBody": "b",
        "DelaySeconds": 3,
        "MessageAttributes": {"n": {"DataType": "Binary", "BinaryValue": b"hi"}},
    }


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json", "SerializationException"),
        (b"[1]", "SerializationException"),
        (b'{"QueueUrl": 3, "MessageBody": "b"}', "SerializationException"),
        (b'{"QueueUrl": "u", "MessageBody": "b", "DelaySeconds": true}', "SerializationException"),
        (b'{"QueueUrl": "u"}', "MissingParameter"),
        (
            b'{"QueueUrl": "u", "MessageBody": "b", "MessageAttributes": {"n": {}}}',
            "MissingParameter",
        ),
        (b"[" * 5000 + b"]" * 5000, "SerializationException"),
    ],
)
def test_bad_json_bodies_are_sqs_errors(body: bytes, code: str) -> None:
    op = operation("SendMessage")
    assert op is not None
    with pytest.raises(SqsError) as caught:
        json_codec.decode(op.input_shape, body)
    assert caught.value.code == code


def test_xml_result_of_receive_message() -> None:
    op = operation("ReceiveMessage")
    assert op is not None
    result = {
        "Messages": [
            {
                "MessageId": "m1",
                "ReceiptHandle": "r<1>",
                "Body": "a & b\r\n",
                "Attributes": {"SentTimestamp": "1", "ApproximateReceiveCount": "2"},
                "MessageAttributes": {
                    "bin": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
                    "s": {"DataType": "String", "StringValue": "v"},
                },
            }
        ]
    }
    root = ET.fromstring(query_codec.encode("ReceiveMessage", op.output_shape, result, "rid-1"))
    assert root.tag == f"{{{XML_NAMESPACE}}}ReceiveMessageResponse"
    message = root.find("q:ReceiveMessageResult/q:Message", NS)
    assert message is not None
    assert message.findtext("q:Body", namespaces=NS) == "a & b\r\n"
    assert message.findtext("q:ReceiptHandle", namespaces=NS) == "r<1>"
    attrs = {
        a.findtext("q:Name", namespaces=NS): a.findtext("q:Value", namespaces=NS)
        for a in message.findall("q:Attribute", NS)
    }
    assert attrs == {"SentTimestamp": "1", "ApproximateReceiveCount": "2"}
    bin_attr = message.find("q:MessageAttribute[q:Name='bin']/q:Value", NS)
    assert bin_attr is not None
    assert bin_attr.findtext("q:BinaryValue", namespaces=NS) == "AAE="
    assert bin_attr.findtext("q:DataType", namespaces=NS) == "Binary"
    assert root.findtext("q:ResponseMetadata/q:RequestId", namespaces=NS) == "rid-1"


def test_xml_of_an_action_without_output_and_of_lists() -> None:
    delete = operation("DeleteQueue")
    assert delete is not None
    root = ET.fromstring(query_codec.encode("DeleteQueue", delete.output_shape, {}, "r"))
    assert [child.tag.split("}")[1] for child in root] == ["ResponseMetadata"]
    listing = operation("ListQueues")
    assert listing is not None
    root = ET.fromstring(
        query_codec.encode("ListQueues", listing.output_shape, {"QueueUrls": ["a", "b"]}, "r")
    )
    assert [e.text for e in root.findall("q:ListQueuesResult/q:QueueUrl", NS)] == ["a", "b"]


def test_errors_in_both_protocols() -> None:
    error = errors.queue_does_not_exist("q")
    root = ET.fromstring(query_codec.encode_error(error, "rid"))
    assert (
        root.findtext("q:Error/q:Code", namespaces=NS) == "AWS.SimpleQueueService.NonExistentQueue"
    )
    assert root.findtext("q:Error/q:Type", namespaces=NS) == "Sender"
    assert root.findtext("q:RequestId", namespaces=NS) == "rid"
    body, headers = json_codec.encode_error(error)
    assert body == (
        b'{"__type":"com.amazonaws.sqs#QueueDoesNotExist",'
        b'"message":"The specified queue does not exist."}'
    )
    assert headers == {"x-amzn-query-error": "AWS.SimpleQueueService.NonExistentQueue;Sender"}
