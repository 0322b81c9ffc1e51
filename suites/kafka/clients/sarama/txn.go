package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// readPartition: partition 0 of topic from its start with the given isolation level, until count values and then
// for settle more (a record of an aborted transaction must not come)
func readPartition(j *driver.Job, topic string, count int, isolation sarama.IsolationLevel, settle time.Duration) ([][]byte, error) {
	conf := config(j)
	conf.Consumer.IsolationLevel = isolation
	conf.Consumer.MaxWaitTime = 100 * time.Millisecond
	consumer, err := sarama.NewConsumer(brokers(j), conf)
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	partition, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return nil, err
	}
	defer partition.Close()
	var values [][]byte
	limit := time.After(driver.ConsumeLimit)
	var settled <-chan time.Time
	for {
		if settled == nil && len(values) >= count {
			settled = time.After(settle)
		}
		select {
		case msg := <-partition.Messages():
			values = append(values, msg.Value)
		case failed := <-partition.Errors():
			return values, failed
		case <-settled:
			return values, nil
		case <-limit:
			if settled == nil {
				return values, driver.Waiting{What: fmt.Sprintf("records of %s (%d of %d read)", topic, len(values), count)}
			}
		}
	}
}

// transactions: consume-transform-produce: the source read (read_committed), its transformed records produced to
// the destination by a transactional producer with the source offsets for the group (AddOffsetsToTxn), first in a
// transaction it aborts, then in one it commits. Gives what a read_committed reader of the destination reads, and
// the group's committed source offset.
func transactions(j *driver.Job, result map[string]any) error {
	if err := produceValues(j, j.Source, j.Values, 0, 1); err != nil {
		return err
	}
	read, err := readPartition(j, j.Source, len(j.Values), sarama.ReadCommitted, 0)
	if err != nil {
		return err
	}
	conf := config(j)
	conf.Producer.Transaction.ID = j.TransactionalID
	conf.Producer.Idempotent = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Net.MaxOpenRequests = 1
	conf.Producer.Return.Successes = true
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := syncProducer(j, conf, j.Dest)
	if err != nil {
		return err
	}
	for _, commit := range []bool{false, true} {
		if err := p.BeginTxn(); err != nil {
			p.Close()
			return fmt.Errorf("begin: %w", err)
		}
		msgs := make([]*sarama.ProducerMessage, len(read))
		for i, value := range read {
			msgs[i] = &sarama.ProducerMessage{Topic: j.Dest, Partition: 0,
				Value: sarama.ByteEncoder(append([]byte(driver.Transform), value...))}
		}
		if err := p.SendMessages(msgs); err != nil {
			p.Close()
			return fmt.Errorf("produce: %w", err)
		}
		offsets := map[string][]*sarama.PartitionOffsetMetadata{j.Source: {{Partition: 0, Offset: int64(len(read)),
			LeaderEpoch: -1}}}
		if err := p.AddOffsetsToTxn(offsets, j.Group); err != nil {
			p.Close()
			return fmt.Errorf("offsets to the transaction: %w", err)
		}
		end := p.AbortTxn
		if commit {
			end = p.CommitTxn
		}
		if err := end(); err != nil {
			p.Close()
			return fmt.Errorf("end (commit %v): %w", commit, err)
		}
	}
	if err := p.Close(); err != nil {
		return err
	}
	adm, err := sarama.NewClusterAdmin(brokers(j), config(j))
	if err != nil {
		return err
	}
	defer adm.Close()
	fetched, err := adm.ListConsumerGroupOffsets(j.Group, map[string][]int32{j.Source: {0}})
	if err != nil {
		return fmt.Errorf("fetching the group's offsets: %w", err)
	}
	result["committed"] = nil
	if block := fetched.GetBlock(j.Source, 0); block != nil {
		if !errors.Is(block.Err, sarama.ErrNoError) {
			return fmt.Errorf("fetching the group's offsets: %w", block.Err)
		}
		result["committed"] = block.Offset
	}
	dest, err := readPartition(j, j.Dest, len(j.Values), sarama.ReadCommitted, 500*time.Millisecond)
	shown := []string{}
	for _, value := range dest {
		shown = append(shown, driver.B64(value))
	}
	result["dest"] = shown
	return err
}
