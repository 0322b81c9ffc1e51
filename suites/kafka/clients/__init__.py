"""Drivers of the real Kafka clients the ``clients`` cases run against the target (suites/kafka/test_clients.py).

Each driver runs in its own process (targets/clients.py), reads one job as JSON on stdin and prints what it
observed as one JSON line: ``python_driver.py`` for the Python libraries, ``kafkajs/driver.js`` for kafkajs; kcat
is driven from the case itself.
"""
