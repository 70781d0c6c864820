# CASSIEQ_URL, CASSIEQ_ACCOUNT and CASSIEQ_KEY name the server, the account and its key.
cassieq queue create events >/dev/null
cassieq subscription create events billing --start earliest --json | jq -c '{name, start}'
# -> {"name":"billing","start":"earliest"}
cassieq put events "signed up" >/dev/null
cassieq put events "paid" >/dev/null
# Prints each message (id, sentAt, body, position) and the next position; --commit then
# moves the subscription past them.
cassieq read events billing --limit 10 --commit --json | jq -c '[.messages[].body], .committed'
# -> ["signed up","paid"]
# -> true
cassieq subscription list events --json | jq -c '[.subscriptions[] | {name, lag}]'
# -> [{"name":"billing","lag":0}]
cassieq seek events billing --to earliest >/dev/null   # or --time 2026-11-27T09:00:00Z, --position P
cassieq read events billing --json | jq -c '[.messages[].body]'
# -> ["signed up","paid"]
cassieq subscription delete events billing --json
# -> {"queueName": "events", "deleted": "billing"}
