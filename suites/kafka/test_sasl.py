"""SASL on the Kafka protocol (KIP-43 SaslHandshake, KIP-152 SaslAuthenticate): PLAIN and SCRAM-SHA-256/512.

A target that does not advertise SaslHandshake makes these cases UNIMPLEMENTED. Cases that log in take the
credentials from ``--target-option kafka.sasl=USER:PASSWORD`` (UNIMPLEMENTED without them); a mechanism the target
does not list in its handshake answer is UNIMPLEMENTED too. The SCRAM client side is scramp's.
"""

from __future__ import annotations

import pytest
from scramp import ScramClient, ScramException

from wirecheck.protocols.kafka import errors
from wirecheck.reports.model import Divergence, Unimplemented
from wirecheck.suites.kafka.client import C, Kafka, short

case = pytest.mark.case
HANDSHAKE, AUTHENTICATE, METADATA = 17, 36, 3
SCRAM = ["SCRAM-SHA-256", "SCRAM-SHA-512"]


def sasl_client(target) -> Kafka:
    client = Kafka(target)
    client.require(HANDSHAKE)
    client.require(AUTHENTICATE)
    return client


def credentials(target) -> tuple[str, str]:
    text = target.options.get("sasl")
    if not text or ":" not in text:
        raise Unimplemented("no credentials: give --target-option kafka.sasl=USER:PASSWORD")
    user, _, password = text.partition(":")
    return user, password


def handshake(client: Kafka, mechanism: str, clause_id: str) -> dict:
    return client.call(HANDSHAKE, client.common_version(HANDSHAKE), {"Mechanism": mechanism}, clause_id)


def start(client: Kafka, mechanism: str, clause_id: str) -> None:
    """SaslHandshake for ``mechanism``; UNIMPLEMENTED if the target does not enable it."""
    body = handshake(client, mechanism, clause_id)
    if body["ErrorCode"] == errors.UNSUPPORTED_SASL_MECHANISM:
        raise Unimplemented(f"{mechanism} is not enabled (the target offers {body['Mechanisms']})")
    expect(clause_id, body["ErrorCode"], errors.NONE)


def authenticate(client: Kafka, token: bytes, clause_id: str) -> dict:
    return client.call(AUTHENTICATE, client.common_version(AUTHENTICATE), {"AuthBytes": token}, clause_id)


def expect(clause_id: str, code: int, *allowed: int) -> None:
    if code not in allowed:
        wanted = " or ".join(f"{c} ({errors.name(c)})" for c in allowed)
        raise Divergence(C[clause_id], f"ErrorCode {wanted}", f"ErrorCode {code} ({errors.name(code)})")


def plain(user: str, password: str) -> bytes:
    return b"\0" + user.encode() + b"\0" + password.encode()


def scram_login(client: Kafka, mechanism: str, user: str, password: str, clause_id: str,
                tamper: str | None = None) -> dict:
    """A SCRAM exchange; ``tamper`` ("nonce" or "proof") changes the client-final message. The last answer."""
    start(client, mechanism, clause_id)
    scram = ScramClient([mechanism], user, password)
    first = authenticate(client, scram.get_client_first().encode(), clause_id)
    if first["ErrorCode"] != errors.NONE:
        return first
    scram.set_server_first(first["AuthBytes"].decode("utf-8", "replace"))
    final = scram.get_client_final()
    if tamper:
        final = tampered(final, "r=" if tamper == "nonce" else "p=")
    answer = authenticate(client, final.encode(), clause_id)
    if answer["ErrorCode"] == errors.NONE and not tamper:
        try:
            scram.set_server_final(answer["AuthBytes"].decode("utf-8", "replace"))
        except ScramException as exc:
            raise Divergence(C[clause_id], "a server signature that verifies", f"{exc}: "
                             f"{short(answer['AuthBytes'])}") from None
    return answer


def tampered(message: str, prefix: str) -> str:
    """The client-final message with the last character of one attribute changed."""
    parts = message.split(",")
    for i, part in enumerate(parts):
        if part.startswith(prefix):
            value = part[len(prefix):]
            last = "A" if value[-1] != "A" else "B"
            parts[i] = prefix + value[:-1] + last
    return ",".join(parts)


def refused(client: Kafka, clause_id: str, what: str) -> None:
    """A Metadata request now must be refused: the connection closed, or an answer carrying 34 or 58 only."""
    correlation_id = client.send(METADATA, 1, {"Topics": []})
    reply = client.session.recv()
    if reply.ended:
        return
    if not reply.is_frame:
        raise Divergence(C[clause_id], f"{what}: the connection closed or the request refused", str(reply))
    codes = client.error_codes_of(reply.frame, (METADATA, 1)) or set()
    if not codes & {errors.ILLEGAL_SASL_STATE, errors.SASL_AUTHENTICATION_FAILED}:
        raise Divergence(C[clause_id], f"{what}: the connection closed or the request refused",
                         f"Metadata answered (correlation id {correlation_id}): {client.show(reply.frame)}")


def served(client: Kafka, clause_id: str) -> None:
    """After a successful login a Metadata request is answered with the brokers."""
    body = client.call(METADATA, 1, {"Topics": []}, clause_id)
    if not body["Brokers"]:
        raise Divergence(C[clause_id], "Metadata with the brokers once authenticated", short(body))


# -- cases -----------------------------------------------------------------------------------------------------


@case("kafka.sasl.handshake-mechanisms")
def test_unsupported_mechanism(target):
    client = sasl_client(target)
    body = handshake(client, "WIRECHECK-NO-SUCH-MECHANISM", "kafka.sasl.handshake-mechanisms")
    expect("kafka.sasl.handshake-mechanisms", body["ErrorCode"], errors.UNSUPPORTED_SASL_MECHANISM)
    if not body["Mechanisms"] or "WIRECHECK-NO-SUCH-MECHANISM" in body["Mechanisms"]:
        raise Divergence(C["kafka.sasl.handshake-mechanisms"], "the enabled mechanisms", short(body["Mechanisms"]))


@case("kafka.sasl.before-authentication")
@pytest.mark.parametrize("stage", ["fresh", "after-handshake"])
def test_requests_before_authentication_refused(target, stage):
    client = sasl_client(target)
    if stage == "after-handshake":
        body = handshake(client, "PLAIN", "kafka.sasl.before-authentication")
        mechanisms = body["Mechanisms"]
        if body["ErrorCode"] != errors.NONE:
            client = sasl_client(target)  # PLAIN is not enabled: choose one that is, on a fresh connection
            start(client, mechanisms[0], "kafka.sasl.before-authentication")
    refused(client, "kafka.sasl.before-authentication", f"Metadata before authentication ({stage})")


@case("kafka.sasl.plain")
def test_plain_login(target):
    client = sasl_client(target)
    user, password = credentials(target)
    start(client, "PLAIN", "kafka.sasl.plain")
    expect("kafka.sasl.plain", authenticate(client, plain(user, password), "kafka.sasl.plain")["ErrorCode"],
           errors.NONE)
    served(client, "kafka.sasl.plain")


@case("kafka.sasl.wrong-password")
@pytest.mark.parametrize("mechanism", ["PLAIN"] + SCRAM)
def test_wrong_password_refused(target, mechanism):
    clause = "kafka.sasl.wrong-password"
    client = sasl_client(target)
    user, password = credentials(target)
    if mechanism == "PLAIN":
        start(client, mechanism, clause)
        answer = authenticate(client, plain(user, password + "-wrong"), clause)
    else:
        answer = scram_login(client, mechanism, user, password + "-wrong", clause)
    expect(clause, answer["ErrorCode"], errors.SASL_AUTHENTICATION_FAILED)
    refused(client, clause, "Metadata after a failed login")


@case("kafka.sasl.scram")
@pytest.mark.parametrize("mechanism", SCRAM)
def test_scram_login(target, mechanism):
    client = sasl_client(target)
    user, password = credentials(target)
    answer = scram_login(client, mechanism, user, password, "kafka.sasl.scram")
    expect("kafka.sasl.scram", answer["ErrorCode"], errors.NONE)
    served(client, "kafka.sasl.scram")


@case("kafka.sasl.scram-tampered")
@pytest.mark.parametrize("tamper", ["nonce", "proof"])
def test_scram_tampered_final_message(target, tamper):
    clause = "kafka.sasl.scram-tampered"
    client = sasl_client(target)
    user, password = credentials(target)
    answer = scram_login(client, "SCRAM-SHA-256", user, password, clause, tamper=tamper)
    expect(clause, answer["ErrorCode"], errors.SASL_AUTHENTICATION_FAILED)
    refused(client, clause, "Metadata after a tampered SCRAM exchange")
