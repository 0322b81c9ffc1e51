package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// producer: records go to the partition each names; the job's codec (franz-go compresses with snappy by default).
// franz-go's producer is idempotent by default: "idempotent" jobs keep that default.
func producer(j *driver.Job, codec string) *kgo.Client { return producerWith(j, codec) }

func producerWith(j *driver.Job, codec string, more ...kgo.Opt) *kgo.Client {
	compression, known := codecs[codec]
	if !known {
		panic("unknown codec " + codec)
	}
	return client(j, append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(compression)}, more...)...)
}

// produce: each round's records in one ProduceSync; [partition, offset] per record, in job order
func produce(cl *kgo.Client, topic string, parts [][]driver.Record) ([][2]int64, error) {
	ctx, cancel := limited()
	defer cancel()
	var produced [][2]int64
	for _, part := range parts {
		batch := make([]*kgo.Record, len(part))
		for i, r := range part {
			batch[i] = &kgo.Record{Topic: topic, Partition: r.Partition, Key: driver.RawKey(r.Key), Value: driver.Raw(r.Value),
				Timestamp: time.UnixMilli(r.Timestamp)}
			for _, h := range r.Headers {
				batch[i].Headers = append(batch[i].Headers, kgo.RecordHeader{Key: h[0], Value: driver.Raw(h[1])})
			}
		}
		results := cl.ProduceSync(ctx, batch...)
		if err := results.FirstErr(); err != nil {
			return nil, fmt.Errorf("produce: %w", err)
		}
		for _, sent := range results {
			produced = append(produced, [2]int64{int64(sent.Record.Partition), sent.Record.Offset})
		}
	}
	return produced, nil
}

// produceValues: values to a topic's partitions in turn (value i to partition i % partitions)
func produceValues(j *driver.Job, topic string, values []string, first int, partitions int32) error {
	parts := driver.Spread(values, first, partitions, time.Now().UnixMilli())
	cl := producer(j, "none")
	defer cl.Close()
	_, err := produce(cl, topic, [][]driver.Record{parts})
	return err
}

func consumedRecord(r *kgo.Record) driver.Record {
	headers := [][2]string{}
	for _, h := range r.Headers {
		headers = append(headers, [2]string{h.Key, driver.B64(h.Value)})
	}
	return driver.Record{Partition: r.Partition, Offset: r.Offset, Key: driver.B64Key(r.Key), Value: driver.B64(r.Value),
		Headers: headers, Timestamp: r.Timestamp.UnixMilli()}
}

// consume (a driver.Consume): a kgo group member that polls count records, auto-commit off
func consume(j *driver.Job, count int, commit bool) ([]driver.Record, error) {
	cl := client(j, kgo.ConsumerGroup(j.Group), kgo.ConsumeTopics(j.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	consumed, err := readRecords(cl, count)
	if err == nil && commit {
		committing, done := context.WithTimeout(context.Background(), driver.ConsumeLimit)
		defer done()
		if err := cl.CommitUncommittedOffsets(committing); err != nil {
			return consumed, fmt.Errorf("commit: %w", err)
		}
	}
	return consumed, err
}

// read: count records polled by a consumer (nothing committed)
func read(cl *kgo.Client, count int) ([]driver.Record, error) { return readRecords(cl, count) }

func readRecords(cl *kgo.Client, count int) ([]driver.Record, error) {
	ctx, cancel := limited()
	defer cancel()
	consumed := []driver.Record{}
	for len(consumed) < count {
		if ctx.Err() != nil {
			return consumed, driver.Waiting{What: fmt.Sprintf("records (%d of %d consumed)", len(consumed), count)}
		}
		fetches := cl.PollRecords(ctx, count-len(consumed))
		if err := fetchErr(fetches); err != nil {
			return consumed, err
		}
		fetches.EachRecord(func(r *kgo.Record) { consumed = append(consumed, consumedRecord(r)) })
	}
	return consumed, nil
}

// send: the parts produced by a producer of the job's codec (franz-go's producer is idempotent by default, so an
// "idempotent" job keeps that default)
func send(j *driver.Job, codec string, _ bool, parts [][]driver.Record) ([][2]int64, error) {
	cl := producer(j, codec)
	defer cl.Close()
	return produce(cl, j.Topic, parts)
}
