"""Kafka requests, valid and mutated, straight from the message definitions.

* ``values``: Hypothesis strategies for any message and version (``any_message``, ``bodies``, ``request_frames``),
  record batches, and ``random_value``/``random_request``, the same codecs walked by a seeded ``random.Random``;
* ``seeds``: requests traced by their codec (``traced_request``: each field's span) and the traced seeds of the
  bulk mutants (``random_seed``);
* ``mutants``: :class:`BulkMutator`, the shared operators applied to traced seeds through the rule table, each
  mutant with what a conforming broker may do (and ``mutated_requests``, one mutant for property-based cases);
* ``batches``: record-batch mutations inside a Produce request;
* ``adapter``: :class:`KafkaFuzz`, the bulk engine's adapter, and what keeps a mutant's valid part harmless.
"""

from wirecheck.strategies.kafka.adapter import (ENUMS, INIT_PRODUCER_ID, READ_ONLY, REJECTIONS, KafkaFuzz,
                                                fuzz_adapter, fuzz_setup, harmless, offline_adapter, read_only_ranges)
from wirecheck.strategies.kafka.batches import (BatchMutation, batch_spans, corrupt_crc, corrupt_payload,
                                                lying_batch_length, lying_record_count, mutated_batches, produce_body,
                                                wrong_magic)
from wirecheck.strategies.kafka.mutants import (BULK_OPERATORS, CORPUS, MALFORMED, OPERATORS, REARRANGING, RULES,
                                                BulkMutator, expect, mutate, mutate_overlong_varint, mutated_requests,
                                                random_mutant)
from wirecheck.strategies.kafka.seeds import KafkaRequest, Seed, random_seed, trace, traced_request, traced_seed
from wirecheck.strategies.kafka.values import (DEFAULT_RECORDS, Message, any_message, api_and_version, bodies,
                                               client_ids, correlation_ids, layer_examples, random_request,
                                               random_value, record_batch_bytes, record_batches, record_lists,
                                               request_frames, value_strategy)

__all__ = ["INIT_PRODUCER_ID", "any_message", "api_and_version", "BatchMutation", "batch_spans", "bodies", "BULK_OPERATORS",
           "BulkMutator", "client_ids", "CORPUS", "correlation_ids", "corrupt_crc", "corrupt_payload",
           "DEFAULT_RECORDS", "ENUMS", "expect", "fuzz_adapter", "fuzz_setup", "harmless", "KafkaFuzz",
           "KafkaRequest", "layer_examples", "lying_batch_length", "lying_record_count", "MALFORMED", "Message",
           "mutate", "mutate_overlong_varint", "mutated_batches", "mutated_requests", "offline_adapter", "OPERATORS",
           "produce_body", "random_mutant", "random_request", "random_seed", "random_value", "read_only_ranges",
           "READ_ONLY", "REARRANGING", "record_batch_bytes", "record_batches", "record_lists", "REJECTIONS",
           "request_frames", "RULES", "Seed", "trace", "traced_request", "traced_seed", "value_strategy",
           "wrong_magic"]
