"""Independent dev-mode Barco / PolarStreams broker (written from the research notes only)."""
