"""SASL login for the Kafka suite (KIP-43 SaslHandshake, KIP-152 SaslAuthenticate): PLAIN and SCRAM-SHA-256/512.

``login`` is the Kafka protocol's login step (``ProtocolSpec.login``): with ``--target-option
kafka.sasl=USER:PASSWORD`` every session a case opens authenticates before the case uses it, so the whole suite
runs against a target that requires SASL. The mechanism is PLAIN unless ``--target-option
kafka.sasl-mechanism=SCRAM-SHA-256`` (or -512) says otherwise. The SCRAM client side is scramp's.
"""

from __future__ import annotations

from scramp import ScramClient, ScramException

from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.kafka.client import C, Kafka, expect, short

HANDSHAKE, AUTHENTICATE = 17, 36
SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def credentials(target) -> tuple[str, str]:
    text = target.options.get("sasl")
    if not text or ":" not in text:
        raise Unimplemented("no credentials: give --target-option kafka.sasl=USER:PASSWORD")
    user, _, password = text.partition(":")
    return user, password


def sasl_client(target) -> Kafka:
    """A connection left unauthenticated (the run's login step skipped), for the cases that log in themselves.
    Only a listener the user says needs SASL (credentials given) is one: Apache Kafka advertises SaslHandshake on
    its PLAINTEXT listeners too, so advertising it proves nothing."""
    credentials(target)
    client = Kafka(target, target.connect(login=False))
    client.require(HANDSHAKE)
    client.require(AUTHENTICATE)
    return client


def handshake(client: Kafka, mechanism: str, clause_id: str) -> dict:
    return client.call(HANDSHAKE, client.common_version(HANDSHAKE, low=1), {"Mechanism": mechanism}, clause_id)


def start(client: Kafka, mechanism: str, clause_id: str) -> None:
    """SaslHandshake for ``mechanism``; UNIMPLEMENTED if the target does not enable it."""
    body = handshake(client, mechanism, clause_id)
    if body["ErrorCode"] == errors.UNSUPPORTED_SASL_MECHANISM:
        raise Unimplemented(f"{mechanism} is not enabled (the target offers {body['Mechanisms']})")
    expect(clause_id, body["ErrorCode"], errors.NONE)


def authenticate(client: Kafka, token: bytes, clause_id: str) -> dict:
    return client.call(AUTHENTICATE, client.common_version(AUTHENTICATE), {"AuthBytes": token}, clause_id)


def plain(user: str, password: str) -> bytes:
    return b"\0" + user.encode() + b"\0" + password.encode()


def plain_login(client: Kafka, user: str, password: str, clause_id: str) -> dict:
    start(client, "PLAIN", clause_id)
    return authenticate(client, plain(user, password), clause_id)


def scram_login(client: Kafka, mechanism: str, user: str, password: str, clause_id: str,
                tamper: str | None = None, verify_server: bool = True) -> dict:
    """A SCRAM exchange; ``tamper`` ("nonce" or "proof") changes the client-final message. The last answer.
    The server's signature is checked on success unless ``verify_server`` is off (a wrong password: the client
    cannot verify it, and the case judges the success itself)."""
    start(client, mechanism, clause_id)
    scram = ScramClient([mechanism], user, password)
    first = authenticate(client, scram.get_client_first().encode(), clause_id)
    if first["ErrorCode"] != errors.NONE:
        return first
    scram.set_server_first(first["AuthBytes"].decode("utf-8", "replace"))
    client.target.cannot_replay("the SCRAM client proof answers the server's nonce, which a replay cannot "
                                "compute anew")
    final = scram.get_client_final()
    if tamper:
        final = tampered(final, "r=" if tamper == "nonce" else "p=")
    answer = authenticate(client, final.encode(), clause_id)
    if answer["ErrorCode"] == errors.NONE and verify_server and not tamper:
        try:
            scram.set_server_final(answer["AuthBytes"].decode("utf-8", "replace"))
        except ScramException as exc:
            raise Divergence(C[clause_id], "a server signature that verifies", f"{exc}: "
                             f"{short(answer['AuthBytes'])}") from None
    return answer


def tampered(message: str, prefix: str) -> str:
    """The client-final message with the first character of one attribute changed: in a base64 proof all six
    bits of the first digit are data, while the last digit's low bits may be padding a decoder ignores, and the
    last character may be the padding itself."""
    parts = message.split(",")
    for i, part in enumerate(parts):
        if part.startswith(prefix):
            value = part[len(prefix):]
            parts[i] = prefix + ("A" if value[0] != "A" else "B") + value[1:]
    return ",".join(parts)


def login(target, session) -> None:
    """Authenticate ``session`` when the run gave credentials; a failed login blocks the case (unless the case is
    about that very clause)."""
    if not target.options.get("sasl"):
        return
    user, password = credentials(target)
    mechanism = target.options.get("sasl-mechanism", "PLAIN")
    clause = "kafka.sasl.scram" if mechanism in SCRAM else "kafka.sasl.plain"
    with target.precondition(f"SASL {mechanism} login as {user}"):
        client = Kafka(target, session)
        if mechanism in SCRAM:
            answer = scram_login(client, mechanism, user, password, clause)
        else:
            answer = plain_login(client, user, password, clause)
        expect(clause, answer["ErrorCode"], errors.NONE)
