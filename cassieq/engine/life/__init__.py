"""A message's life, in the order it lives it: put (and the monotons it takes), receive
(take, redeliver, long poll), ack and visibility changes, expiry, dead letters and redrive
(one move routine), peek and purge."""
