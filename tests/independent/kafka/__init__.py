"""An independent, in-memory, single-broker Kafka-compatible server (client-facing core).

Written from the Kafka protocol documentation and specs/kafka.md only,
as a second reading for the wirecheck conformance suite.  Run with
`python -m tests.independent.kafka --port 0 --ready-file ready.json`.
"""
