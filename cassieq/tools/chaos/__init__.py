"""`cassieq chaos`: a bounded soak of two servers on a Cassandra cluster, with faults.

Modules, in the order a scenario uses them: ``options`` (what to run), ``servers`` (the
``cassieq serve`` processes), ``client`` (signed HTTP calls, each one timed), ``ledger``
(every put, delivery and ack, and the verdicts drawn from them), ``faults`` (the scenario's
kills and restarts), ``workload`` (producers, consumers, drain), ``scenario`` (one run end to
end), ``report`` (tables and JSON) and ``command`` (the click command).
"""
