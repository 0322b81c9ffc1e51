"""Executable specifications of the wire protocols: scapy layers, clause catalogues, error-code tables.

Nothing in this package does I/O. Each protocol is a sub-package exposing ``SPEC`` (a
:class:`protocols.registry.ProtocolSpec`); :func:`protocols.registry.all_specs` finds them.
"""
