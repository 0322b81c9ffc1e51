package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	driver "wirecheck/suites/kafka/clients/go-common"
)

func adminClient(j *driver.Job) (*kadm.Client, context.Context, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*driver.ConsumeLimit)
	adm := kadm.NewClient(client(j))
	return adm, ctx, func() { adm.Close(); cancel() }
}

// describeTopic: the topic's partitions (Metadata), asked again while the broker does not know the topic yet, or
// knows fewer than want partitions
func describeTopic(ctx context.Context, adm *kadm.Client, topic string, want int) (int, error) {
	var partitions int
	err := driver.Settle(func() (bool, error) {
		described, err := adm.ListTopics(ctx, topic)
		if err == nil {
			err = described.Error()
		}
		if errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.LeaderNotAvailable) {
			return false, nil
		}
		partitions = len(described[topic].Partitions)
		return partitions >= want, err
	})
	return partitions, err
}

// admin: a topic created (CreateTopics), described (Metadata), a config altered (kadm's AlterTopicConfigs:
// IncrementalAlterConfigs) and described again (DescribeConfigs), the topic deleted and the topics listed
func admin(j *driver.Job, result map[string]any) error {
	adm, ctx, done := adminClient(j)
	defer done()
	created, err := adm.CreateTopic(ctx, 2, 1, nil, j.Topic)
	if err == nil {
		err = created.Err
	}
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if result["partitions"], err = describeTopic(ctx, adm, j.Topic, 2); err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	config := func() (any, error) {
		configs, err := adm.DescribeTopicConfigs(ctx, j.Topic)
		if err != nil {
			return nil, err
		}
		described, err := configs.On(j.Topic, nil)
		if err == nil {
			err = described.Err
		}
		if err != nil {
			return nil, err
		}
		for _, entry := range described.Configs {
			if entry.Key == driver.Altered[0] && entry.Value != nil {
				return *entry.Value, nil
			}
		}
		return nil, nil
	}
	if result["before"], err = config(); err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	alteredTopics, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: driver.Altered[0],
		Value: &driver.Altered[1]}}, j.Topic)
	if err == nil {
		var one kadm.AlterConfigsResponse
		if one, err = alteredTopics.On(j.Topic, nil); err == nil {
			err = one.Err
		}
	}
	if err != nil {
		return fmt.Errorf("alter configs: %w", err)
	}
	if err = driver.Settle(func() (bool, error) {
		result["after"], err = config()
		return result["after"] == driver.Altered[1], err
	}); err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	deleted, err := adm.DeleteTopic(ctx, j.Topic)
	if err == nil {
		err = deleted.Err
	}
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err = driver.Settle(func() (bool, error) {
		listed, err := adm.ListTopics(ctx)
		result["listed_after_delete"] = listed.Has(j.Topic)
		return !listed.Has(j.Topic), err
	}); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	return nil
}

// cluster-admin: the values produced to partition 0, the topic grown (CreatePartitions) and described, partition
// 0's records below delete_below deleted (DeleteRecords), the cluster's brokers described (Metadata)
func clusterAdmin(j *driver.Job, result map[string]any) error {
	if err := produceValues(j, j.Topic, j.Values, 0, 1); err != nil {
		return err
	}
	adm, ctx, done := adminClient(j)
	defer done()
	grown, err := adm.UpdatePartitions(ctx, int(j.GrowTo), j.Topic)
	if err == nil {
		err = grown.Error()
	}
	if err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	if result["partitions"], err = describeTopic(ctx, adm, j.Topic, int(j.GrowTo)); err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	below := kadm.Offsets{}
	below.Add(kadm.Offset{Topic: j.Topic, Partition: 0, At: j.DeleteBelow, LeaderEpoch: -1})
	deleted, err := adm.DeleteRecords(ctx, below)
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return fmt.Errorf("describe the cluster: %w", err)
	}
	listed := [][]any{}
	for _, b := range brokers {
		listed = append(listed, []any{b.NodeID, b.Host, b.Port})
	}
	result["brokers"] = listed
	return nil
}

// group-admin: an offset committed for partition 0 without consuming (kadm's CommitOffsets: OffsetCommit with no
// member), the groups listed, the group's offsets read, the group deleted and the groups listed again
func groupAdmin(j *driver.Job, result map[string]any) error {
	adm, ctx, done := adminClient(j)
	defer done()
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: j.Topic, Partition: 0, At: j.Offset, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, j.Group, commit); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	listed := func() (bool, error) {
		groups, err := adm.ListGroups(ctx)
		if err != nil {
			return false, err
		}
		_, has := groups[j.Group]
		return has, nil
	}
	var err error
	if result["listed"], err = listed(); err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	offsets, err := adm.FetchOffsets(ctx, j.Group)
	if err == nil {
		err = offsets.Error()
	}
	if err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	result["offset"] = nil
	if offset, ok := offsets.Lookup(j.Topic, 0); ok && offset.At >= 0 {
		result["offset"] = offset.At
	}
	deleted, err := adm.DeleteGroup(ctx, j.Group)
	if err == nil {
		err = deleted.Err
	}
	if err != nil {
		return fmt.Errorf("delete group: %w", err)
	}
	if result["listed_after_delete"], err = listed(); err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	return nil
}
