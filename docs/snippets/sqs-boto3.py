import json
import os

import boto3

# The SQS endpoint is the API's own port (POST /, AWS JSON 1.0 or the query protocol).
# Access key id: the account ("dev": its primary key; "dev.<keyName>": another of its
# keys); secret access key: that key (`cassieq dev` prints it). Requests are SigV4-signed.
sqs = boto3.client(
    "sqs",
    endpoint_url=os.environ.get("CASSIEQ_URL", "http://127.0.0.1:8080"),
    region_name="us-east-1",
    aws_access_key_id=os.environ.get("CASSIEQ_ACCOUNT", "dev"),
    aws_secret_access_key=os.environ["CASSIEQ_KEY"],
)
dlq = sqs.create_queue(QueueName="shipments-dlq")["QueueUrl"]
dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
    "QueueArn"
]
policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5})
url = sqs.create_queue(
    QueueName="shipments",
    Attributes={"VisibilityTimeout": "30", "RedrivePolicy": policy},
    tags={"team": "shop"},
)["QueueUrl"]
sqs.send_message(
    QueueUrl=url,
    MessageBody="shipment 1",
    MessageAttributes={"kind": {"DataType": "String", "StringValue": "new"}},
)
got = sqs.receive_message(
    QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=5, MessageAttributeNames=["All"]
)
for message in got.get("Messages", []):
    print(message["Body"], message["MessageAttributes"]["kind"]["StringValue"])
    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
