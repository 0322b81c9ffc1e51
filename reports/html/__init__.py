"""Static HTML writers: the conformance report and the capture report (no server, no external URLs)."""
