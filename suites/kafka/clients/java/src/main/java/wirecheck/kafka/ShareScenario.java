package wirecheck.kafka;

import static wirecheck.kafka.Driver.CONSUME_MS;
import static wirecheck.kafka.Driver.PRODUCE_MS;
import static wirecheck.kafka.Driver.b64;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;

/**
 * share-group: {@code topic} ({@code partitions} of them), {@code group}, {@code values}. Two KafkaShareConsumer
 * members of one KIP-932 share group, in explicit acknowledgement mode: each record a member gets is acknowledged
 * ACCEPT and committed (commitSync) before the next poll. Gives {@code consumed} ([member, partition, offset,
 * value]) and {@code ack_errors} (every acknowledgement that came back with an error).
 *
 * <p>A share partition starts at the latest offset (share.auto.offset.reset, KIP-932's default), fixed when a
 * member first fetches it, and nothing tells a client when that has happened: so probe records go to every
 * partition, again every half second, until one came back from each; only then are the job's values produced
 * (as confluent_share.py does). Probes are acknowledged like any record and left out of {@code consumed}.
 */
final class ShareScenario {
    static final byte[] PROBE = "wirecheck-share-probe".getBytes(StandardCharsets.US_ASCII);

    private ShareScenario() {}

    static void shareGroup(JsonNode job, Map<String, Object> result) throws Exception {
        List<byte[]> values = Driver.values(job);
        int partitions = job.get("partitions").asInt();
        GroupScenarios.Group group = new GroupScenarios.Group();
        Set<Integer> probes = new HashSet<>();
        List<String> ackErrors = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> members = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            Thread member = new Thread(() -> member(job, group, name, probes, ackErrors, stop), "share-" + name);
            member.setDaemon(true);
            member.start();
            members.add(member);
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Driver.producer(job, "wirecheck-java-producer"))) {
            long end = System.currentTimeMillis() + CONSUME_MS;
            while (true) { // every share partition started before the values are produced
                synchronized (group) {
                    if (probes.size() >= partitions) {
                        break;
                    }
                }
                for (int p = 0; p < partitions; p++) {
                    synchronized (group) {
                        if (probes.contains(p)) {
                            continue;
                        }
                    }
                    producer.send(new ProducerRecord<>(job.get("topic").asText(), p, null, PROBE))
                            .get(PRODUCE_MS, TimeUnit.MILLISECONDS);
                }
                Thread.sleep(500);
                group.check();
                if (System.currentTimeMillis() > end) {
                    throw new Driver.Waiting("a probe record back from each of the " + partitions + " partitions");
                }
            }
            for (int i = 0; i < values.size(); i++) {
                producer.send(new ProducerRecord<>(job.get("topic").asText(), i % partitions, null, values.get(i)))
                        .get(PRODUCE_MS, TimeUnit.MILLISECONDS);
            }
            Driver.waitUntil(() -> group.count() >= values.size(), "all " + values.size() + " records consumed",
                    CONSUME_MS, group::check);
            Thread.sleep(500); // a record delivered twice may still come
        } finally {
            stop.set(true);
            for (Thread member : members) {
                member.join(CONSUME_MS);
            }
        }
        synchronized (group) {
            group.check();
            result.put("consumed", new ArrayList<>(group.consumed));
            ackErrors.sort(null);
            result.put("ack_errors", ackErrors);
        }
    }

    private static void member(JsonNode job, GroupScenarios.Group group, String name, Set<Integer> probes,
                               List<String> ackErrors, AtomicBoolean stop) {
        try {
            Properties props = Driver.consumer(job, "wirecheck-java-share-" + name);
            props.put("group.id", job.get("group").asText());
            props.put("share.acknowledgement.mode", "explicit");
            try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props)) {
                consumer.subscribe(List.of(job.get("topic").asText()));
                while (!stop.get()) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<byte[], byte[]> m : records) {
                        synchronized (group) {
                            if (Arrays.equals(m.value(), PROBE)) {
                                probes.add(m.partition());
                            } else {
                                group.consumed.add(List.of(name, m.partition(), m.offset(), b64(m.value())));
                            }
                        }
                        consumer.acknowledge(m, AcknowledgeType.ACCEPT);
                    }
                    if (!records.isEmpty()) {
                        Map<TopicIdPartition, Optional<KafkaException>> acks =
                                consumer.commitSync(Duration.ofMillis(CONSUME_MS));
                        acks.forEach((partition, error) -> error.ifPresent(e -> {
                            synchronized (group) {
                                ackErrors.add(name + " " + partition.topic() + "-" + partition.partition() + ": " + e);
                            }
                        }));
                    }
                }
            }
        } catch (Exception failure) {
            synchronized (group) {
                group.errors.add(name + ": " + failure);
            }
        }
    }
}
