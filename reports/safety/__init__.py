"""The safety workload's history (history.py: the JSON-lines format) and its checker (checker.py: the anomalies of
Jepsen's Kafka queue workload, named with the operations that witness them), and the report of one run
(report.py)."""
