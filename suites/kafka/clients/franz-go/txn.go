package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// transactions: consume-transform-produce with franz-go's GroupTransactSession (a group member and a
// transactional producer in one client, ending each transaction with the offsets it consumed): the source read
// in the group, its transformed records produced to the destination, the first transaction aborted (the session
// rewinds to the committed offsets, so the records are read again), the second committed. Gives what a
// read_committed reader of the destination reads, and the group's committed source offset.
func transactions(j *driver.Job, result map[string]any) error {
	if err := produceValues(j, j.Source, j.Values, 0, 1); err != nil {
		return err
	}
	session, err := kgo.NewGroupTransactSession(options(j, kgo.TransactionalID(j.TransactionalID),
		kgo.ConsumerGroup(j.Group), kgo.ConsumeTopics(j.Source), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchMaxWait(200*time.Millisecond))...)
	if err != nil {
		return err
	}
	ctx, cancel := limited()
	defer cancel()
	for _, commit := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
		var read [][]byte
		for len(read) < len(j.Values) {
			if ctx.Err() != nil {
				session.Close()
				return driver.Waiting{What: fmt.Sprintf("source records (%d of %d read)", len(read), len(j.Values))}
			}
			fetches := session.PollFetches(ctx)
			if err := fetchErr(fetches); err != nil {
				session.Close()
				return err
			}
			fetches.EachRecord(func(r *kgo.Record) { read = append(read, r.Value) })
		}
		if err := session.Begin(); err != nil {
			session.Close()
			return err
		}
		for _, value := range read {
			out := &kgo.Record{Topic: j.Dest, Partition: 0, Value: append([]byte(driver.Transform), value...)}
			if err := session.ProduceSync(ctx, out).FirstErr(); err != nil {
				session.Close()
				return err
			}
		}
		committed, err := session.End(ctx, commit)
		if err != nil {
			session.Close()
			return err
		}
		if bool(commit) && !committed {
			session.Close()
			return fmt.Errorf("the transaction to commit was aborted (the group rebalanced, or its offsets were not committed)")
		}
	}
	session.Close()
	adm := kadm.NewClient(client(j))
	defer adm.Close()
	offsets, err := adm.FetchOffsets(ctx, j.Group)
	if err == nil {
		err = offsets.Error()
	}
	if err != nil {
		return fmt.Errorf("fetching the group's offsets: %w", err)
	}
	result["committed"] = nil
	if offset, ok := offsets.Lookup(j.Source, 0); ok {
		result["committed"] = offset.At
	}
	dest, err := readCommitted(j, j.Dest, len(j.Values))
	result["dest"] = dest
	return err
}

// readCommitted: a read_committed reader of partition 0 (no group), until count values and half a second more
// (a record of an aborted transaction must not come)
func readCommitted(j *driver.Job, topic string, count int) ([]string, error) {
	cl := client(j, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	defer cl.Close()
	seen := []string{}
	poll := func(ctx context.Context) error {
		fetches := cl.PollFetches(ctx)
		fetches.EachRecord(func(r *kgo.Record) { seen = append(seen, driver.B64(r.Value)) })
		return fetchErr(fetches)
	}
	end := time.Now().Add(driver.ConsumeLimit)
	for len(seen) < count {
		if time.Now().After(end) {
			return seen, driver.Waiting{What: fmt.Sprintf("committed records (%d of %d read)", len(seen), count)}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := poll(ctx)
		cancel()
		if err != nil {
			return seen, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	for ctx.Err() == nil {
		if err := poll(ctx); err != nil {
			return seen, err
		}
	}
	return seen, nil
}
