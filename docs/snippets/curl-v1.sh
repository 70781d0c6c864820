KEY=...   # "key primary" from the banner
B=http://127.0.0.1:8080/api/v1/accounts/dev
A="Authorization: Key $KEY"
curl -s -w '%{http_code}\n' -XPOST -H "$A" -H 'content-type: application/json' $B/queues -d '{"queueName":"orders"}'
# 201 with an empty body (200 when the queue existed already)
curl -s -w '%{http_code}\n' -XPOST -H "$A" -H 'content-type: text/plain' $B/queues/orders/messages -d 'hi'
# 201: the body is the message, kept exactly as sent (-d '"hi"' would keep the quotes)
NEXT=$(curl -s -H "$A" "$B/queues/orders/messages/next?invisibilityTimeSeconds=30")
echo "$NEXT"
# {"popReceipt": "...", "message": "hi", "deliveryCount": 0, "messageTag": "..."}
R=$(echo "$NEXT" | jq -r .popReceipt)   # the receipt of this delivery acks it
curl -s -w '%{http_code}\n' -XDELETE -H "$A" -G "$B/queues/orders/messages" --data-urlencode "popReceipt=$R"
# 204: acked
curl -s -w '%{http_code}\n' -H "$A" "$B/queues/orders/messages/next"
# 204 with no body: no message is visible (the queue is empty)
