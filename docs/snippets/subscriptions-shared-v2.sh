B2=http://127.0.0.1:8080/api/v2/accounts/dev
A="Authorization: Key $KEY"; J='content-type: application/json'
curl -s -XPUT -H "$A" -H "$J" $B2/queues/payments -d '{}' >/dev/null
# Two services, each its own shared subscription: both get every message.
for s in billing emails; do
  curl -s -XPUT -H "$A" -H "$J" $B2/queues/payments/subscriptions/$s \
    -d '{"mode": "shared", "start": "latest"}' | jq -c '{name, mode}'
done
# -> {"name":"billing","mode":"shared"}
# -> {"name":"emails","mode":"shared"}
curl -s -XPOST -H "$A" -H "$J" $B2/queues/payments/messages -d '{"messages": [
  {"body": "paid 1"}, {"body": "paid 2"}]}' >/dev/null
# Receive as from the queue itself (the same body, the same answer), with a lease.
GOT=$(curl -s -XPOST -H "$A" -H "$J" $B2/queues/payments/subscriptions/billing/receive \
  -d '{"maxMessages": 10, "visibilityTimeoutSeconds": 30}')
echo "$GOT" | jq -c '[.messages[] | {body, deliveryCount}]'
# -> [{"body":"paid 1","deliveryCount":1},{"body":"paid 2","deliveryCount":1}]
ACK=$(echo "$GOT" | jq -c '{popReceipts: [.messages[].popReceipt]}')
curl -s -XPOST -H "$A" -H "$J" $B2/queues/payments/subscriptions/billing/ack -d "$ACK" |
  jq -c '{acked: (.acked | length), failed}'
# -> {"acked":2,"failed":[]}
# The other subscription still has both, and so do the queue's own consumers.
curl -s -XPOST -H "$A" -H "$J" $B2/queues/payments/subscriptions/emails/receive \
  -d '{"maxMessages": 10}' | jq -c '[.messages[].body]'
# -> ["paid 1","paid 2"]
curl -s -H "$A" $B2/queues/payments/subscriptions/billing | jq -c '{mode, lag}'
# -> {"mode":"shared","lag":0}
# A receipt of billing is refused in emails (and on the queue): 400 in "failed".
FIRST=$(echo "$GOT" | jq -c '{popReceipts: [.messages[0].popReceipt]}')
curl -s -XPOST -H "$A" -H "$J" $B2/queues/payments/subscriptions/emails/ack -d "$FIRST" |
  jq -c '[.failed[].code]'
# -> [400]
# Replay: a seek delivers every message from there again; receipts of before are stale.
curl -s -XPOST -H "$A" -H "$J" $B2/queues/payments/subscriptions/billing/seek \
  -d '{"to": "earliest"}' >/dev/null
curl -s -XPOST -H "$A" -H "$J" $B2/queues/payments/subscriptions/billing/receive \
  -d '{"maxMessages": 10}' | jq -c '[.messages[] | {body, deliveryCount}]'
# -> [{"body":"paid 1","deliveryCount":1},{"body":"paid 2","deliveryCount":1}]
