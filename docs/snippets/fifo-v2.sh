B2=http://127.0.0.1:8080/api/v2/accounts/dev
A="Authorization: Key $KEY"; J='content-type: application/json'
# A FIFO queue; fifo (and a FIFO queue's partitions) cannot change once it is created.
curl -s -XPUT -H "$A" -H "$J" $B2/queues/ledger -d '{"fifo": true, "contentBasedDeduplication": true}' |
  jq -c '{fifo, contentBasedDeduplication}'
# -> {"fifo":true,"contentBasedDeduplication":true}
# Every message names its group; a group is delivered in send order.
curl -s -XPOST -H "$A" -H "$J" $B2/queues/ledger/messages -d '{"messages": [
  {"body": "open account 7", "groupId": "account-7", "deduplicationId": "a7-open"},
  {"body": "deposit 100", "groupId": "account-7", "deduplicationId": "a7-deposit-1"},
  {"body": "open account 9", "groupId": "account-9"}]}' | jq -c '[.messages[] | {sequenceNumber, duplicate}]'
# -> [{"sequenceNumber":"00000000000000000000","duplicate":false},
#     {"sequenceNumber":"00000000000000000001","duplicate":false}, {..."duplicate":false}]
# The send retried (its answer was lost): the same deduplicationId within 5 minutes is not
# stored again; the answer is the first message's, flagged.
curl -s -XPOST -H "$A" -H "$J" $B2/queues/ledger/messages -d '{"messages": [
  {"body": "deposit 100", "groupId": "account-7", "deduplicationId": "a7-deposit-1"}]}' |
  jq -c '[.messages[] | {sequenceNumber, duplicate}]'
# -> [{"sequenceNumber":"00000000000000000001","duplicate":true}]
# A receive gets as many of a group as it can, each group in send order (as SQS answers).
GOT=$(curl -s -XPOST -H "$A" -H "$J" $B2/queues/ledger/messages/receive -d '{"maxMessages": 10, "receiveAttemptId": "poll-1"}')
echo "$GOT" | jq -c '[.messages[] | {body, groupId}] | group_by(.groupId) | map(map(.body))'
# -> [["open account 7","deposit 100"],["open account 9"]]
# Nothing more of a group while messages of it are in flight (until acked, or their lease ends).
curl -s -XPOST -H "$A" -H "$J" $B2/queues/ledger/messages/receive -d '{"maxMessages": 10}' |
  jq -c '[.messages[] | .body]'
# -> []
ACKS=$(echo "$GOT" | jq '{popReceipts: [.messages[].popReceipt]}')
curl -s -XPOST -H "$A" -H "$J" $B2/queues/ledger/messages/ack -d "$ACKS" | jq -c '.failed'
# -> []
