package wirecheck.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Apache Kafka Java client (kafka-clients) driven by a job on stdin, as suites/kafka/clients/python_driver.py
 * drives the Python clients: the same jobs ({@code action}, {@code bootstrap}, optional {@code sasl}) and the same
 * results, one JSON line on stdout ({@code {"waiting_for": ...}} and status 3 when the driver's own limit passed).
 * Keys, values and header values are base64. The client's own log goes to stderr (slf4j-simple).
 *
 * <p>Which consumer: the classic one (the client's default, group.protocol=classic) in every scenario but
 * consumer-group-protocol, which is KIP-848's (group.protocol=consumer); share-group uses KafkaShareConsumer.
 *
 * <p>{@code java -jar ... safety ROLE ...} runs a client role of the Kafka safety workload instead (SafetyClient).
 */
public final class Driver {
    static final long CONSUME_MS = 20_000; // the case's own limit is longer: a driver that gives up says so
    static final long PRODUCE_MS = 10_000;
    static final List<String> CODECS = List.of("gzip", "snappy", "lz4", "zstd"); // all built into kafka-clients
    static final ObjectMapper JSON = new ObjectMapper();

    private Driver() {}

    /** The driver's own limit passed: says what it was waiting for. */
    static final class Waiting extends RuntimeException {
        Waiting(String what) {
            super(what);
        }
    }

    interface Scenario {
        void run(JsonNode job, Map<String, Object> result) throws Exception;
    }

    static final Map<String, Scenario> SCENARIOS = Map.ofEntries(
            Map.entry("describe", (job, result) -> { }),
            Map.entry("produce-consume", DataScenarios::produceConsume),
            Map.entry("group-rebalance", GroupScenarios::groupRebalance),
            Map.entry("consumer-group-protocol", GroupScenarios::consumerGroupProtocol),
            Map.entry("group-consume", GroupScenarios::groupConsume),
            Map.entry("transactions", DataScenarios::transactions),
            Map.entry("transactions-v2", DataScenarios::transactions),
            Map.entry("admin", AdminScenarios::admin),
            Map.entry("cluster-admin", AdminScenarios::clusterAdmin),
            Map.entry("group-admin", AdminScenarios::groupAdmin),
            Map.entry("share-group", ShareScenario::shareGroup),
            Map.entry("telemetry", DataScenarios::telemetry));

    public static void main(String[] args) throws IOException {
        if (args.length > 0 && args[0].equals("safety")) { // a client role of the safety workload: SafetyClient
            try {
                SafetyClient.main(java.util.Arrays.copyOfRange(args, 1, args.length));
            } catch (Throwable failure) {
                failure.printStackTrace();
                System.err.flush();
                Runtime.getRuntime().halt(1);
            }
            return;
        }
        JsonNode job = JSON.readTree(System.in);
        String action = job.path("action").asText("describe");
        // the scenarios judged by the requests the client sent and the answers it got read them from its own
        // NetworkClient log (RequestLog), set up before any logger exists
        if (action.equals("transactions-v2") || action.equals("telemetry")) {
            RequestLog.install();
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("client", "java");
        result.put("version", clientVersion());
        result.put("codecs", CODECS);
        int status = 0;
        try {
            Scenario scenario = SCENARIOS.get(action);
            if (scenario == null) {
                throw new IllegalArgumentException("unknown action " + action);
            }
            scenario.run(job, result);
        } catch (Waiting waiting) {
            result = Map.of("waiting_for", waiting.getMessage());
            status = 3;
        } catch (Throwable failure) {
            failure.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
        System.out.println(JSON.writeValueAsString(result));
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(status); // a client's threads must not keep the process
    }

    /** kafka-clients' version, as its jar states it (kafka/kafka-version.properties). */
    static String clientVersion() throws IOException {
        Properties props = new Properties();
        try (var in = KafkaConsumer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            props.load(in);
        }
        return props.getProperty("version", "unknown");
    }

    // -- settings ------------------------------------------------------------------------------------------

    /** Where the server is and how to log in (the job's ``sasl``: every client of the job logs in with it). */
    static Properties server(JsonNode job, String clientId) {
        Properties props = new Properties();
        props.put("bootstrap.servers", job.get("bootstrap").asText());
        props.put("client.id", clientId(job, clientId));
        JsonNode sasl = job.get("sasl");
        if (sasl != null && !sasl.isNull()) {
            String mechanism = sasl.get("mechanism").asText();
            String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                    : "org.apache.kafka.common.security.scram.ScramLoginModule";
            props.put("security.protocol", "SASL_PLAINTEXT");
            props.put("sasl.mechanism", mechanism);
            props.put("sasl.jaas.config", module + " required username=\"" + jaas(sasl.get("username").asText())
                    + "\" password=\"" + jaas(sasl.get("password").asText()) + "\";");
        }
        return props;
    }

    /**
     * The client id a client of the job sends for {@code role}: "&lt;the job's client_id&gt;/&lt;role&gt;" (the suite's
     * capture keeps the connections that name the job's id, and the driver still tells its clients apart), else
     * the role alone.
     */
    static String clientId(JsonNode job, String role) {
        JsonNode id = job.get("client_id");
        return id == null || id.isNull() || id.asText().isEmpty() ? role : id.asText() + "/" + role;
    }

    private static String jaas(String text) {
        return text.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    static Properties producer(JsonNode job, String clientId) {
        Properties props = server(job, clientId);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        props.put("max.block.ms", String.valueOf(CONSUME_MS)); // metadata it waits for: within the driver's limit
        return props;
    }

    static Properties consumer(JsonNode job, String clientId) {
        Properties props = server(job, clientId);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return props;
    }

    /** A member of the job's group that reads from the start and commits only when told, as every scenario's. */
    static Properties groupConsumer(JsonNode job, String clientId) {
        Properties props = consumer(job, clientId);
        props.put("group.id", job.get("group").asText());
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        return props;
    }

    // -- values --------------------------------------------------------------------------------------------

    static byte[] raw(JsonNode text) {
        return text == null || text.isNull() ? null : Base64.getDecoder().decode(text.asText());
    }

    static String b64(byte[] data) {
        return data == null ? null : Base64.getEncoder().encodeToString(data);
    }

    static List<byte[]> values(JsonNode job) {
        List<byte[]> values = new ArrayList<>();
        job.get("values").forEach(v -> values.add(raw(v)));
        return values;
    }

    static Map<String, Object> consumedRecord(ConsumerRecord<byte[], byte[]> m) {
        List<List<String>> headers = new ArrayList<>();
        for (Header header : m.headers()) {
            headers.add(java.util.Arrays.asList(header.key(), b64(header.value() == null ? new byte[0]
                    : header.value())));
        }
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("partition", m.partition());
        record.put("offset", m.offset());
        record.put("key", b64(m.key()));
        record.put("value", b64(m.value()));
        record.put("headers", headers);
        record.put("timestamp", m.timestamp());
        return record;
    }

    // -- waiting -------------------------------------------------------------------------------------------

    static void waitUntil(BooleanSupplier condition, String what, long millis, Runnable check)
            throws InterruptedException {
        long end = System.currentTimeMillis() + millis;
        while (!condition.getAsBoolean()) {
            if (check != null) {
                check.run();
            }
            if (System.currentTimeMillis() > end) {
                throw new Waiting(what);
            }
            Thread.sleep(50);
        }
    }
}
