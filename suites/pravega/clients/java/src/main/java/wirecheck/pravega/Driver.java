package wirecheck.pravega;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pravega.client.ByteStreamClientFactory;
import io.pravega.client.ClientConfig;
import io.pravega.client.EventStreamClientFactory;
import io.pravega.client.KeyValueTableFactory;
import io.pravega.client.admin.KeyValueTableManager;
import io.pravega.client.admin.ReaderGroupManager;
import io.pravega.client.admin.StreamManager;
import io.pravega.client.byteStream.ByteStreamReader;
import io.pravega.client.byteStream.ByteStreamWriter;
import io.pravega.client.stream.EventRead;
import io.pravega.client.stream.EventStreamReader;
import io.pravega.client.stream.EventStreamWriter;
import io.pravega.client.stream.EventWriterConfig;
import io.pravega.client.stream.ReaderConfig;
import io.pravega.client.stream.ReaderGroupConfig;
import io.pravega.client.stream.ScalingPolicy;
import io.pravega.client.stream.Stream;
import io.pravega.client.stream.StreamConfiguration;
import io.pravega.client.stream.Transaction;
import io.pravega.client.stream.TransactionalEventStreamWriter;
import io.pravega.client.stream.impl.ByteBufferSerializer;
import io.pravega.client.tables.Insert;
import io.pravega.client.tables.KeyValueTable;
import io.pravega.client.tables.KeyValueTableClientConfiguration;
import io.pravega.client.tables.KeyValueTableConfiguration;
import io.pravega.client.tables.Put;
import io.pravega.client.tables.Remove;
import io.pravega.client.tables.TableEntry;
import io.pravega.client.tables.TableKey;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Pravega Java client (pravega-client) driven by a job on stdin, as suites/pravega/clients/pravega_driver.py drives
 * the Python binding: the same jobs ({@code action}, {@code controller} "tcp://HOST:PORT", {@code scope},
 * {@code stream}) and the same results, one JSON line on stdout, the last. Before each step that can block the driver
 * prints a {@code {"waiting_for": ...}} line, so a run stopped at the case's limit says what never came. Events and
 * bytes are base64. The client's own log goes to stderr (slf4j-simple).
 */
public final class Driver {
    static final long READ_MS = 20_000; // the case's own limit is longer: a reader that gives up says so
    static final long STEP_SECONDS = 20; // a future the client completes when the server answered
    static final ObjectMapper JSON = new ObjectMapper();
    static final ByteBufferSerializer BYTES = new ByteBufferSerializer();

    private Driver() {}

    interface Scenario {
        void run(JsonNode job, ClientConfig config, Map<String, Object> result) throws Exception;
    }

    static final Map<String, Scenario> SCENARIOS = Map.of(
            "write-read", Driver::writeRead,
            "byte-stream", Driver::byteStream,
            "stream-lifecycle", Driver::streamLifecycle,
            "transaction", Driver::transaction,
            "key-value-table", Driver::keyValueTable);

    public static void main(String[] args) throws IOException {
        JsonNode job = JSON.readTree(System.in);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("client", "pravega-java");
        result.put("version", clientVersion());
        ClientConfig config = ClientConfig.builder().controllerURI(URI.create(job.path("controller").asText())).build();
        int status = 0;
        try {
            Scenario scenario = SCENARIOS.get(job.path("action").asText());
            if (scenario == null) {
                throw new IllegalArgumentException("unknown action " + job.path("action").asText());
            }
            scenario.run(job, config, result);
        } catch (Exception e) {
            result.put("error", errorOf(e));
            System.err.println("driver: the scenario failed: " + errorOf(e)); // the log tail a verdict shows
            status = 1;
        }
        System.out.println(JSON.writeValueAsString(result));
        System.out.flush();
        System.exit(status); // the client's thread pools are not daemons
    }

    static String clientVersion() {
        String version = ClientConfig.class.getPackage().getImplementationVersion();
        return version != null ? version : "unknown"; // the case records the version pom.xml pins
    }

    static void waiting(String what) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("waiting_for", what);
        try {
            System.out.println(JSON.writeValueAsString(line));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        System.out.flush();
    }

    static byte[] raw(JsonNode text) {
        return Base64.getDecoder().decode(text.asText());
    }

    static String b64(byte[] data) {
        return Base64.getEncoder().encodeToString(data);
    }

    static byte[] bytesOf(ByteBuffer buffer) {
        byte[] data = new byte[buffer.remaining()];
        buffer.duplicate().get(data);
        return data;
    }

    static String errorOf(Exception e) {
        Throwable cause = e;
        while (cause.getCause() != null && (cause instanceof java.util.concurrent.ExecutionException
                || cause instanceof java.util.concurrent.CompletionException)) {
            cause = cause.getCause();
        }
        return cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }

    static StreamConfiguration segments(int count) {
        return StreamConfiguration.builder().scalingPolicy(ScalingPolicy.fixed(count)).build();
    }

    /** Scope and stream created (each creation's answer: true when it created). */
    static List<Boolean> create(StreamManager streams, String scope, String stream, int count) {
        waiting("the creation of scope " + scope + " and stream " + stream + " at the controller");
        return List.of(streams.createScope(scope), streams.createStream(scope, stream, segments(count)));
    }

    /** Reads {@code count} events through a new reader group's one reader; fewer when it gives up. */
    static List<byte[]> readAll(String scope, String stream, String group, ClientConfig config, int count) {
        List<byte[]> events = new ArrayList<>();
        waiting("the creation of reader group " + group);
        try (ReaderGroupManager groups = ReaderGroupManager.withScope(scope, config);
             EventStreamClientFactory factory = EventStreamClientFactory.withScope(scope, config)) {
            groups.createReaderGroup(group, ReaderGroupConfig.builder().stream(Stream.of(scope, stream)).build());
            try (EventStreamReader<ByteBuffer> reader = factory.createReader("reader-0", group, BYTES,
                    ReaderConfig.builder().build())) {
                long deadline = System.currentTimeMillis() + READ_MS;
                while (events.size() < count && System.currentTimeMillis() < deadline) {
                    waiting("event " + (events.size() + 1) + " of " + count + " through the reader group");
                    EventRead<ByteBuffer> read = reader.readNextEvent(1000);
                    if (read.getEvent() != null) {
                        events.add(bytesOf(read.getEvent()));
                    }
                }
            }
        }
        return events;
    }

    static List<String> encoded(List<byte[]> events) {
        List<String> shown = new ArrayList<>();
        for (byte[] event : events) {
            shown.add(b64(event));
        }
        return shown;
    }

    static void writeRead(JsonNode job, ClientConfig config, Map<String, Object> result) throws Exception {
        String scope = job.path("scope").asText();
        String stream = job.path("stream").asText();
        int count = job.path("keyless").size() + 1;
        try (StreamManager streams = StreamManager.create(config)) {
            result.put("created", create(streams, scope, stream, 2));
        }
        try (EventStreamClientFactory factory = EventStreamClientFactory.withScope(scope, config);
             EventStreamWriter<ByteBuffer> writer = factory.createEventWriter(stream, BYTES,
                     EventWriterConfig.builder().build())) {
            waiting("the writer's appends");
            for (JsonNode event : job.path("keyless")) {
                writer.writeEvent(ByteBuffer.wrap(raw(event)));
            }
            Map<String, List<byte[]>> keyed = new LinkedHashMap<>();
            int longest = 0;
            for (Iterator<Map.Entry<String, JsonNode>> it = job.path("keyed").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> key = it.next();
                List<byte[]> events = new ArrayList<>();
                key.getValue().forEach(event -> events.add(raw(event)));
                keyed.put(key.getKey(), events);
                longest = Math.max(longest, events.size());
                count += events.size();
            }
            for (int i = 0; i < longest; i++) { // the keys' events interleaved
                for (Map.Entry<String, List<byte[]>> key : keyed.entrySet()) {
                    if (i < key.getValue().size()) {
                        writer.writeEvent(key.getKey(), ByteBuffer.wrap(key.getValue().get(i)));
                    }
                }
            }
            writer.writeEvent(ByteBuffer.wrap(job.path("text").asText().getBytes(StandardCharsets.UTF_8)));
            waiting("the writer's flush");
            writer.flush();
        }
        List<byte[]> read = readAll(scope, stream, job.path("group").asText(), config, count);
        result.put("read", encoded(read));
        if (read.size() < count) {
            result.put("waiting_for", "event " + (read.size() + 1) + " of " + count + " through the reader group "
                    + "after " + READ_MS / 1000 + " s");
        }
    }

    static void byteStream(JsonNode job, ClientConfig config, Map<String, Object> result) throws Exception {
        String scope = job.path("scope").asText();
        String stream = job.path("stream").asText();
        byte[] data = raw(job.path("data"));
        int chunk = job.path("chunk").asInt();
        try (StreamManager streams = StreamManager.create(config)) {
            result.put("created", create(streams, scope, stream, 1)); // a byte stream: one segment
        }
        try (ByteStreamClientFactory factory = ByteStreamClientFactory.withScope(scope, config)) {
            try (ByteStreamWriter writer = factory.createByteStreamWriter(stream)) {
                waiting("the byte stream's writes");
                for (int start = 0; start < data.length; start += chunk) {
                    writer.write(data, start, Math.min(chunk, data.length - start));
                }
                waiting("the byte stream's flush");
                writer.flush();
                result.put("tail", writer.fetchTailOffset());
            }
            try (ByteStreamReader reader = factory.createByteStreamReader(stream)) {
                byte[] received = new byte[data.length];
                int got = 0;
                while (got < data.length) {
                    waiting("bytes from offset " + got + " of " + data.length);
                    int n = reader.read(received, got, data.length - got);
                    if (n <= 0) {
                        break;
                    }
                    got += n;
                }
                result.put("read", b64(java.util.Arrays.copyOf(received, got)));
                int length = job.path("length").asInt();
                reader.seekToOffset(job.path("from").asLong());
                byte[] part = new byte[length];
                waiting(length + " bytes from offset " + job.path("from").asLong());
                int n = reader.read(part);
                result.put("part", b64(java.util.Arrays.copyOf(part, Math.max(n, 0))));
            }
        }
    }

    static void streamLifecycle(JsonNode job, ClientConfig config, Map<String, Object> result) throws Exception {
        String scope = job.path("scope").asText();
        String stream = job.path("stream").asText();
        try (StreamManager streams = StreamManager.create(config)) {
            waiting("the creation of scope " + scope + " and stream " + stream + ", twice each");
            result.put("scope_created", List.of(streams.createScope(scope), streams.createScope(scope)));
            result.put("stream_created", List.of(streams.createStream(scope, stream, segments(2)),
                    streams.createStream(scope, stream, segments(2))));
            try (EventStreamClientFactory factory = EventStreamClientFactory.withScope(scope, config);
                 EventStreamWriter<ByteBuffer> writer = factory.createEventWriter(stream, BYTES,
                         EventWriterConfig.builder().retryAttempts(2).build())) {
                waiting("an event written and flushed");
                result.put("written", attempt(() -> {
                    writer.writeEvent(ByteBuffer.wrap("before the seal".getBytes(StandardCharsets.UTF_8)))
                            .get(STEP_SECONDS, TimeUnit.SECONDS);
                }));
                waiting("the seal");
                result.put("sealed", streams.sealStream(scope, stream));
                waiting("an event written after the seal");
                result.put("written_after_seal", attempt(() -> {
                    writer.writeEvent(ByteBuffer.wrap("after the seal".getBytes(StandardCharsets.UTF_8)))
                            .get(STEP_SECONDS, TimeUnit.SECONDS);
                }));
            }
            waiting("the deletion of the stream and the scope");
            result.put("deleted", List.of(streams.deleteStream(scope, stream), streams.deleteScope(scope)));
        }
    }

    interface Step {
        void run() throws Exception;
    }

    /** null when the step succeeded, else the client's error. */
    static String attempt(Step step) {
        try {
            step.run();
            return null;
        } catch (Exception e) {
            return errorOf(e);
        }
    }

    /**
     * Two transactions on one stream: the first written and committed, the second written and aborted; then what a
     * reader group reads (only the committed events, in order) and the transactions' states as the client sees them.
     */
    static void transaction(JsonNode job, ClientConfig config, Map<String, Object> result) throws Exception {
        String scope = job.path("scope").asText();
        String stream = job.path("stream").asText();
        List<byte[]> committed = new ArrayList<>();
        job.path("committed").forEach(event -> committed.add(raw(event)));
        List<byte[]> aborted = new ArrayList<>();
        job.path("aborted").forEach(event -> aborted.add(raw(event)));
        try (StreamManager streams = StreamManager.create(config)) {
            result.put("created", create(streams, scope, stream, 1));
        }
        try (EventStreamClientFactory factory = EventStreamClientFactory.withScope(scope, config);
             TransactionalEventStreamWriter<ByteBuffer> writer = factory.createTransactionalEventWriter(
                     "writer-0", stream, BYTES, EventWriterConfig.builder().transactionTimeoutTime(60_000).build())) {
            waiting("the first transaction's begin at the controller");
            Transaction<ByteBuffer> first = writer.beginTxn();
            waiting("the second transaction's begin at the controller");
            Transaction<ByteBuffer> second = writer.beginTxn();
            result.put("distinct_ids", !first.getTxnId().equals(second.getTxnId()));
            waiting("the transactions' writes");
            for (byte[] event : committed) {
                first.writeEvent("key", ByteBuffer.wrap(event));
            }
            for (byte[] event : aborted) {
                second.writeEvent("key", ByteBuffer.wrap(event));
            }
            waiting("the first transaction's commit");
            first.commit();
            waiting("the second transaction's abort");
            second.abort();
            waiting("the transactions' final states");
            result.put("states", List.of(settled(first).toString(), settled(second).toString()));
        }
        List<byte[]> read = readAll(scope, stream, job.path("group").asText(), config, committed.size());
        result.put("read", encoded(read));
    }

    /** A transaction's state once it left COMMITTING or ABORTING (the controller finishes them in the background). */
    static Transaction.Status settled(Transaction<ByteBuffer> txn) throws InterruptedException {
        long deadline = System.currentTimeMillis() + STEP_SECONDS * 1000;
        Transaction.Status status = txn.checkStatus();
        while ((status == Transaction.Status.COMMITTING || status == Transaction.Status.ABORTING)
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(200);
            status = txn.checkStatus();
        }
        return status;
    }

    /**
     * A key-value table created at the controller; entries inserted, an insert of an existing key refused, one
     * updated (conditionally on its version), an update at its old version refused, one removed, everything read
     * back; then the table and its scope deleted.
     */
    static void keyValueTable(JsonNode job, ClientConfig config, Map<String, Object> result) throws Exception {
        String scope = job.path("scope").asText();
        String table = job.path("table").asText();
        int keyLength = job.path("key_length").asInt();
        try (StreamManager streams = StreamManager.create(config);
             KeyValueTableManager tables = KeyValueTableManager.create(config)) {
            waiting("the creation of scope " + scope + " and key-value table " + table);
            KeyValueTableConfiguration shape = KeyValueTableConfiguration.builder().partitionCount(2)
                    .primaryKeyLength(keyLength).secondaryKeyLength(0).build();
            result.put("created", List.of(streams.createScope(scope), tables.createKeyValueTable(scope, table, shape)));
        }
        try (KeyValueTableFactory factory = KeyValueTableFactory.withScope(scope, config);
             KeyValueTable kvt = factory.forKeyValueTable(table, KeyValueTableClientConfiguration.builder().build())) {
            Map<String, Object> entries = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = job.path("entries").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> entry = it.next();
                byte[] key = raw(new com.fasterxml.jackson.databind.node.TextNode(entry.getKey()));
                waiting("the insert of a key");
                kvt.update(new Insert(new TableKey(ByteBuffer.wrap(key)), ByteBuffer.wrap(raw(entry.getValue()))))
                        .get(STEP_SECONDS, TimeUnit.SECONDS);
                entries.put(entry.getKey(), entry.getValue().asText());
            }
            String first = entries.keySet().iterator().next();
            TableKey firstKey = new TableKey(ByteBuffer.wrap(raw(new com.fasterxml.jackson.databind.node.TextNode(first))));
            waiting("a second insert of the first key");
            result.put("insert_existing", attempt(() -> kvt.update(new Insert(firstKey,
                    ByteBuffer.wrap(new byte[] {1}))).get(STEP_SECONDS, TimeUnit.SECONDS)));
            waiting("the first key read");
            TableEntry before = kvt.get(firstKey).get(STEP_SECONDS, TimeUnit.SECONDS);
            waiting("the first key updated at its version");
            kvt.update(new Put(firstKey, ByteBuffer.wrap(raw(job.path("updated"))), before.getVersion()))
                    .get(STEP_SECONDS, TimeUnit.SECONDS);
            waiting("an update at the first key's old version");
            result.put("stale_update", attempt(() -> kvt.update(new Put(firstKey, ByteBuffer.wrap(new byte[] {2}),
                    before.getVersion())).get(STEP_SECONDS, TimeUnit.SECONDS)));
            String removed = job.path("remove").asText();
            waiting("the removal of a key");
            kvt.update(new Remove(new TableKey(ByteBuffer.wrap(raw(job.path("remove"))))))
                    .get(STEP_SECONDS, TimeUnit.SECONDS);
            Map<String, Object> found = new LinkedHashMap<>();
            for (String key : entries.keySet()) {
                waiting("the key read back");
                TableEntry entry = kvt.get(new TableKey(ByteBuffer.wrap(
                        raw(new com.fasterxml.jackson.databind.node.TextNode(key))))).get(STEP_SECONDS, TimeUnit.SECONDS);
                found.put(key, entry == null ? null : b64(bytesOf(entry.getValue())));
            }
            result.put("read", found);
            result.put("removed", removed);
        }
        try (StreamManager streams = StreamManager.create(config);
             KeyValueTableManager tables = KeyValueTableManager.create(config)) {
            waiting("the deletion of key-value table " + table + " and scope " + scope);
            result.put("deleted", List.of(tables.deleteKeyValueTable(scope, table), streams.deleteScope(scope)));
        }
    }
}
