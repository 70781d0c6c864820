"""What keeps queues healthy with no request asking: repair (seal, finalize, re-publish
late writes), stall healing, queue deletion, and the leases that give each one owner."""
