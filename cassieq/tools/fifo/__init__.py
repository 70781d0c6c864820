"""`cassieq fifo-check`: issue 37's acceptance of FIFO queues through the SQS endpoint.

Modules, in the order a run uses them: ``events`` (what the workload records: every send
attempt and every delivery with its ack), ``workload`` (boto3, unchanged: sends in order per
group, consumers that leave some leases to expire), ``checker`` (the verdicts drawn from the
events alone, pure), ``run`` (servers, faults and the run end to end) and ``report`` (figures
for people, one JSON object for scripts).
"""
