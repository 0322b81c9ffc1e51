"""Capture conformance: passive checks of real traffic (pcap/pcapng) against the frame-level clauses.

``flows`` reads and reassembles TCP, ``detect`` tells the protocol, ``checks`` holds one module per protocol,
``analyze`` runs them on one flow, ``job`` is the Spark job and its outputs.
"""
