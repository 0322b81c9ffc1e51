package wirecheck.kafka;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One client role of the Kafka safety workload (targets/safety/kafka.py) with kafka-clients, beside confluent-kafka's
 * and kafka-python's, recording its operations itself exactly as the Python recorder does
 * (reports/safety/history.py, Recorder), so that the checker cannot tell the clients apart:
 *
 * <pre>
 *   java -jar wirecheck-kafka-java-driver.jar safety ROLE --bootstrap H:P --topic T --history FILE --started S
 *        --base N --slot S --seed X --partitions P --abort-chance C --op-timeout S --life MIN,MAX --pace MIN,MAX
 * </pre>
 *
 * <p>ROLE: {@code send} (idempotent producer, acks=all), {@code txn} (transactional producer, transactional.id
 * wirecheck-safety-SLOT, so that a replacement fences its predecessor; committed, or aborted on purpose one time in
 * 1/abort-chance), {@code poll} (read_committed consumer, assign() of every partition from the start, no group, no
 * commits). It runs until SIGTERM (the supervisor's stop: a shutdown hook ends the loop after its operation and
 * closes the client and the history), or a kill -9 (a client crash: every line written so far is whole, since each
 * is one write(2) of its own). The workload's numbers (partitions, abort chance, timeouts, a client's life and pace)
 * come from kafka.py on the command line; the client settings are this file's, mirroring kafka.py's COMMON,
 * PRODUCER and CONSUMER.
 *
 * <p>Time: {@code --started} is the run's start as Python's time.monotonic() gives it, which on Linux is
 * clock_gettime(CLOCK_MONOTONIC); HotSpot's System.nanoTime() on Linux reads the same clock (checked: a JVM's
 * nanoTime()/1e9 falls between two time.monotonic() readings of its parent taken around it), so an operation's time
 * is nanoTime()/1e9 - started and the files merge by time with the Python recorders'.
 *
 * <p>Where kafka-clients differs from the Python clients, and what is recorded then:
 * <ul>
 *   <li>send() returns a Future and can itself throw (metadata not there within max.block.ms, a producer already
 *       failed fatally); flush() has no timeout, so the operation waits on each Future until op-timeout instead
 *       (kafka.py's flush(OP_TIMEOUT_S)). Every value delivered: {@code ok}; anything else: {@code info} with the
 *       offsets that did come back.</li>
 *   <li>The idempotent producer is replaced after any send operation that was not {@code ok}, as kafka-python's
 *       is: kafka-clients makes some errors fatal (ProducerFencedException, OutOfOrderSequenceException once the
 *       epoch cannot be bumped, authorization and version errors: every later send throws) and recovers from others
 *       by bumping its epoch; telling them apart buys nothing, and a new producer is always safe.</li>
 *   <li>Transactions: a failure before the commit was requested (begin, send, a delivery error or timeout) is
 *       answered with abortTransaction(): {@code fail} with abort=true if the abort returned, since the coordinator
 *       then wrote the abort markers; if the abort itself throws (a fatal error such as ProducerFencedException, or
 *       a timeout), the transaction's fate is unknown: {@code info}, and the producer is replaced. A failure of
 *       commitTransaction() (a timeout after max.block.ms, a fenced producer, a lost coordinator) is {@code info}
 *       with commit_time: the commit may have taken effect. kafka-clients lets a timed-out commit be retried; the
 *       workload does not, as it does not with the Python clients.</li>
 *   <li>initTransactions() that throws (no coordinator within max.block.ms during a restart) records nothing: the
 *       producer is closed and a new one tried after 0.5 s, as kafka.py does.</li>
 *   <li>A consumer whose poll() throws is {@code info} and is replaced (its position may have moved past records it
 *       never returned), as kafka-python's is.</li>
 * </ul>
 */
public final class SafetyClient {
    static final String TXN_PREFIX = "wirecheck-safety-"; // + the slot, as kafka.py's transactional ids
    static final int MAX_RECORDS = 500; // a poll's records at most, as kafka.py's consume(500)

    private final Map<String, String> options;
    private final String topic;
    private final int partitions;
    private final double abortChance;
    private final long opTimeoutMs;
    private final int[] life;
    private final double[] pace;
    private final double started;
    private final Random rng;
    private final FileOutputStream history;
    private final CountDownLatch stop = new CountDownLatch(1);
    private long nextProcess;
    private long nextValue;
    private long index;

    private SafetyClient(Map<String, String> options) throws IOException {
        this.options = options;
        topic = required("topic");
        partitions = Integer.parseInt(required("partitions"));
        abortChance = Double.parseDouble(required("abort-chance"));
        opTimeoutMs = Math.round(Double.parseDouble(required("op-timeout")) * 1000);
        life = Arrays.stream(required("life").split(",")).mapToInt(Integer::parseInt).toArray();
        pace = Arrays.stream(required("pace").split(",")).mapToDouble(Double::parseDouble).toArray();
        started = Double.parseDouble(required("started"));
        rng = new Random(Long.parseLong(options.getOrDefault("seed", "0")));
        nextProcess = nextValue = Long.parseLong(required("base"));
        history = new FileOutputStream(required("history"));
    }

    /** {@code safety ROLE --name value ...} (Driver's main hands over everything after "safety"). */
    static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length % 2 != 1) {
            throw new IllegalArgumentException("usage: safety ROLE --name value ...");
        }
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name, got " + args[i]);
            }
            options.put(args[i].substring(2), args[i + 1]);
        }
        String role = args[0];
        SafetyClient client = new SafetyClient(options);
        Runnable loop = switch (role) {
            case "send" -> client::producerLoop;
            case "txn" -> client::transactionalLoop;
            case "poll" -> client::consumerLoop;
            default -> throw new IllegalArgumentException("unknown role " + role);
        };
        // the Python side finds the Java clients' histories by this line of their log (client-N.log)
        System.err.printf("kafka-clients %s safety client: role %s slot %s%n", Driver.clientVersion(), role,
                options.getOrDefault("slot", "0"));
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            client.stop.countDown(); // SIGTERM: finish the operation in progress, close the client, then exit 0
            try {
                main.join();
            } catch (InterruptedException ignored) {
                // exit anyway
            }
            System.err.flush();
            Runtime.getRuntime().halt(0);
        }));
        try {
            loop.run();
        } finally {
            client.history.close();
        }
    }

    private String required(String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return value;
    }

    // -- recording -------------------------------------------------------------------------------------------

    /** Seconds since the run's start (see the class comment: one CLOCK_MONOTONIC for every process). */
    private double clock() {
        return System.nanoTime() / 1e9 - started;
    }

    /** One history line in the Recorder's field order; written whole in one write(2), so a kill -9 tears none. */
    private synchronized void record(String type, long process, String f, Object value, Object... extra)
            throws IOException {
        Map<String, Object> op = new LinkedHashMap<>();
        op.put("index", index++);
        op.put("type", type);
        op.put("process", process);
        op.put("time", Math.round(clock() * 1e6) / 1e6);
        op.put("f", f);
        op.put("value", value);
        for (int i = 0; i < extra.length; i += 2) {
            if (extra[i + 1] != null) {
                op.put((String) extra[i], extra[i + 1]);
            }
        }
        history.write((Driver.JSON.writeValueAsString(op) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private long process() {
        return nextProcess++;
    }

    private List<Long> values(int count) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(nextValue++);
        }
        return out;
    }

    private int between(int low, int high) {
        return low + rng.nextInt(high - low + 1);
    }

    private int lifetime() {
        return between(life[0], life[1]);
    }

    /** An operation of a client's life: false when the client must be replaced. */
    private interface Operation {
        boolean run() throws IOException;
    }

    /** One client's life: a lifetime of paced operations, until one fails or the run stops. */
    private void live(Operation operation) throws IOException {
        for (int i = lifetime(); i > 0; i--) {
            if (!pace() || !operation.run()) {
                return;
            }
        }
    }

    /** Wait a moment before the next operation; false once the run stops. */
    private boolean pace() {
        double seconds = pace[0] + rng.nextDouble() * (pace[1] - pace[0]);
        try {
            return !stop.await(Math.round(seconds * 1e6), TimeUnit.MICROSECONDS);
        } catch (InterruptedException e) {
            return false;
        }
    }

    private boolean stopping() {
        return stop.getCount() == 0;
    }

    private void rest() {
        try {
            stop.await(500, TimeUnit.MILLISECONDS);
        } catch (InterruptedException ignored) {
            // the loop checks stop
        }
    }

    private String key(int partition) {
        return topic + "/" + partition;
    }

    private static String describe(Throwable error) {
        Throwable cause = error instanceof ExecutionException && error.getCause() != null ? error.getCause() : error;
        return cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }

    private static void log(String format, Object... args) {
        System.err.printf(format + "%n", args);
    }

    // -- settings (kafka.py's COMMON, PRODUCER, CONSUMER) ------------------------------------------------------

    private Properties common() {
        Properties props = new Properties();
        props.put("bootstrap.servers", required("bootstrap"));
        props.put("client.id", "wirecheck-safety");
        props.put("enable.metrics.push", "false");
        props.put("request.timeout.ms", "5000");
        props.put("socket.connection.setup.timeout.ms", "5000");
        props.put("socket.connection.setup.timeout.max.ms", "5000");
        props.put("reconnect.backoff.ms", "50");
        props.put("reconnect.backoff.max.ms", "1000");
        props.put("retry.backoff.ms", "100");
        props.put("metadata.max.age.ms", "5000");
        return props;
    }

    private Properties producerSettings() {
        Properties props = common();
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        props.put("enable.idempotence", "true");
        props.put("acks", "all");
        props.put("linger.ms", "2");
        props.put("delivery.timeout.ms", "10000"); // librdkafka's message.timeout.ms
        props.put("max.block.ms", "15000"); // metadata, buffer space, the transaction calls: op-timeout
        return props;
    }

    private Properties consumerSettings() {
        Properties props = common();
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        props.put("enable.auto.commit", "false"); // no group.id: nothing to commit, nothing auto-committed
        props.put("isolation.level", "read_committed");
        props.put("auto.offset.reset", "earliest");
        props.put("fetch.max.wait.ms", "200");
        props.put("max.poll.records", String.valueOf(MAX_RECORDS));
        props.put("default.api.timeout.ms", "15000");
        return props;
    }

    // -- sends ------------------------------------------------------------------------------------------------

    private void producerLoop() {
        while (!stopping()) {
            long process = process();
            KafkaProducer<byte[], byte[]> producer;
            try {
                producer = new KafkaProducer<>(producerSettings());
            } catch (KafkaException e) {
                log("process %d: KafkaProducer: %s", process, describe(e));
                rest();
                continue;
            }
            try {
                live(() -> send(process, producer));
            } catch (IOException e) {
                throw new IllegalStateException("history: " + e, e);
            } finally {
                close(producer);
            }
        }
    }

    /** One send operation; false when the producer must be replaced. */
    private boolean send(long process, KafkaProducer<byte[], byte[]> producer) throws IOException {
        int partition = rng.nextInt(partitions);
        String key = key(partition);
        List<Long> values = values(between(1, 3));
        List<Object> invoked = new ArrayList<>();
        for (long v : values) {
            invoked.add(List.of("send", key, v));
        }
        record("invoke", process, "send", invoked);
        Map<Long, Future<RecordMetadata>> futures = new LinkedHashMap<>();
        try {
            for (long v : values) {
                futures.put(v, producer.send(new ProducerRecord<>(topic, partition, null, bytes(v))));
            }
        } catch (KafkaException e) { // before the broker: metadata not there in time, a producer failed fatally
            Delivered delivered = await(futures, 0);
            record("info", process, "send", sends(key, values, delivered), "error", "send: " + describe(e));
            return false;
        }
        Delivered delivered = await(futures, opTimeoutMs);
        if (delivered.offsets.size() == values.size() && delivered.errors.isEmpty()) {
            record("ok", process, "send", sends(key, values, delivered));
            return true;
        }
        String error = delivered.errors.isEmpty() ? "not delivered in time" : String.join("; ", delivered.errors);
        record("info", process, "send", sends(key, values, delivered), "error", error);
        return false;
    }

    /** What came back of each send: its offset, or its error; nothing for a send still in flight. */
    private record Delivered(Map<Long, Long> offsets, List<String> errors) {}

    /** Wait on every send until {@code millis} from now (kafka.py's flush(OP_TIMEOUT_S)). */
    private static Delivered await(Map<Long, Future<RecordMetadata>> futures, long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        Map<Long, Long> offsets = new HashMap<>();
        List<String> errors = new ArrayList<>();
        for (Map.Entry<Long, Future<RecordMetadata>> entry : futures.entrySet()) {
            try {
                RecordMetadata metadata = entry.getValue().get(Math.max(0, end - System.nanoTime()),
                        TimeUnit.NANOSECONDS);
                offsets.put(entry.getKey(), metadata.hasOffset() ? metadata.offset() : null);
            } catch (ExecutionException e) {
                errors.add(describe(e));
            } catch (java.util.concurrent.TimeoutException e) {
                // still in flight: neither an offset nor an error, as an undelivered value in kafka.py
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return new Delivered(offsets, errors);
    }

    /** Completed send micro-operations: [send, key, [offset or null, value]]. */
    private static List<Object> sends(String key, List<Long> values, Delivered delivered) {
        List<Object> out = new ArrayList<>();
        for (long v : values) {
            out.add(List.of("send", key, Arrays.asList(delivered.offsets.get(v), v)));
        }
        return out;
    }

    private static byte[] bytes(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private static void close(KafkaProducer<byte[], byte[]> producer) {
        try {
            producer.close(Duration.ofSeconds(5));
        } catch (KafkaException e) {
            // its last error is recorded already
        }
    }

    // -- transactions -----------------------------------------------------------------------------------------

    private void transactionalLoop() {
        while (!stopping()) {
            long process = process();
            Properties props = producerSettings();
            props.put("transactional.id", TXN_PREFIX + options.getOrDefault("slot", "0"));
            props.put("transaction.timeout.ms", "10000");
            KafkaProducer<byte[], byte[]> producer;
            try {
                producer = new KafkaProducer<>(props);
            } catch (KafkaException e) {
                log("process %d: KafkaProducer: %s", process, describe(e));
                rest();
                continue;
            }
            try {
                producer.initTransactions();
            } catch (KafkaException e) {
                log("process %d: initTransactions: %s", process, describe(e));
                close(producer);
                rest();
                continue;
            }
            try {
                live(() -> transaction(process, producer));
            } catch (IOException e) {
                throw new IllegalStateException("history: " + e, e);
            } finally {
                close(producer);
            }
        }
    }

    /** One txn operation; false when the producer is unusable (replaced). */
    private boolean transaction(long process, KafkaProducer<byte[], byte[]> producer) throws IOException {
        List<Integer> chosen = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            chosen.add(p);
        }
        java.util.Collections.shuffle(chosen, rng);
        chosen = chosen.subList(0, between(1, 2));
        List<Object[]> plan = new ArrayList<>(); // [key, partition, value]
        for (int p : chosen) {
            for (long v : values(between(1, 2))) {
                plan.add(new Object[] {key(p), p, v});
            }
        }
        List<Object> invoked = new ArrayList<>();
        for (Object[] step : plan) {
            invoked.add(List.of("send", step[0], step[2]));
        }
        record("invoke", process, "txn", invoked);
        Map<Long, Future<RecordMetadata>> futures = new LinkedHashMap<>();
        Delivered delivered = new Delivered(Map.of(), List.of());
        try {
            producer.beginTransaction();
            for (Object[] step : plan) {
                futures.put((Long) step[2], producer.send(new ProducerRecord<>(topic, (Integer) step[1], null,
                        bytes((Long) step[2]))));
            }
            delivered = await(futures, opTimeoutMs);
            boolean complete = delivered.offsets.size() == plan.size() && delivered.errors.isEmpty();
            if (rng.nextDouble() < abortChance || !complete) {
                producer.abortTransaction();
                record("fail", process, "txn", txnSends(plan, delivered), "abort", true, "error",
                        delivered.errors.isEmpty() ? null : String.join("; ", delivered.errors));
                return true;
            }
        } catch (KafkaException e) { // before any commit request: abort, and the transaction certainly failed
            String error = describe(e);
            delivered = await(futures, 0);
            try {
                producer.abortTransaction();
                record("fail", process, "txn", txnSends(plan, delivered), "abort", true, "error", error);
                return true;
            } catch (KafkaException again) {
                record("info", process, "txn", txnSends(plan, delivered), "error", error + "; abort: "
                        + describe(again));
                return false;
            }
        }
        double commitTime = Math.round(clock() * 1e6) / 1e6;
        try {
            producer.commitTransaction();
        } catch (KafkaException e) { // the commit may or may not have taken effect
            record("info", process, "txn", txnSends(plan, delivered), "error", describe(e), "commit_time", commitTime);
            return false;
        }
        record("ok", process, "txn", txnSends(plan, delivered), "commit_time", commitTime);
        return true;
    }

    private static List<Object> txnSends(List<Object[]> plan, Delivered delivered) {
        List<Object> out = new ArrayList<>();
        for (Object[] step : plan) {
            out.add(List.of("send", step[0], Arrays.asList(delivered.offsets.get((Long) step[2]), step[2])));
        }
        return out;
    }

    // -- polls ------------------------------------------------------------------------------------------------

    private void consumerLoop() {
        List<Object> keys = new ArrayList<>();
        List<TopicPartition> all = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            keys.add(key(p));
            all.add(new TopicPartition(topic, p));
        }
        try {
            while (!stopping()) {
                long process = process();
                record("invoke", process, "assign", keys);
                KafkaConsumer<byte[], byte[]> consumer;
                try {
                    consumer = new KafkaConsumer<>(consumerSettings());
                    consumer.assign(all);
                    consumer.seekToBeginning(all);
                } catch (KafkaException e) {
                    record("info", process, "assign", keys, "error", describe(e));
                    rest();
                    continue;
                }
                record("ok", process, "assign", keys);
                try {
                    live(() -> poll(process, consumer));
                } finally {
                    try {
                        consumer.close(Duration.ofSeconds(5));
                    } catch (KafkaException e) {
                        // nothing recorded depends on it
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("history: " + e, e);
        }
    }

    /** One poll operation; false (recorded info) when the consumer threw: it is replaced. */
    private boolean poll(long process, KafkaConsumer<byte[], byte[]> consumer) throws IOException {
        List<Object> invoked = List.of(List.of("poll"));
        record("invoke", process, "poll", invoked);
        Map<String, List<Object>> reads = new LinkedHashMap<>();
        try {
            for (ConsumerRecord<byte[], byte[]> m : consumer.poll(Duration.ofMillis(500))) {
                String raw = m.value() == null ? "" : new String(m.value(), StandardCharsets.UTF_8);
                Object value;
                try {
                    value = Long.parseLong(raw);
                } catch (NumberFormatException e) {
                    value = raw; // not a value we wrote: the checker finds no writer
                }
                reads.computeIfAbsent(key(m.partition()), k -> new ArrayList<>()).add(List.of(m.offset(), value));
            }
        } catch (KafkaException e) {
            record("info", process, "poll", invoked, "error", describe(e));
            return false;
        }
        record("ok", process, "poll", List.of(List.of("poll", reads)));
        return true;
    }
}
