import os

import boto3

sqs = boto3.client(
    "sqs",
    endpoint_url=os.environ.get("CASSIEQ_URL", "http://127.0.0.1:8080"),
    region_name="us-east-1",
    aws_access_key_id=os.environ.get("CASSIEQ_ACCOUNT", "dev"),  # the account
    aws_secret_access_key=os.environ["CASSIEQ_KEY"],  # its key
)
url = sqs.create_queue(
    QueueName="ledger.fifo",
    Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"},
)["QueueUrl"]
for body in ("open account 7", "deposit 100"):
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageGroupId="account-7",
        MessageDeduplicationId=f"a7-{body}".replace(" ", "-"),
    )
    print(body, sent["SequenceNumber"])  # increasing within the group
# As many of a group as the answer holds, in send order; none of the group again until
# they are deleted (or their visibility timeout ends).
got = sqs.receive_message(
    QueueUrl=url,
    MaxNumberOfMessages=10,
    AttributeNames=["MessageGroupId", "SequenceNumber"],
    ReceiveRequestAttemptId="poll-1",
)
for message in got["Messages"]:
    print("received", message["Body"], message["Attributes"]["MessageGroupId"])
assert "Messages" not in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
for message in got["Messages"]:
    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
