"""RustLog requests, valid and mutated, derived from the layers' field kinds.

* ``values``: Hypothesis strategies (``kind_values``, ``layer_examples``), the requests the suite sends and the
  wrong values of each wire kind (``invalid_field_variants``, ``NOT_OBJECTS``, ``UNKNOWN_TYPES``);
* ``mutants``: :class:`BulkMutator`, seeded bulk mutants of requests traced as JSON through the shared operators,
  each with the reaction the spec permits (and ``hostile_frame``, one mutant for property-based cases);
* ``adapter``: :class:`RustLogFuzz`, the bulk engine's adapter: Ping is the keepalive.
"""

from wirecheck.strategies.rustlog.adapter import RustLogFuzz, fuzz_adapter, fuzz_setup, offline_adapter
from wirecheck.strategies.rustlog.mutants import (LOOKUP_NAME_CODES, NAME_CLAUSES, NO_HANG, PROCESSED_CODES, BulkMutator, hostile_frame,
                                                  traced_request)
from wirecheck.strategies.rustlog.values import (FUZZ_GROUP, NOT_OBJECTS, UNKNOWN_TYPES, WRONG_VALUES, b64,
                                                 invalid_field_variants, kind_values, layer_examples, sample_request)

__all__ = ["b64", "BulkMutator", "fuzz_adapter", "fuzz_setup", "FUZZ_GROUP", "hostile_frame", "invalid_field_variants",
           "kind_values", "layer_examples", "LOOKUP_NAME_CODES", "NAME_CLAUSES", "NO_HANG", "NOT_OBJECTS", "offline_adapter",
           "PROCESSED_CODES", "RustLogFuzz", "sample_request", "traced_request", "UNKNOWN_TYPES", "WRONG_VALUES"]
