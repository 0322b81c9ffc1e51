package wirecheck.kafka;

import static wirecheck.kafka.Driver.CONSUME_MS;
import static wirecheck.kafka.Driver.PRODUCE_MS;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/** admin, cluster-admin and group-admin, with the client's Admin (KafkaAdminClient). */
final class AdminScenarios {
    static final String ALTERED_NAME = "retention.ms";
    static final String ALTERED_VALUE = "3600000";

    private AdminScenarios() {}

    static Admin admin(JsonNode job) {
        return Admin.create(Driver.server(job, "wirecheck-java-admin")); // each call bounded by get()
    }

    static <T> T get(org.apache.kafka.common.KafkaFuture<T> future) throws Exception {
        return future.get(CONSUME_MS, TimeUnit.MILLISECONDS);
    }

    /** {@code topic}: created (2 partitions), described, retention.ms altered (IncrementalAlterConfigs: the client
     * has no other call since 4.0) and described again, deleted. Gives partitions, before, after,
     * listed_after_delete. */
    static void admin(JsonNode job, Map<String, Object> result) throws Exception {
        String topic = job.get("topic").asText();
        try (Admin admin = admin(job)) {
            get(admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all());
            result.put("partitions", get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic)
                    .partitions().size());
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            result.put("before", config(admin, resource));
            get(admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry(ALTERED_NAME, ALTERED_VALUE), AlterConfigOp.OpType.SET)))).all());
            result.put("after", config(admin, resource));
            get(admin.deleteTopics(List.of(topic)).all());
            result.put("listed_after_delete", get(admin.listTopics().names()).contains(topic));
        }
    }

    private static String config(Admin admin, ConfigResource resource) throws Exception {
        ConfigEntry entry = get(admin.describeConfigs(List.of(resource)).all()).get(resource).get(ALTERED_NAME);
        return entry == null ? null : entry.value();
    }

    /** {@code topic} (one partition), {@code values} produced to it, grown to {@code grow_to} partitions and
     * described, partition 0's records below {@code delete_below} deleted, the cluster described (DescribeCluster,
     * or Metadata where the server has no DescribeCluster). Gives partitions and brokers ([id, host, port]). */
    static void clusterAdmin(JsonNode job, Map<String, Object> result) throws Exception {
        String topic = job.get("topic").asText();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Driver.producer(job, "wirecheck-java-producer"))) {
            for (byte[] value : Driver.values(job)) {
                producer.send(new ProducerRecord<>(topic, 0, null, value)).get(PRODUCE_MS, TimeUnit.MILLISECONDS);
            }
        }
        try (Admin admin = admin(job)) {
            get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(job.get("grow_to").asInt()))).all());
            result.put("partitions", get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic)
                    .partitions().size());
            get(admin.deleteRecords(Map.of(new TopicPartition(topic, 0),
                    RecordsToDelete.beforeOffset(job.get("delete_below").asLong()))).all());
            List<List<Object>> brokers = new ArrayList<>();
            for (Node node : get(admin.describeCluster().nodes())) {
                brokers.add(List.of(node.id(), node.host(), node.port()));
            }
            result.put("brokers", brokers);
        }
    }

    /** {@code topic}, {@code group}, {@code offset}: the offset committed for partition 0 by a consumer of the group
     * (assigned, not subscribed), the groups listed, the group's offsets read, the group deleted and the groups
     * listed again. Gives listed, offset (null: none) and listed_after_delete. */
    static void groupAdmin(JsonNode job, Map<String, Object> result) throws Exception {
        String group = job.get("group").asText();
        TopicPartition partition = new TopicPartition(job.get("topic").asText(), 0);
        Properties props = Driver.consumer(job, "wirecheck-java-consumer");
        props.put("group.id", group);
        props.put("enable.auto.commit", "false");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(partition));
            consumer.commitSync(Map.of(partition, new OffsetAndMetadata(job.get("offset").asLong())));
        }
        try (Admin admin = admin(job)) {
            result.put("listed", listed(admin, group));
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            OffsetAndMetadata offset = offsets.get(partition);
            result.put("offset", offset == null || offset.offset() < 0 ? null : offset.offset());
            get(admin.deleteConsumerGroups(Set.of(group)).all());
            result.put("listed_after_delete", listed(admin, group));
        }
    }

    private static boolean listed(Admin admin, String group) throws Exception {
        for (GroupListing listing : get(admin.listGroups().all())) {
            if (listing.groupId().equals(group)) {
                return true;
            }
        }
        return false;
    }
}
