"""An independent RustLog (JSON frames) broker, written from the protocol
document only, for testing the wirecheck RustLog suite.  See README.md."""
