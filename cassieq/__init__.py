"""cassieq: a distributed message queue on Apache Cassandra."""

__version__ = "0.1.0"
