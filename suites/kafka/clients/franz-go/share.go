package main

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// probe: what the share-group scenario produces until every share partition has started (see shareGroup)
var probe = []byte("wirecheck-share-probe")

// probed: the partitions a probe record came back from, shared by the members' goroutines
type probed struct {
	mu   sync.Mutex
	seen map[int32]bool
}

// shareMember: one member of a KIP-932 share group (kgo.ShareGroup: ShareGroupHeartbeat, ShareFetch,
// ShareAcknowledge) in its own goroutine until stop: every record it gets is marked ACCEPT and the acks flushed
// (FlushAcks waits until the broker answered them) before the next poll; the broker's answers to the acks come to
// the ShareAckCallback, whose errors are kept
func shareMember(j *driver.Job, g *driver.Group, name string, probes *probed, ackErrors *[]string) *member {
	m := &member{stop: make(chan struct{}), done: make(chan struct{})}
	var ackMu sync.Mutex
	onAcks := func(_ *kgo.Client, results kgo.ShareAckResults) {
		for _, r := range results {
			if r.Err != nil {
				ackMu.Lock()
				*ackErrors = append(*ackErrors, fmt.Sprintf("%s %s-%d: %v", name, r.Topic, r.Partition, r.Err))
				ackMu.Unlock()
			}
		}
	}
	go func() {
		defer close(m.done)
		cl := client(j, kgo.ShareGroup(j.Group), kgo.ConsumeTopics(j.Topic), kgo.ShareAckCallback(onAcks))
		defer cl.Close()
		for {
			select {
			case <-m.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			fetches := cl.PollRecords(ctx, 0)
			cancel()
			if err := fetchErr(fetches); err != nil {
				g.Fail(name, err)
				return
			}
			records := fetches.Records()
			if len(records) == 0 {
				continue
			}
			for _, r := range records {
				if bytes.Equal(r.Value, probe) {
					probes.mu.Lock()
					probes.seen[r.Partition] = true
					probes.mu.Unlock()
				} else {
					g.Consumed(name, r.Partition, r.Offset, r.Value)
				}
			}
			cl.MarkAcks(kgo.AckAccept, records...)
			flushing, done := context.WithTimeout(context.Background(), driver.ConsumeLimit)
			err := cl.FlushAcks(flushing)
			done()
			if err != nil {
				g.Fail(name, fmt.Errorf("flushing acks: %w", err))
				return
			}
		}
	}()
	return m
}

// share-group: two members of one share group accept every record of the topic. A share partition starts at the
// latest offset (share.auto.offset.reset, KIP-932's default), fixed when a member first fetches it, and nothing
// tells a client when that has happened: so a probe record goes to every partition, again every half second,
// until one came back from each; only then are the job's values produced. Probes are accepted like any record
// and left out of consumed. Gives consumed ([member, partition, offset, value]) and ack_errors.
func shareGroup(j *driver.Job, result map[string]any) error {
	g, probes, ackErrors := driver.NewGroup(), &probed{seen: map[int32]bool{}}, []string{}
	members := []*member{shareMember(j, g, "a", probes, &ackErrors), shareMember(j, g, "b", probes, &ackErrors)}
	defer func() {
		for _, m := range members {
			m.leave()
		}
	}()
	started := func() bool {
		probes.mu.Lock()
		defer probes.mu.Unlock()
		return int32(len(probes.seen)) >= j.Partitions
	}
	end := time.Now().Add(driver.ConsumeLimit)
	for !started() {
		var missing []string
		var partitions []int32
		probes.mu.Lock()
		for p := int32(0); p < j.Partitions; p++ {
			if !probes.seen[p] {
				missing, partitions = append(missing, driver.B64(probe)), append(partitions, p)
			}
		}
		probes.mu.Unlock()
		for i, p := range partitions {
			if err := produceValues(j, j.Topic, missing[i:i+1], int(p), j.Partitions); err != nil {
				return err
			}
		}
		time.Sleep(500 * time.Millisecond)
		if err := g.Failed(); err != nil {
			return err
		}
		if time.Now().After(end) {
			return driver.Waiting{What: fmt.Sprintf("a probe record back from each of the %d partitions", j.Partitions)}
		}
	}
	if err := produceValues(j, j.Topic, j.Values, 0, j.Partitions); err != nil {
		return err
	}
	if err := driver.WaitUntil(func() bool { return g.Count() >= len(j.Values) },
		fmt.Sprintf("all %d records consumed", len(j.Values)), g.Failed); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond) // a record delivered twice may still come
	for _, m := range members {
		m.leave()
	}
	members = nil
	if err := g.Finish(result); err != nil {
		return err
	}
	result["ack_errors"] = ackErrors
	return nil
}
