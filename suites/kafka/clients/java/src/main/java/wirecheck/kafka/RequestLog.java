package wirecheck.kafka;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the client itself says it sent and got: NetworkClient's debug log names every request it sends ("Sending
 * END_TXN request with header RequestHeader(apiKey=END_TXN, apiVersion=5, clientId=...") and every answer it gets
 * with its decoded body ("Received PUSH_TELEMETRY response from node 1 for request with header ...: ..."). The
 * conversation is the client's alone, so this is how a case learns which versions it negotiated and what the
 * broker answered, against any Kafka-compatible target.
 *
 * <p>install() turns that log on and takes its lines out of stderr (they would bury the client's own warnings);
 * every other line goes on to stderr. The telemetry reporter's warnings and errors are kept too.
 */
final class RequestLog {
    private static final Pattern EXCHANGE = Pattern.compile(
            "(Sending|Received) \\w+ (?:request|response).*?RequestHeader\\(apiKey=(\\w+), apiVersion=(\\d+), "
            + "clientId=([^,]*), correlationId=(-?\\d+)[^)]*\\)(.*)");
    private static final Pattern ERROR_CODE = Pattern.compile("errorCode=(-?\\d+)");
    private static final Pattern INTERVAL = Pattern.compile("pushIntervalMs=(-?\\d+)");
    private static final Pattern REQUESTED = Pattern.compile("requestedMetrics=\\[([^\\]]*)\\]");
    private static final String NETWORK_CLIENT = "org.apache.kafka.clients.NetworkClient";
    private static final String TELEMETRY_LOGGERS = "org.apache.kafka.common.telemetry";
    // ClientTelemetryUtils.getSelectorFromRequestedMetrics says how it read RequestedMetrics: the answer's toString
    // cannot tell [] (no metrics) from [""] (every metric, KIP-714), both "[]"
    private static final String SELECTOR = "org.apache.kafka.common.telemetry.internals.ClientTelemetryUtils";
    private static final String NO_METRICS = "specified no metric names";
    private static volatile boolean noMetricsSelected;

    /** One request sent or answer received: sent, API name, version, client id, the answer's body. */
    record Exchange(boolean sent, String api, int version, String clientId, String body) {}

    private static final List<Exchange> EXCHANGES = new ArrayList<>();
    private static final List<String> TELEMETRY_WARNINGS = new ArrayList<>();
    private static volatile boolean installed;

    private RequestLog() {}

    static synchronized void install() {
        System.setProperty("org.slf4j.simpleLogger.log." + NETWORK_CLIENT, "debug");
        System.setProperty("org.slf4j.simpleLogger.log." + SELECTOR, "debug");
        PrintStream stderr = System.err;
        System.setErr(new PrintStream(new LineSplitter(stderr), true, StandardCharsets.UTF_8));
        installed = true;
    }

    static boolean installed() {
        return installed;
    }

    private static synchronized void line(String line, PrintStream stderr) {
        if (line.contains(SELECTOR) && line.contains(" DEBUG ")) {
            noMetricsSelected |= line.contains(NO_METRICS);
            return;
        }
        if (!line.contains(NETWORK_CLIENT)) {
            if (line.contains(TELEMETRY_LOGGERS) && (line.contains(" WARN ") || line.contains(" ERROR "))) {
                TELEMETRY_WARNINGS.add(line);
            }
            stderr.println(line);
            return;
        }
        Matcher m = EXCHANGE.matcher(line);
        if (m.find()) {
            EXCHANGES.add(new Exchange(m.group(1).equals("Sending"), m.group(2), Integer.parseInt(m.group(3)),
                    m.group(4), m.group(6)));
        } else if (!line.contains(" DEBUG ")) {
            stderr.println(line); // NetworkClient's own warnings stay in the log
        }
    }

    /** API name -> the versions of the requests {@code clientId} sent. */
    static synchronized Map<String, List<Integer>> versionsSent(String clientId) {
        Map<String, TreeSet<Integer>> sent = new TreeMap<>();
        for (Exchange e : EXCHANGES) {
            if (e.sent() && e.clientId().equals(clientId)) {
                sent.computeIfAbsent(e.api(), k -> new TreeSet<>()).add(e.version());
            }
        }
        Map<String, List<Integer>> out = new TreeMap<>();
        sent.forEach((api, versions) -> out.put(api, new ArrayList<>(versions)));
        return out;
    }

    private static List<Exchange> answers(String clientId, String api) {
        List<Exchange> out = new ArrayList<>();
        for (Exchange e : EXCHANGES) {
            if (!e.sent() && e.clientId().equals(clientId) && e.api().equals(api)) {
                out.add(e);
            }
        }
        return out;
    }

    private static int errorCode(Exchange answer) {
        Matcher m = ERROR_CODE.matcher(answer.body());
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /**
     * One client's telemetry as confluent_telemetry.py reports librdkafka's: the GetTelemetrySubscriptions answers
     * without an error, the PushIntervalMs and the number of requested metrics of the last, the pushes accepted,
     * and every failure (an answer with an error, a warning of the telemetry reporter).
     */
    static synchronized Map<String, Object> telemetry(String clientId) {
        List<String> failures = new ArrayList<>();
        int subscriptions = 0;
        Integer interval = null;
        Integer requested = null;
        for (Exchange answer : answers(clientId, "GET_TELEMETRY_SUBSCRIPTIONS")) {
            if (errorCode(answer) != 0) {
                failures.add("GetTelemetrySubscriptions answered" + answer.body());
                continue;
            }
            subscriptions++;
            Matcher m = INTERVAL.matcher(answer.body());
            interval = m.find() ? Integer.valueOf(m.group(1)) : interval;
            Matcher r = REQUESTED.matcher(answer.body());
            if (r.find()) {
                // "[]": none, or the one empty prefix that selects every metric, as the client read it
                requested = r.group(1).isEmpty() ? (noMetricsSelected ? 0 : 1) : r.group(1).split(", ", -1).length;
            }
        }
        int pushes = 0;
        for (Exchange answer : answers(clientId, "PUSH_TELEMETRY")) {
            if (errorCode(answer) == 0) {
                pushes++;
            } else {
                failures.add("PushTelemetry answered" + answer.body());
            }
        }
        for (String warning : TELEMETRY_WARNINGS) {
            if (warning.contains(clientId) || !warning.contains("clientId=")) {
                failures.add(warning);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("subscriptions", subscriptions);
        out.put("push_interval_ms", interval);
        out.put("requested_metrics", requested);
        out.put("pushes_accepted", pushes);
        out.put("failures", failures.subList(0, Math.min(10, failures.size())));
        return out;
    }

    /** Nothing more to wait for: a push accepted, a failure seen, or a subscription asking for no metrics. */
    static synchronized boolean telemetrySettled(String clientId) {
        Map<String, Object> seen = telemetry(clientId);
        return (int) seen.get("pushes_accepted") > 0 || !((List<?>) seen.get("failures")).isEmpty()
                || Integer.valueOf(0).equals(seen.get("requested_metrics"));
    }

    /** Hands stderr's bytes on line by line. */
    private static final class LineSplitter extends OutputStream {
        private final PrintStream stderr;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        LineSplitter(PrintStream stderr) {
            this.stderr = stderr;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                line(pending.toString(StandardCharsets.UTF_8), stderr);
                pending.reset();
            } else {
                pending.write(b);
            }
        }

        @Override
        public synchronized void flush() {
            stderr.flush();
        }
    }
}
