B2=http://127.0.0.1:8080/api/v2/accounts/dev
A="Authorization: Key $KEY"; J='content-type: application/json'
curl -s -w '\n%{http_code}\n' -XPUT -H "$A" -H "$J" $B2/queues/jobs -d '{}'
# {"queueName": "jobs", ... every option}, then 201 created (200: it exists with these options; 409: with others, e.g. the v1
# session's orders, made with v1's default strictFifo false)
# A batch: ids (the messages' monotons) in request order.
curl -s -XPOST -H "$A" -H "$J" $B2/queues/jobs/messages -d '{"messages": [
  {"body": "order 1", "attributes": {"kind": "new"}},
  {"body": "order 2", "delaySeconds": 5}]}'
echo
# -> 201 {"messages": [{"id": "0", "messageTag": "..."}, {"id": "1", "messageTag": "..."}]}
# Up to 10, waiting up to 20 s for the first (answered as soon as one is there).
GOT=$(curl -s -XPOST -H "$A" -H "$J" $B2/queues/jobs/messages/receive -d '{"maxMessages": 10, "waitSeconds": 20}')
echo "$GOT"
# -> 200 {"messages": [{"id": "0", "body": "order 1", "attributes": {"kind": "new"},
#         "popReceipt": "...", "deliveryCount": 1, "messageTag": "...",
#         "firstDeliveredAt": "2026-11-22T21:45:54.123Z", "sentAt": "2026-11-22T21:45:50.001Z"}]}
ACKS=$(echo "$GOT" | jq '{popReceipts: [.messages[].popReceipt]}')   # every receipt received
curl -s -XPOST -H "$A" -H "$J" $B2/queues/jobs/messages/ack -d "$ACKS"
echo
# -> 200 {"acked": ["..."], "failed": []}
