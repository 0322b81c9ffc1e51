"""Clause catalogues as rows: ``protocols.<name>.clauses.CATALOGUE`` for each protocol.

A protocol whose catalogue does not exist yet (or fails to import) is listed with one row whose clause is null,
so coverage can still count what its records exercise.
"""

from __future__ import annotations


def known_protocols() -> list[str]:
    """Every registered protocol; records may name others, which are added at load time."""
    from wirecheck.protocols.registry import all_specs

    return sorted(all_specs())


def load_catalogue(protocol: str):
    """The protocol's Catalogue, or None when it does not exist (yet)."""
    from wirecheck.protocols.registry import all_specs

    try:
        spec = all_specs().get(protocol)
    except Exception:  # a protocol being written may not import yet: report its catalogue as missing
        return None
    return spec.catalogue if spec is not None else None


def catalogue_rows(protocols) -> list[tuple]:
    rows = []
    for protocol in sorted(set(protocols)):
        catalogue = load_catalogue(protocol)
        if catalogue is None:
            rows.append((protocol, None, None, None, None))
            continue
        for clause in catalogue:
            rows.append((protocol, clause.id, clause.level.value, clause.requirement, clause.source))
    return rows
