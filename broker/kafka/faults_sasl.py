"""The SASL faults, one switch per clause they break."""

from wirecheck.broker.switches import Switch


class SaslFaults:
    """SASL authentication (sasl.py)."""

    sasl_unauthenticated_served = Switch(
        "Before SASL authentication only ApiVersions and SaslHandshake are served (KIP-43, KIP-152); this serves "
        "every request")
    sasl_wrong_password_accepted = Switch(
        "SASL/PLAIN with a wrong password fails with SASL_AUTHENTICATION_FAILED (58) (RFC 4616, KIP-152); this "
        "accepts it")
    sasl_scram_proof_unchecked = Switch(
        "A SCRAM client-final message with a wrong proof or nonce fails (RFC 5802); this accepts it")
    sasl_unsupported_mechanism_accepted = Switch(
        "SaslHandshake with a mechanism not enabled answers UNSUPPORTED_SASL_MECHANISM (33) (KIP-43); this "
        "accepts it")
    sasl_plain_authzid_required = Switch(
        "SASL/PLAIN's authorization identity may be empty, meaning the authentication identity (RFC 4616 "
        "section 2, PlainSaslServer); this refuses an empty one with SASL_AUTHENTICATION_FAILED (58)")
    sasl_scram_signature_wrong = Switch(
        "The SCRAM server-final message carries ServerSignature = HMAC(ServerKey, AuthMessage) (RFC 5802 "
        "section 3); this signs with the StoredKey, so the client cannot verify the server")
