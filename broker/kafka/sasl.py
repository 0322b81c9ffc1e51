"""SASL authentication on the Kafka protocol (KIP-43 SaslHandshake, KIP-152 SaslAuthenticate).

Enabled by ``--kafka-sasl-users FILE`` (one ``user:password`` a line); without it the listener stays open and
neither API is advertised. Per connection, as Kafka's SaslServerAuthenticator does it:
- before authentication only ApiVersions and SaslHandshake are served (then SaslAuthenticate once a mechanism is
  chosen); anything else closes the connection (IllegalSaslStateException);
- SaslHandshake names a mechanism: an enabled one is chosen; another gets UNSUPPORTED_SASL_MECHANISM (33) with
  the enabled list, then the connection closes. After v1 the tokens travel in SaslAuthenticate; after v0 they
  travel raw, each an INT32 size then the token, until authentication completes (a failure closes at once).
  librdkafka up to 2.0 offers SASL only to a broker that advertises v0, as Kafka does (0-1);
- PLAIN (RFC 4616) takes one SaslAuthenticate; SCRAM-SHA-256/512 (RFC 5802, through scramp) two;
- a failed exchange answers SASL_AUTHENTICATION_FAILED (58) and closes the connection.
"""

from __future__ import annotations

import base64
import hmac
from dataclasses import dataclass, field
from pathlib import Path

from scramp import ScramException, ScramMechanism
from wirecheck.broker.kafka.api_keys import ApiKey
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.errors import (ILLEGAL_SASL_STATE, NONE, SASL_AUTHENTICATION_FAILED,
                                           UNSUPPORTED_SASL_MECHANISM)

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_ITERATIONS = 4096  # Kafka's minimum for SCRAM credentials
FAILED_MESSAGE = "Authentication failed: Invalid username or password"


def read_users(path: str) -> dict[str, str]:
    """``user:password`` lines; blank lines and ``#`` comments are skipped."""
    users = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, password = line.partition(":")
        if not sep or not name:
            raise ValueError(f"{path}: expected user:password, got {line!r}")
        users[name] = password
    return users


class Authenticator:
    """The broker-wide SASL settings: users and the SCRAM credentials derived from them."""

    def __init__(self, users: dict[str, str], faults: KafkaFaults):
        self.users = users
        self.faults = faults
        self.scram = {name: ScramMechanism(name) for name in MECHANISMS if name.startswith("SCRAM")}
        self.credentials = {(mech, user): m.make_auth_info(password, iteration_count=SCRAM_ITERATIONS)
                            for mech, m in self.scram.items() for user, password in users.items()}

    def connection(self) -> "SaslConnection":
        return SaslConnection(self)


@dataclass
class SaslConnection:
    """One connection's authentication state."""

    auth: Authenticator
    mechanism: str | None = None
    authenticated: bool = False
    scram_server: object | None = None
    steps: int = 0
    closing: bool = field(default=False)  # the answer just given is the last on this connection
    raw_tokens: bool = False  # SaslHandshake v0 chose the mechanism: tokens follow without Kafka framing

    def allows(self, api_key: int) -> bool:
        if self.authenticated or api_key in (ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE):
            return True
        if api_key == ApiKey.SASL_AUTHENTICATE and self.mechanism is not None:
            return True
        return self.auth.faults.sasl_unauthenticated_served

    def handshake(self, req: dict, version: int) -> dict:
        enabled = list(MECHANISMS)
        if self.authenticated or self.mechanism is not None:
            self.closing = True
            return {"ErrorCode": ILLEGAL_SASL_STATE, "Mechanisms": enabled}
        if req["Mechanism"] not in MECHANISMS and not self.auth.faults.sasl_unsupported_mechanism_accepted:
            self.closing = True
            return {"ErrorCode": UNSUPPORTED_SASL_MECHANISM, "Mechanisms": enabled}
        self.mechanism = req["Mechanism"] if req["Mechanism"] in MECHANISMS else "PLAIN"
        self.raw_tokens = version == 0
        return {"ErrorCode": NONE, "Mechanisms": enabled}

    def authenticate(self, req: dict) -> dict:
        token = req["AuthBytes"] or b""
        try:
            reply = self._plain(token) if self.mechanism == "PLAIN" else self._scram(token)
        except (ScramException, ValueError, UnicodeDecodeError, KeyError):
            reply = None
        if reply is None:
            self.closing = True
            return {"ErrorCode": SASL_AUTHENTICATION_FAILED, "ErrorMessage": FAILED_MESSAGE, "AuthBytes": b"",
                    "SessionLifetimeMs": 0}
        return {"ErrorCode": NONE, "ErrorMessage": None, "AuthBytes": reply, "SessionLifetimeMs": 0}

    def raw_token(self, token: bytes) -> bytes | None:
        """One raw token after SaslHandshake v0: the reply token, or None when authentication failed."""
        answer = self.authenticate({"AuthBytes": token})
        if answer["ErrorCode"] != NONE:
            return None
        self.raw_tokens = not self.authenticated
        return answer["AuthBytes"]

    def _plain(self, token: bytes) -> bytes | None:
        authzid, user, password = token.decode("utf-8").split("\0")
        known = self.auth.users.get(user)
        if known is None or (authzid and authzid != user):
            return None
        if not authzid and self.auth.faults.sasl_plain_authzid_required:
            return None  # fault: RFC 4616's empty authzid (act as the authcid) refused
        if not hmac.compare_digest(known.encode(), password.encode()) and \
                not self.auth.faults.sasl_wrong_password_accepted:
            return None
        self.authenticated = True
        return b""

    def _scram(self, token: bytes) -> bytes | None:
        self.steps += 1
        if self.steps == 1:
            mechanism = self.mechanism

            def credentials(user: str):
                return self.auth.credentials[(mechanism, user)]  # KeyError: an unknown user fails the exchange

            self.scram_server = self.auth.scram[mechanism].make_server(credentials)
            self.scram_server.set_client_first(token.decode("utf-8"))
            return self.scram_server.get_server_first().encode()
        if self.steps == 2:
            try:
                self.scram_server.set_client_final(token.decode("utf-8"))
                final = self.scram_server.get_server_final()
            except ScramException:
                if not self.auth.faults.sasl_scram_proof_unchecked:
                    raise
                final = "v=" + "A" * 44  # fault: the proof is not checked, and the signature is made up
            if self.auth.faults.sasl_scram_signature_wrong:
                final = self._signed_with_stored_key(token.decode("utf-8"))
            self.authenticated = True
            return final.encode()
        return None

    def _signed_with_stored_key(self, client_final: str) -> str:
        """Fault sasl-scram-signature-wrong: the server-final signature made with StoredKey instead of ServerKey."""
        server = self.scram_server
        auth_message = ",".join((server.client_first_bare, server.server_first, client_final.rsplit(",p=", 1)[0]))
        signature = hmac.new(server.stored_key, auth_message.encode(), server.m.hf).digest()
        return "v=" + base64.b64encode(signature).decode()
