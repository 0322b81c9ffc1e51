"""Kafka conformance cases: framing and headers, the advertised-versus-implemented matrix, hostile frames."""
