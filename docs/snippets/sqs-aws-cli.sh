export AWS_ACCESS_KEY_ID=dev AWS_SECRET_ACCESS_KEY=$KEY AWS_DEFAULT_REGION=us-east-1
aws --endpoint-url http://127.0.0.1:8080 sqs create-queue --queue-name greetings
aws --endpoint-url http://127.0.0.1:8080 sqs send-message \
    --queue-url http://127.0.0.1:8080/dev/greetings --message-body hi
