package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/IBM/sarama"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// describeTopic: the topic's partitions (Metadata), asked again while the broker does not know the topic yet, or
// knows fewer than want partitions
func describeTopic(adm sarama.ClusterAdmin, topic string, want int) (int, error) {
	var partitions int
	err := driver.Settle(func() (bool, error) {
		described, err := adm.DescribeTopics([]string{topic})
		if err != nil {
			return false, err
		}
		if len(described) != 1 {
			return false, fmt.Errorf("%d topics described", len(described))
		}
		if errors.Is(described[0].Err, sarama.ErrUnknownTopicOrPartition) ||
			errors.Is(described[0].Err, sarama.ErrLeaderNotAvailable) {
			return false, nil
		}
		if !errors.Is(described[0].Err, sarama.ErrNoError) {
			return false, described[0].Err
		}
		partitions = len(described[0].Partitions)
		return partitions >= want, nil
	})
	return partitions, err
}

// admin: a topic created (CreateTopics), described (Metadata), a config altered (AlterConfig: AlterConfigs) and
// described again (DescribeConfigs), the topic deleted and the topics listed
func admin(j *driver.Job, result map[string]any) error {
	adm, err := sarama.NewClusterAdmin(brokers(j), config(j))
	if err != nil {
		return err
	}
	defer adm.Close()
	if err := adm.CreateTopic(j.Topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if result["partitions"], err = describeTopic(adm, j.Topic, 2); err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	config := func() (any, error) {
		entries, err := adm.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: j.Topic,
			ConfigNames: []string{driver.Altered[0]}})
		if err != nil {
			return nil, err
		}
		for _, entry := range entries {
			if entry.Name == driver.Altered[0] {
				return entry.Value, nil
			}
		}
		return nil, nil
	}
	if result["before"], err = config(); err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	if err := adm.AlterConfig(sarama.TopicResource, j.Topic, map[string]*string{driver.Altered[0]: &driver.Altered[1]},
		false); err != nil {
		return fmt.Errorf("alter configs: %w", err)
	}
	if err = driver.Settle(func() (bool, error) {
		result["after"], err = config()
		return result["after"] == driver.Altered[1], err
	}); err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	if err := adm.DeleteTopic(j.Topic); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err = driver.Settle(func() (bool, error) {
		listed, err := adm.ListTopics()
		_, result["listed_after_delete"] = listed[j.Topic]
		return result["listed_after_delete"] == false, err
	}); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	return nil
}

// cluster-admin: the values produced to partition 0, the topic grown (CreatePartitions) and described, partition
// 0's records below delete_below deleted (DeleteRecords), the cluster's brokers described (DescribeCluster:
// Metadata)
func clusterAdmin(j *driver.Job, result map[string]any) error {
	if err := produceValues(j, j.Topic, j.Values, 0, 1); err != nil {
		return err
	}
	adm, err := sarama.NewClusterAdmin(brokers(j), config(j))
	if err != nil {
		return err
	}
	defer adm.Close()
	if err := adm.CreatePartitions(j.Topic, j.GrowTo, nil, false); err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	if result["partitions"], err = describeTopic(adm, j.Topic, int(j.GrowTo)); err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	if err := adm.DeleteRecords(j.Topic, map[int32]int64{0: j.DeleteBelow}); err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	found, _, err := adm.DescribeCluster()
	if err != nil {
		return fmt.Errorf("describe the cluster: %w", err)
	}
	listed := [][]any{}
	for _, b := range found {
		host, port, err := net.SplitHostPort(b.Addr())
		if err != nil {
			return err
		}
		number, err := strconv.Atoi(port)
		if err != nil {
			return err
		}
		listed = append(listed, []any{b.ID(), host, number})
	}
	result["brokers"] = listed
	return nil
}

// group-admin: an offset committed for partition 0 without consuming (an OffsetManager's Commit: OffsetCommit
// with no member), the groups listed, the group's offsets read, the group deleted and the groups listed again
func groupAdmin(j *driver.Job, result map[string]any) error {
	conf := config(j)
	conf.Consumer.Offsets.AutoCommit.Enable = false // Commit is then synchronous
	conf.Consumer.Return.Errors = true
	cl, err := sarama.NewClient(brokers(j), conf)
	if err != nil {
		return err
	}
	manager, err := sarama.NewOffsetManagerFromClient(j.Group, cl)
	if err != nil {
		cl.Close()
		return err
	}
	partition, err := manager.ManagePartition(j.Topic, 0)
	if err != nil {
		manager.Close()
		cl.Close()
		return err
	}
	partition.MarkOffset(j.Offset, "")
	manager.Commit()
	// a failed commit comes on the partition's Errors channel, which the manager's Close closes (with auto-commit
	// off, the partition's own Close would wait for that)
	partition.AsyncClose()
	manager.Close()
	var commitErr error
	for failed := range partition.Errors() {
		commitErr = failed
	}
	cl.Close()
	if commitErr != nil {
		return fmt.Errorf("commit: %w", commitErr)
	}
	adm, err := sarama.NewClusterAdmin(brokers(j), config(j))
	if err != nil {
		return err
	}
	defer adm.Close()
	listed := func() (bool, error) {
		groups, err := adm.ListConsumerGroups()
		_, has := groups[j.Group]
		return has, err
	}
	if result["listed"], err = listed(); err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	fetched, err := adm.ListConsumerGroupOffsets(j.Group, map[string][]int32{j.Topic: {0}})
	if err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	result["offset"] = nil
	if block := fetched.GetBlock(j.Topic, 0); block != nil && block.Offset >= 0 {
		result["offset"] = block.Offset
	}
	if err := adm.DeleteConsumerGroup(j.Group); err != nil {
		return fmt.Errorf("delete group: %w", err)
	}
	if result["listed_after_delete"], err = listed(); err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	return nil
}
