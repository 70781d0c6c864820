"""An Amazon SQS compatible endpoint (JSON 1.0 and query protocols, SigV4) over the engine."""
