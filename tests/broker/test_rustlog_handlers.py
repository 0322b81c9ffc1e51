"""RustLog's handler table and typed switches, in process: every request kind the schema parses has one handler
whose parameters are that kind's fields, and the encoder bends frames only under the typed faults it is given."""

from __future__ import annotations

import inspect
import json

from wirecheck.broker.rustlog.faults import RustLogFaults, RustLogVariants
from wirecheck.broker.rustlog.schema import REQUESTS
from wirecheck.broker.rustlog.server import HANDLERS
from wirecheck.broker.rustlog.wire import LENGTH, Encoder


def test_every_request_kind_has_one_handler_taking_its_fields():
    assert set(HANDLERS) == set(REQUESTS)
    for kind, handler in HANDLERS.items():
        parameters = list(inspect.signature(handler).parameters)[1:]  # without self
        assert set(parameters) == set(REQUESTS[kind]), kind


def test_encoder_applies_only_the_faults_it_is_given():
    clean = Encoder(RustLogFaults(), RustLogVariants())
    assert clean.header(b"abc") == LENGTH.pack(3)
    assert json.loads(clean.error(400, "bad")) == {"type": "Error", "code": 400, "message": "bad", "details": None}
    faulted = Encoder(RustLogFaults({"length-counts-header", "error-message-key-wrong", "error-details-missing"}),
                      RustLogVariants({"details-empty-object"}))
    assert faulted.header(b"abc") == LENGTH.pack(3 + LENGTH.size)
    assert json.loads(faulted.error(400, "bad")) == {"type": "Error", "code": 400, "error": "bad"}
    varied = Encoder(RustLogFaults(), RustLogVariants({"details-empty-object"}))
    assert json.loads(varied.error(400, "bad"))["details"] == {}
