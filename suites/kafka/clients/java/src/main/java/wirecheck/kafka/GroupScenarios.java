package wirecheck.kafka;

import static wirecheck.kafka.Driver.CONSUME_MS;
import static wirecheck.kafka.Driver.PRODUCE_MS;
import static wirecheck.kafka.Driver.b64;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * group-rebalance (classic protocol), consumer-group-protocol (KIP-848, group.protocol=consumer) and group-consume
 * (classic). Each member runs in its own thread, takes one record per poll and commits it (commitSync) before the
 * next, so that a member that takes over a partition resumes where the last owner committed. The classic members'
 * heartbeat interval is short only so that a member notices a rebalance in well under a second (the scenario is
 * about the rebalance; the 3 s default only slows it down); KIP-848's is the coordinator's to set.
 */
final class GroupScenarios {
    static final int HEARTBEAT_MS = 300;

    private GroupScenarios() {}

    /** The records consumed by a group's members ([member, partition, offset, value]), shared by their threads. */
    static final class Group {
        final List<List<Object>> consumed = new ArrayList<>();
        final Map<String, Set<Integer>> assigned = new HashMap<>();
        final List<String> errors = new ArrayList<>();

        synchronized int count() {
            return consumed.size();
        }

        synchronized boolean assigned(String... members) {
            for (String name : members) {
                if (assigned.getOrDefault(name, Set.of()).isEmpty()) {
                    return false;
                }
            }
            return true;
        }

        synchronized void check() {
            if (!errors.isEmpty()) {
                throw new IllegalStateException(String.join("; ", errors));
            }
        }
    }

    /** One member: poll, note and commit each record, until stopped; then close (leaving the group). */
    static final class Member {
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread;

        Member(JsonNode job, Group group, String name, boolean kip848) {
            thread = new Thread(() -> run(job, group, name, kip848), "member-" + name);
            thread.setDaemon(true);
            thread.start();
        }

        private void run(JsonNode job, Group group, String name, boolean kip848) {
            try {
                Properties props = Driver.groupConsumer(job, "wirecheck-java-" + name);
                props.put("max.poll.records", "1");
                if (kip848) {
                    props.put("group.protocol", "consumer");
                } else {
                    props.put("heartbeat.interval.ms", String.valueOf(HEARTBEAT_MS));
                }
                try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                    consumer.subscribe(List.of(job.get("topic").asText()));
                    while (!stop.get()) {
                        for (ConsumerRecord<byte[], byte[]> m : consumer.poll(Duration.ofMillis(100))) {
                            synchronized (group) {
                                group.consumed.add(List.of(name, m.partition(), m.offset(), b64(m.value())));
                            }
                            consumer.commitSync(Map.of(new TopicPartition(m.topic(), m.partition()),
                                    new OffsetAndMetadata(m.offset() + 1)));
                        }
                        Set<Integer> partitions = new TreeSet<>();
                        consumer.assignment().forEach(tp -> partitions.add(tp.partition()));
                        synchronized (group) {
                            group.assigned.put(name, partitions);
                        }
                    }
                }
            } catch (Exception failure) {
                synchronized (group) {
                    group.errors.add(name + ": " + failure);
                }
            }
        }

        void leave() throws InterruptedException {
            stop.set(true);
            thread.join(CONSUME_MS);
        }
    }

    static void produce(JsonNode job, List<byte[]> values, int from, int to) throws Exception {
        int partitions = job.get("partitions").asInt();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Driver.producer(job, "wirecheck-java-producer"))) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = from; i < to; i++) {
                sent.add(producer.send(new ProducerRecord<>(job.get("topic").asText(), i % partitions, null,
                        values.get(i))));
            }
            for (java.util.concurrent.Future<?> future : sent) {
                future.get(PRODUCE_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Two classic members join; the first half of the records is consumed across them; one leaves; the second half
     * is produced and the remaining member consumes it (and whatever the leaver had not). Gives {@code consumed}.
     */
    static void groupRebalance(JsonNode job, Map<String, Object> result) throws Exception {
        List<byte[]> values = Driver.values(job);
        int half = values.size() / 2;
        Group group = new Group();
        produce(job, values, 0, half);
        Member a = new Member(job, group, "a", false);
        Member b = new Member(job, group, "b", false);
        Driver.waitUntil(() -> group.count() >= half && group.assigned("a", "b"),
                "both members assigned and " + half + " records consumed", CONSUME_MS, group::check);
        b.leave();
        produce(job, values, half, values.size());
        Driver.waitUntil(() -> group.count() >= values.size(), "all " + values.size() + " records consumed",
                CONSUME_MS, group::check);
        Thread.sleep(500); // a record consumed twice may still come
        a.leave();
        finish(group, result);
    }

    /**
     * Three members of a KIP-848 group: two consume the first third, a third joins late, the second third is
     * consumed across the three, one of the first two leaves, the last third is consumed by the other two.
     */
    static void consumerGroupProtocol(JsonNode job, Map<String, Object> result) throws Exception {
        List<byte[]> values = Driver.values(job);
        int[] thirds = {values.size() / 3, 2 * values.size() / 3, values.size()};
        Group group = new Group();
        Map<String, Member> members = new HashMap<>();
        members.put("a", new Member(job, group, "a", true));
        members.put("b", new Member(job, group, "b", true));
        stage(job, group, values, 0, thirds[0], "a", "b");
        members.put("c", new Member(job, group, "c", true)); // joins late: partitions move to it once revoked
        Driver.waitUntil(() -> group.assigned("c"), "the late member assigned partitions", CONSUME_MS, group::check);
        stage(job, group, values, thirds[0], thirds[1], "a", "b", "c");
        members.get("b").leave(); // its partitions go to the others, which resume at the offsets it committed
        stage(job, group, values, thirds[1], thirds[2], "a", "c");
        Thread.sleep(500); // a record consumed twice may still come
        members.get("a").leave();
        members.get("c").leave();
        finish(group, result);
    }

    private static void stage(JsonNode job, Group group, List<byte[]> values, int from, int to, String... members)
            throws Exception {
        produce(job, values, from, to);
        Driver.waitUntil(() -> group.count() >= to && group.assigned(members),
                "members " + String.join(", ", members) + " assigned and " + to + " records consumed", CONSUME_MS,
                group::check);
    }

    private static void finish(Group group, Map<String, Object> result) {
        synchronized (group) {
            group.check();
            result.put("consumed", new ArrayList<>(group.consumed));
        }
    }

    /**
     * group-consume: {@code topic}, {@code group}, {@code records}: produces the records, then consumes as the
     * group's only (classic) member, from the committed offsets (the earliest where none), until it has read as
     * many as it produced, and commits what it read as it exits. Gives {@code consumed}.
     */
    static void groupConsume(JsonNode job, Map<String, Object> result) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(DataScenarios.producerProps(job, new Properties()))) {
            result.put("produced", DataScenarios.produce(job, producer));
        }
        Properties props = Driver.groupConsumer(job, "wirecheck-java-consumer");
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
            consumer.commitSync(); // the positions of everything read
        }
    }
}
