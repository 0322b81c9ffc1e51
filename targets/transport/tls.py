"""Client-side TLS for any TCP transport: the one place an ``ssl.SSLContext`` is built.

Many real servers only listen on TLS, so every transport takes an optional context. The transcript records
the plaintext (what the protocol says), not TLS records.
"""

from __future__ import annotations

import ssl


def client_context(ca_file: str | None = None, verify: bool = True, alpn: list[str] | None = None) -> ssl.SSLContext:
    """A client context: trust ``ca_file`` (or the system store), or verify nothing when ``verify`` is False.

    ``verify=False`` is for test targets with self-signed certificates and nothing else. ``alpn`` names the
    application protocols to offer (``["h2"]`` for HTTP/2 over TLS).
    """
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file)
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if alpn:
        context.set_alpn_protocols(alpn)
    return context
