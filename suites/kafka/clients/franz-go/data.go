package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// rounds: the job's records split into its rounds, in order (each flushed before the next, so that later batches
// start at offsets above 0)
func rounds(j *job) [][]record {
	count := max(j.Rounds, 1)
	size := (len(j.Records) + count - 1) / count
	var parts [][]record
	for start := 0; start < len(j.Records); start += size {
		parts = append(parts, j.Records[start:min(start+size, len(j.Records))])
	}
	return parts
}

// producer: records go to the partition each names; the job's codec (franz-go compresses with snappy by default).
// franz-go's producer is idempotent by default: "idempotent" jobs keep that default.
func producer(j *job, codec string) *kgo.Client { return producerWith(j, codec) }

func producerWith(j *job, codec string, more ...kgo.Opt) *kgo.Client {
	compression, known := codecs[codec]
	if !known {
		panic("unknown codec " + codec)
	}
	return client(j, append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(compression)}, more...)...)
}

// produce: each round's records in one ProduceSync; [partition, offset] per record, in job order
func produce(cl *kgo.Client, topic string, parts [][]record) ([][2]int64, error) {
	ctx, cancel := limited()
	defer cancel()
	var produced [][2]int64
	for _, part := range parts {
		batch := make([]*kgo.Record, len(part))
		for i, r := range part {
			batch[i] = &kgo.Record{Topic: topic, Partition: r.Partition, Key: rawKey(r.Key), Value: raw(r.Value),
				Timestamp: time.UnixMilli(r.Timestamp)}
			for _, h := range r.Headers {
				batch[i].Headers = append(batch[i].Headers, kgo.RecordHeader{Key: h[0], Value: raw(h[1])})
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
func produceValues(j *job, topic string, values []string, first int, partitions int32) error {
	parts := make([]record, len(values))
	for i, value := range values {
		parts[i] = record{Partition: int32(first+i) % partitions, Value: value, Timestamp: time.Now().UnixMilli()}
	}
	cl := producer(j, "none")
	defer cl.Close()
	_, err := produce(cl, topic, [][]record{parts})
	return err
}

func consumedRecord(r *kgo.Record) record {
	headers := [][2]string{}
	for _, h := range r.Headers {
		headers = append(headers, [2]string{h.Key, b64(h.Value)})
	}
	return record{Partition: r.Partition, Offset: r.Offset, Key: b64Key(r.Key), Value: b64(r.Value),
		Headers: headers, Timestamp: r.Timestamp.UnixMilli()}
}

// consume: a member of the job's group reads count records (from the earliest offset where the group has none),
// committing them when commit is set (and nothing otherwise); the member leaves the group on return
func consume(j *job, count int, commit bool) ([]record, error) {
	cl := client(j, kgo.ConsumerGroup(j.Group), kgo.ConsumeTopics(j.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	consumed, err := readRecords(cl, count)
	if err == nil && commit {
		committing, done := context.WithTimeout(context.Background(), consumeLimit)
		defer done()
		if err := cl.CommitUncommittedOffsets(committing); err != nil {
			return consumed, fmt.Errorf("commit: %w", err)
		}
	}
	return consumed, err
}

// read: count records polled by a consumer (nothing committed)
func read(cl *kgo.Client, count int) ([]record, error) { return readRecords(cl, count) }

func readRecords(cl *kgo.Client, count int) ([]record, error) {
	ctx, cancel := limited()
	defer cancel()
	consumed := []record{}
	for len(consumed) < count {
		if ctx.Err() != nil {
			return consumed, waiting{fmt.Sprintf("records (%d of %d consumed)", len(consumed), count)}
		}
		fetches := cl.PollRecords(ctx, count-len(consumed))
		if err := fetchErr(fetches); err != nil {
			return consumed, err
		}
		fetches.EachRecord(func(r *kgo.Record) { consumed = append(consumed, consumedRecord(r)) })
	}
	return consumed, nil
}

// produce-consume (also idempotent, compression, sasl): the records produced in rounds, then consumed back by a
// group member that commits nothing
func produceConsume(j *job, result map[string]any) error {
	cl := producer(j, j.Codec)
	produced, err := produce(cl, j.Topic, rounds(j))
	cl.Close()
	if err != nil {
		return err
	}
	result["produced"] = produced
	consumed, err := consume(j, len(j.Records), false)
	result["consumed"] = consumed
	return err
}

// group-consume: the job's records produced, then read by the group's only member, which commits what it read and
// leaves; a second run of the group reads on from there
func groupConsume(j *job, result map[string]any) error {
	cl := producer(j, "none")
	produced, err := produce(cl, j.Topic, [][]record{j.Records})
	cl.Close()
	if err != nil {
		return err
	}
	result["produced"] = produced
	consumed, err := consume(j, len(j.Records), true)
	result["consumed"] = consumed
	return err
}
