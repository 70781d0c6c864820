export AWS_ACCESS_KEY_ID=dev AWS_SECRET_ACCESS_KEY=$KEY AWS_DEFAULT_REGION=us-east-1
aws --endpoint-url http://127.0.0.1:8080 sqs create-queue --queue-name orders.fifo \
    --attributes FifoQueue=true,ContentBasedDeduplication=true
aws --endpoint-url http://127.0.0.1:8080 sqs send-message \
    --queue-url http://127.0.0.1:8080/dev/orders.fifo --message-body "order 1" \
    --message-group-id customer-7 --message-deduplication-id order-1
aws --endpoint-url http://127.0.0.1:8080 sqs receive-message \
    --queue-url http://127.0.0.1:8080/dev/orders.fifo \
    --attribute-names MessageGroupId SequenceNumber
