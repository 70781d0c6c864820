"""Who owns what: accounts and their keys (sealed at rest), the keyspace's own secrets, and
the queue directory (create, look up, change, delete a queue's definition)."""
