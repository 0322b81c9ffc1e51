package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// producer: a SyncProducer whose records go to the partition each names, with the job's codec; an idempotent one
// needs acks from all replicas and one request in flight (Sarama's Config.Validate)
func producer(j *driver.Job, topic string, codec string, idempotent bool) (sarama.SyncProducer, error) {
	conf := config(j)
	compression, known := codecs[codec]
	if !known {
		return nil, fmt.Errorf("unknown codec %s", codec)
	}
	conf.Producer.Compression = compression
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	conf.Producer.Return.Successes = true
	if idempotent {
		conf.Producer.Idempotent = true
		conf.Producer.RequiredAcks = sarama.WaitForAll
		conf.Net.MaxOpenRequests = 1
	}
	return syncProducer(j, conf, topic)
}

// syncProducer: a SyncProducer whose connections to topic's partition leaders are made, one after another, before
// it sends. Sarama v1.61.1's Broker.Open marks the broker opened before it takes the lock its dial holds
// (broker.go: opened.CompareAndSwap, conf.Validate, then b.lock.Lock), so of two partition producers asking for
// one leader at once the second may send first, on no connection (ErrNotConnected); the client's metadata refresh
// then drops and closes that broker under the first's Produce in flight, and the producer, not idempotent,
// retries a request the broker had stored: one record twice (seen under load as a partition one record longer
// than produced, the consumer's count filled by the copy and another record "missing").
func syncProducer(j *driver.Job, conf *sarama.Config, topic string) (sarama.SyncProducer, error) {
	client, err := sarama.NewClient(brokers(j), conf)
	if err != nil {
		return nil, err
	}
	partitions, err := client.Partitions(topic)
	for _, partition := range partitions {
		if err != nil {
			break
		}
		var leader *sarama.Broker
		if leader, err = client.Leader(topic, partition); err == nil {
			_, err = leader.Connected() // waits for the dial Leader started (it holds the broker's lock)
		}
	}
	var p sarama.SyncProducer
	if err == nil {
		p, err = sarama.NewSyncProducerFromClient(client)
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	return clientProducer{p, client}, nil
}

// clientProducer: a SyncProducer that closes the client it was made from (NewSyncProducerFromClient leaves it open)
type clientProducer struct {
	sarama.SyncProducer
	client sarama.Client
}

func (p clientProducer) Close() error {
	err := p.SyncProducer.Close()
	if closing := p.client.Close(); err == nil {
		err = closing
	}
	return err
}

func message(topic string, r driver.Record) *sarama.ProducerMessage {
	msg := &sarama.ProducerMessage{Topic: topic, Partition: r.Partition, Key: rawKey(r.Key),
		Value: sarama.ByteEncoder(driver.Raw(r.Value)), Timestamp: time.UnixMilli(r.Timestamp)}
	for _, h := range r.Headers {
		msg.Headers = append(msg.Headers, sarama.RecordHeader{Key: []byte(h[0]), Value: driver.Raw(h[1])})
	}
	return msg
}

// produce: each round's records in one SendMessages; [partition, offset] per record, in job order
func produce(p sarama.SyncProducer, topic string, parts [][]driver.Record) ([][2]int64, error) {
	var produced [][2]int64
	for _, part := range parts {
		msgs := make([]*sarama.ProducerMessage, len(part))
		for i, r := range part {
			msgs[i] = message(topic, r)
		}
		if err := p.SendMessages(msgs); err != nil {
			return nil, fmt.Errorf("produce: %w", err)
		}
		for _, msg := range msgs {
			produced = append(produced, [2]int64{int64(msg.Partition), msg.Offset})
		}
	}
	return produced, nil
}

// produceValues: values to a topic's partitions in turn (value i to partition first+i % partitions)
func produceValues(j *driver.Job, topic string, values []string, first int, partitions int32) error {
	parts := driver.Spread(values, first, partitions, time.Now().UnixMilli())
	p, err := producer(j, topic, "none", false)
	if err != nil {
		return err
	}
	defer p.Close()
	_, err = produce(p, topic, [][]driver.Record{parts})
	return err
}

func consumedRecord(msg *sarama.ConsumerMessage) driver.Record {
	headers := [][2]string{}
	for _, h := range msg.Headers {
		headers = append(headers, [2]string{string(h.Key), driver.B64(h.Value)})
	}
	return driver.Record{Partition: msg.Partition, Offset: msg.Offset, Key: driver.B64Key(msg.Key), Value: driver.B64(msg.Value),
		Headers: headers, Timestamp: msg.Timestamp.UnixMilli()}
}

// reader: a consumer group handler that keeps the first count records, marking and committing each when commit
// is set (a commit of a session whose auto-commit is off is synchronous)
type reader struct {
	mu       sync.Mutex
	count    int
	commit   bool
	consumed []driver.Record
	full     chan struct{}
	errs     []error
}

func (r *reader) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (r *reader) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (r *reader) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			r.mu.Lock()
			if len(r.consumed) < r.count {
				r.consumed = append(r.consumed, consumedRecord(msg))
				if r.commit {
					session.MarkMessage(msg, "")
					session.Commit()
				}
				if len(r.consumed) == r.count {
					close(r.full)
				}
			}
			r.mu.Unlock()
		case <-session.Context().Done():
			return nil
		}
	}
}

// consume (a driver.Consume): a Sarama ConsumerGroup member whose reader keeps count records, auto-commit off
func consume(j *driver.Job, count int, commit bool) ([]driver.Record, error) {
	conf := config(j)
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Consumer.Offsets.AutoCommit.Enable = false
	conf.Consumer.Return.Errors = true
	group, err := sarama.NewConsumerGroup(brokers(j), j.Group, conf)
	if err != nil {
		return nil, err
	}
	r := &reader{count: count, commit: commit, full: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	failed := make(chan error, 2)
	go func() {
		for ctx.Err() == nil {
			if err := group.Consume(ctx, []string{j.Topic}, r); err != nil && ctx.Err() == nil {
				failed <- err
				return
			}
		}
	}()
	go func() {
		for err := range group.Errors() {
			if err != nil && ctx.Err() == nil {
				failed <- err
			}
		}
	}()
	select {
	case <-r.full:
	case err = <-failed:
	case <-time.After(driver.ConsumeLimit):
		r.mu.Lock()
		err = driver.Waiting{What: fmt.Sprintf("records (%d of %d consumed)", len(r.consumed), count)}
		r.mu.Unlock()
	}
	cancel()
	if closing := group.Close(); err == nil && closing != nil {
		err = closing
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.consumed, err
}

// send: the parts produced by a SyncProducer of the job's codec, idempotent where asked
func send(j *driver.Job, codec string, idempotent bool, parts [][]driver.Record) ([][2]int64, error) {
	p, err := producer(j, j.Topic, codec, idempotent)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return produce(p, j.Topic, parts)
}
