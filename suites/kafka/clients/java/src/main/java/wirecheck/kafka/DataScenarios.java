package wirecheck.kafka;

import static wirecheck.kafka.Driver.CONSUME_MS;
import static wirecheck.kafka.Driver.PRODUCE_MS;
import static wirecheck.kafka.Driver.b64;
import static wirecheck.kafka.Driver.raw;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** produce-consume (also compression, idempotent, sasl), transactions (and transactions-v2), telemetry. */
final class DataScenarios {
    static final byte[] TRANSFORM = "t:".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private DataScenarios() {}

    /**
     * {@code topic}, {@code group}, {@code codec}, {@code idempotent} (optional), {@code records} produced in
     * {@code rounds} (each flushed before the next), then consumed from the earliest offset by a classic group
     * consumer committing nothing. Gives {@code produced} ([partition, offset] per record) and {@code consumed}.
     */
    static void produceConsume(JsonNode job, Map<String, Object> result) throws Exception {
        produceConsume(job, result, new Properties(), new Properties());
    }

    static void produceConsume(JsonNode job, Map<String, Object> result, Properties producerExtra,
                               Properties consumerExtra) throws Exception {
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(job, producerExtra));
        try {
            result.put("produced", produce(job, producer));
        } finally {
            producer.close(Duration.ofSeconds(5));
        }
        Properties props = Driver.groupConsumer(job, consumerExtra.getProperty("client.id", "wirecheck-java-consumer"));
        props.putAll(consumerExtra);
        List<Object> consumed = new ArrayList<>();
        result.put("consumed", consumed);
        int wanted = job.get("records").size();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(job.get("topic").asText()));
            long end = System.currentTimeMillis() + CONSUME_MS;
            while (consumed.size() < wanted) {
                if (System.currentTimeMillis() > end) {
                    throw new Driver.Waiting("records (" + consumed.size() + " of " + wanted + " consumed)");
                }
                for (ConsumerRecord<byte[], byte[]> m : consumer.poll(Duration.ofMillis(200))) {
                    consumed.add(Driver.consumedRecord(m));
                }
            }
        }
    }

    static Properties producerProps(JsonNode job, Properties extra) {
        Properties props = Driver.producer(job, extra.getProperty("client.id", "wirecheck-java-producer"));
        props.putAll(extra);
        props.put("compression.type", job.path("codec").asText("none"));
        if (job.path("idempotent").asBoolean(false)) {
            props.put("enable.idempotence", "true");
        }
        return props;
    }

    /** The job's records, round by round; [partition, offset] of each, in job order. */
    static List<List<Long>> produce(JsonNode job, KafkaProducer<byte[], byte[]> producer) throws Exception {
        JsonNode records = job.get("records");
        int count = records.size();
        int roundSize = -Math.floorDiv(-count, job.path("rounds").asInt(1));
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            JsonNode r = records.get(i);
            RecordHeaders headers = new RecordHeaders();
            r.get("headers").forEach(h -> headers.add(h.get(0).asText(), raw(h.get(1))));
            sent.add(producer.send(new ProducerRecord<>(job.get("topic").asText(), r.get("partition").asInt(),
                    r.get("timestamp").asLong(), raw(r.get("key")), raw(r.get("value")), headers)));
            if ((i + 1) % roundSize == 0 || i + 1 == count) {
                producer.flush();
            }
        }
        List<List<Long>> produced = new ArrayList<>();
        for (Future<RecordMetadata> future : sent) {
            RecordMetadata m = future.get(PRODUCE_MS, TimeUnit.MILLISECONDS);
            produced.add(List.of((long) m.partition(), m.offset()));
        }
        return produced;
    }

    // -- transactions: consume-transform-produce ---------------------------------------------------------
    // The source records are read by a read_committed consumer of the group (assigned, not subscribed); a
    // transactional producer writes each transformed (TRANSFORM + value) to the destination with the source
    // offsets (sendOffsetsToTransaction), first in a transaction it aborts, then in one it commits. A fresh
    // read_committed consumer then reads the destination; the group's committed source offset comes back too.
    // The transactions-v2 job is the same; its result adds the requests the transactional producer sent
    // (RequestLog), by which the case judges that the client ran transaction protocol version 2.

    static final String TXN_CLIENT = "wirecheck-java-txn";

    static void transactions(JsonNode job, Map<String, Object> result) throws Exception {
        List<byte[]> values = Driver.values(job);
        TopicPartition source = new TopicPartition(job.get("source").asText(), 0);
        TopicPartition dest = new TopicPartition(job.get("dest").asText(), 0);
        try (KafkaProducer<byte[], byte[]> plain = new KafkaProducer<>(Driver.producer(job, "wirecheck-java-producer"))) {
            for (byte[] value : values) {
                plain.send(new ProducerRecord<>(source.topic(), 0, null, value)).get(PRODUCE_MS, TimeUnit.MILLISECONDS);
            }
        }
        Properties props = Driver.groupConsumer(job, "wirecheck-java-consumer");
        props.put("isolation.level", "read_committed");
        Long committed;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(source));
            List<byte[]> read = readValues(consumer, values.size(), 0, "source records");
            Properties txn = Driver.producer(job, TXN_CLIENT);
            txn.put("transactional.id", job.get("transactional_id").asText());
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(txn)) {
                producer.initTransactions();
                for (boolean commit : new boolean[] {false, true}) {
                    producer.beginTransaction();
                    for (byte[] value : read) {
                        byte[] out = new byte[TRANSFORM.length + value.length];
                        System.arraycopy(TRANSFORM, 0, out, 0, TRANSFORM.length);
                        System.arraycopy(value, 0, out, TRANSFORM.length, value.length);
                        producer.send(new ProducerRecord<>(dest.topic(), 0, null, out));
                    }
                    producer.sendOffsetsToTransaction(Map.of(source, new OffsetAndMetadata(read.size())),
                            consumer.groupMetadata());
                    producer.flush();
                    if (commit) {
                        producer.commitTransaction();
                    } else {
                        producer.abortTransaction();
                    }
                }
            }
            OffsetAndMetadata offset = consumer.committed(Set.of(source), Duration.ofMillis(CONSUME_MS)).get(source);
            committed = offset == null ? null : offset.offset();
        }
        Properties readerProps = Driver.consumer(job, "wirecheck-java-reader");
        readerProps.put("auto.offset.reset", "earliest");
        readerProps.put("enable.auto.commit", "false");
        readerProps.put("isolation.level", "read_committed");
        List<String> seen = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(readerProps)) {
            reader.assign(List.of(dest));
            // until as many as the source has, then a little longer: a record of the aborted one must not come
            readValues(reader, values.size(), 500, "committed records").forEach(v -> seen.add(b64(v)));
        }
        result.put("dest", seen);
        result.put("committed", committed);
        if (RequestLog.installed()) {
            result.put("requests", RequestLog.versionsSent(Driver.clientId(job, TXN_CLIENT)));
        }
    }

    /** The first {@code count} values ``consumer`` reads, and whatever comes in {@code settleMs} more. */
    static List<byte[]> readValues(KafkaConsumer<byte[], byte[]> consumer, int count, long settleMs, String what) {
        List<byte[]> read = new ArrayList<>();
        long end = System.currentTimeMillis() + CONSUME_MS;
        while (read.size() < count) {
            if (System.currentTimeMillis() > end) {
                throw new Driver.Waiting(what + " (" + read.size() + " of " + count + " read)");
            }
            consumer.poll(Duration.ofMillis(100)).forEach(m -> read.add(m.value()));
        }
        long settle = System.currentTimeMillis() + settleMs;
        while (System.currentTimeMillis() < settle) {
            consumer.poll(Duration.ofMillis(100)).forEach(m -> read.add(m.value()));
        }
        return read;
    }

    // -- telemetry: produce-consume with KIP-714 metrics push on -----------------------------------------
    // enable.metrics.push is the client's default; set anyway, since the scenario is about it. What the broker
    // did with the client's GetTelemetrySubscriptions and PushTelemetry comes from the client's own log of the
    // answers it got (RequestLog), per client id. After the records are consumed both clients keep running, up
    // to ``wait`` seconds, until each has had a push accepted (or an error, or a subscription of no metrics).

    static final String TELEMETRY_PRODUCER = "wirecheck-java-telemetry-producer";
    static final String TELEMETRY_CONSUMER = "wirecheck-java-telemetry-consumer";

    static void telemetry(JsonNode job, Map<String, Object> result) throws Exception {
        Properties producerExtra = new Properties();
        producerExtra.put("client.id", Driver.clientId(job, TELEMETRY_PRODUCER));
        producerExtra.put("enable.metrics.push", "true");
        Properties consumerExtra = new Properties();
        consumerExtra.put("client.id", Driver.clientId(job, TELEMETRY_CONSUMER));
        consumerExtra.put("enable.metrics.push", "true");
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(job, producerExtra));
        try {
            result.put("produced", produce(job, producer));
            Properties props = Driver.groupConsumer(job, TELEMETRY_CONSUMER);
            props.putAll(consumerExtra);
            List<Object> consumed = new ArrayList<>();
            result.put("consumed", consumed);
            int wanted = job.get("records").size();
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(job.get("topic").asText()));
                long end = System.currentTimeMillis() + CONSUME_MS;
                while (consumed.size() < wanted) {
                    if (System.currentTimeMillis() > end) {
                        throw new Driver.Waiting("records (" + consumed.size() + " of " + wanted + " consumed)");
                    }
                    consumer.poll(Duration.ofMillis(200)).forEach(m -> consumed.add(Driver.consumedRecord(m)));
                }
                long wait = System.currentTimeMillis() + job.get("wait").asLong() * 1000;
                while (System.currentTimeMillis() < wait
                        && !(RequestLog.telemetrySettled(Driver.clientId(job, TELEMETRY_PRODUCER))
                             && RequestLog.telemetrySettled(Driver.clientId(job, TELEMETRY_CONSUMER)))) {
                    consumer.poll(Duration.ofMillis(100)); // the classic consumer's network client runs in poll
                }
            }
        } finally {
            producer.close(Duration.ofSeconds(5));
        }
        result.put("telemetry", Map.of("producer", RequestLog.telemetry(Driver.clientId(job, TELEMETRY_PRODUCER)),
                "consumer", RequestLog.telemetry(Driver.clientId(job, TELEMETRY_CONSUMER))));
    }
}
