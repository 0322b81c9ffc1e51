"""SASL on the Kafka protocol (KIP-43 SaslHandshake, KIP-152 SaslAuthenticate): PLAIN and SCRAM-SHA-256/512.

They run against a listener that requires SASL, which the user says by giving its credentials
(``--target-option kafka.sasl=USER:PASSWORD``; UNIMPLEMENTED without them: Apache Kafka advertises SaslHandshake on
PLAINTEXT listeners too, so the advertisement does not say a listener requires it), and that advertises
SaslHandshake and SaslAuthenticate; a mechanism the target does not list in its handshake answer is UNIMPLEMENTED. Their connections skip the run's login step
(suites/kafka/login.py), which every other case's connections go through.
"""

from __future__ import annotations

import pytest

from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, Kafka, expect, short
from wirecheck.suites.kafka.login import (SCRAM, authenticate, credentials, handshake, plain, sasl_client, scram_login,
                                          start)

case = pytest.mark.case
METADATA = 3


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
@pytest.mark.parametrize("mechanism", ["PLAIN", *SCRAM])
def test_wrong_password_refused(target, mechanism):
    clause = "kafka.sasl.wrong-password"
    client = sasl_client(target)
    user, password = credentials(target)
    if mechanism == "PLAIN":
        start(client, mechanism, clause)
        answer = authenticate(client, plain(user, password + "-wrong"), clause)
    else:
        answer = scram_login(client, mechanism, user, password + "-wrong", clause, verify_server=False)
    # SCRAM never sends the password: a wrong one shows only as a wrong proof, which scram-tampered owns
    expect("kafka.sasl.scram-tampered" if mechanism in SCRAM else clause, answer["ErrorCode"],
           errors.SASL_AUTHENTICATION_FAILED)
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
