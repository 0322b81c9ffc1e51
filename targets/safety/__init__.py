"""The safety workload: real clients write unique values to a target under faults and record a history
(reports/safety/history.py) the checker judges (reports/safety/checker.py).

proxy.py       a loopback TCP proxy between the clients and the target that delays, drops, resets or black-holes
               connections when told; kafka_address.py makes a Kafka target's answers name the proxy
faults.py      the fault schedule (nemesis): target restarts (kill -9 of the reference broker, or the user's
               --target-restart command), SIGSTOP/SIGCONT of --target-pid, proxy windows; each window recorded
kafka.py       the Kafka workload (confluent-kafka: idempotent sends, transactions, read_committed polls, client
               crashes, the final read); kafka_python.py: the same operations with kafka-python in some slots
barco.py       the Barco workload (httpx: HTTP/1.1 produces, consumer polls over h2c and HTTP/1.1); barco_address.py
               rewrites discovery's ports to the proxy's
rustlog.py     the RustLog workload (the suite's own JSON framing over a socket: no third-party client exists)
command.py     ``wirecheck safety PROTOCOL ...``: options, the reference broker, the run, the report, the exit code
"""
