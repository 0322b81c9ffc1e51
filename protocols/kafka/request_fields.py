"""A request's fields rewritten by their dotted path (``ProtocolSpec.map_request``): differential mode sends the
oracle a request that carries the oracle's own broker ids where the case wrote the target's (a CreateTopics
replica assignment names a broker the case learnt from the target's Metadata answer)."""

from __future__ import annotations

from typing import Callable

from wirecheck.protocols.kafka import messages
from wirecheck.protocols.kafka.codec import TAGGED


def map_request(frame: bytes, rewrite: Callable[[str, object, dict], object]) -> bytes:
    """``frame`` with ``rewrite(path, value, struct)`` applied to every body field, ``path`` being
    ``<ApiName>Request.<Field>.<Field>...`` without list indices and ``struct`` the fields beside it; the same bytes
    when nothing changed or the frame does not decode (a hostile request is sent as the case wrote it)."""
    try:
        decoded = messages.decode_request(frame)
        header = decoded["header"]
        name = f"{messages.api_name(header['RequestApiKey'])}Request"
    except Exception:  # noqa: BLE001 - a request the codec cannot read carries nothing to map
        return frame
    changed: list[bool] = []
    body = _walk(decoded["body"], name, rewrite, changed)
    if not changed:
        return frame
    return messages.encode_request(header["RequestApiKey"], header["RequestApiVersion"], header["CorrelationId"],
                                   header.get("ClientId"), body, header.get(TAGGED))


#: ConfigResource.Type BROKER and BROKER_LOGGER: the resource's name is a broker id as a string ("0"), or "" for the
#: cluster-wide default (DescribeConfigsRequest.json, ResourceName's "about"); any other resource names no broker
BROKER_RESOURCES = (4, 8)


def _not_a_broker(struct: dict, key: str) -> bool:
    return key == "ResourceName" and struct.get("ResourceType") not in BROKER_RESOURCES


def _walk(value, path: str, rewrite, changed: list[bool], struct: dict | None = None):
    if isinstance(value, dict):
        return {key: item if key == TAGGED or _not_a_broker(value, key)
                else _walk(item, f"{path}.{key}", rewrite, changed, value) for key, item in value.items()}
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        return [_walk(item, path, rewrite, changed) for item in value]
    new = rewrite(path, value, struct or {})
    if new != value:
        changed.append(True)
    return new
