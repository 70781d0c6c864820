B2=http://127.0.0.1:8080/api/v2/accounts/dev
A="Authorization: Key $KEY"; J='content-type: application/json'
curl -s -XPUT -H "$A" -H "$J" $B2/queues/orders -d '{}' >/dev/null
curl -s -XPOST -H "$A" -H "$J" $B2/queues/orders/messages -d '{"messages": [
  {"body": "order 1"}, {"body": "order 2"}, {"body": "order 3"}]}' >/dev/null
# An ordered subscription from the oldest message still stored (start: "latest", the
# default, would begin with the next message sent).
curl -s -XPUT -H "$A" -H "$J" $B2/queues/orders/subscriptions/audit \
  -d '{"mode": "ordered", "start": "earliest"}' | jq -c '{name, mode, start}'
# -> {"name":"audit","mode":"ordered","start":"earliest"}
# Read: the messages after the committed position, each with the position just after it.
PAGE=$(curl -s -H "$A" "$B2/queues/orders/subscriptions/audit/messages?limit=2")
echo "$PAGE" | jq -c '[.messages[].body]'
# -> ["order 1","order 2"]
# A read moves nothing: commit the page's next once its messages are processed (with
# expected, only if no one else moved the position meanwhile).
STORED=$(curl -s -H "$A" $B2/queues/orders/subscriptions/audit | jq -r .position)
NEXT=$(echo "$PAGE" | jq -r .next)
curl -s -XPOST -H "$A" -H "$J" $B2/queues/orders/subscriptions/audit/position \
  -d "{\"position\": \"$NEXT\", \"expected\": \"$STORED\"}" | jq -c '.position == "'"$NEXT"'"'
# -> true
# The same commit again: the stored position is no longer the expected one.
curl -s -XPOST -H "$A" -H "$J" $B2/queues/orders/subscriptions/audit/position \
  -d "{\"position\": \"$NEXT\", \"expected\": \"$STORED\"}" | jq -c .code
# -> 409
curl -s -H "$A" "$B2/queues/orders/subscriptions/audit/messages?limit=10" | jq -c '[.messages[].body]'
# -> ["order 3"]
curl -s -H "$A" $B2/queues/orders/subscriptions/audit | jq -c '{lag}'
# -> {"lag":1}
# Replay: back to the oldest message still stored (or to a time, or a position kept).
curl -s -XPOST -H "$A" -H "$J" $B2/queues/orders/subscriptions/audit/seek -d '{"to": "earliest"}' >/dev/null
curl -s -H "$A" "$B2/queues/orders/subscriptions/audit/messages?limit=10" | jq -c '[.messages[].body]'
# -> ["order 1","order 2","order 3"]
curl -s -XPOST -H "$A" -H "$J" $B2/queues/orders/subscriptions/audit/seek \
  -d '{"to": {"time": "2026-11-27T09:00:00Z"}}' | jq -c '{name, position: (.position | type)}'
# -> {"name":"audit","position":"string"}
# The queue's own consumers still get every message: a subscription takes none from them.
curl -s -XPOST -H "$A" -H "$J" $B2/queues/orders/messages/receive -d '{"maxMessages": 10}' |
  jq -c '[.messages[].body] | sort'
# -> ["order 1","order 2","order 3"]
