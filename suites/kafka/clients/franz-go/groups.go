package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// member: one member of the group in its own goroutine, until stop is closed (then it leaves the group). It polls
// one record at a time and commits it before taking the next; rebalances wait while a polled record is in hand
// (BlockRebalanceOnPoll), so a partition moves only once its last record is committed and the new owner resumes
// there. heartbeats counts the ConsumerGroupHeartbeat requests it sent (KIP-848).
type member struct {
	stop       chan struct{}
	done       chan struct{}
	heartbeats atomic.Int64
}

func (m *member) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 68 && err == nil { // ConsumerGroupHeartbeat
		m.heartbeats.Add(1)
	}
}

func startMember(j *driver.Job, g *driver.Group, name string, more ...kgo.Opt) *member {
	m := &member{stop: make(chan struct{}), done: make(chan struct{})}
	opts := append([]kgo.Opt{kgo.ConsumerGroup(j.Group), kgo.ConsumeTopics(j.Topic), kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(m),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.Track(name, p, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.Track(name, p, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.Track(name, p, false) }),
	}, more...)
	go func() {
		defer close(m.done)
		cl := client(j, opts...)
		defer cl.CloseAllowingRebalance()
		for {
			select {
			case <-m.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			fetches := cl.PollRecords(ctx, 1)
			cancel()
			err := fetchErr(fetches)
			fetches.EachRecord(func(r *kgo.Record) {
				if err != nil {
					return
				}
				g.Consumed(name, r.Partition, r.Offset, r.Value)
				committing, done := context.WithTimeout(context.Background(), driver.ConsumeLimit)
				err = cl.CommitRecords(committing, r)
				done()
			})
			cl.AllowRebalance()
			if err != nil {
				g.Fail(name, err)
				return
			}
		}
	}()
	return m
}

func (m *member) leave() {
	close(m.stop)
	select {
	case <-m.done:
	case <-time.After(driver.ConsumeLimit):
	}
}

// group-rebalance: driver.Rebalance with franz-go members that heartbeat every driver.Heartbeat
func groupRebalance(j *driver.Job, result map[string]any) error {
	return driver.Rebalance(j, result, func(values []string, first int) error {
		return produceValues(j, j.Topic, values, first, j.Partitions)
	}, func(g *driver.Group, name string) func() {
		return startMember(j, g, name, kgo.HeartbeatInterval(driver.Heartbeat)).leave
	})
}

// consumer-group-protocol: three members of a KIP-848 group (kgo.ServerSideBalancer: the coordinator assigns; the
// heartbeat interval is the coordinator's), one joining late and one leaving, each between thirds of the records.
// franz-go falls back to the classic protocol where the target lacks ConsumerGroupHeartbeat v1, so the members
// count the heartbeats they sent: none is a failure of the scenario, never a silent pass.
func consumerGroupProtocol(j *driver.Job, result map[string]any) error {
	thirds := []int{len(j.Values) / 3, 2 * len(j.Values) / 3, len(j.Values)}
	g := driver.NewGroup()
	members := map[string]*member{}
	stage := func(start, end int, names ...string) error {
		if err := produceValues(j, j.Topic, j.Values[start:end], start, j.Partitions); err != nil {
			return err
		}
		return driver.WaitUntil(func() bool { return g.Count() >= end && g.Has(names...) },
			fmt.Sprintf("members %s assigned and %d records consumed", strings.Join(names, ", "), end), g.Failed)
	}
	for _, name := range []string{"a", "b"} {
		members[name] = startMember(j, g, name, kgo.ServerSideBalancer())
	}
	defer func() {
		for _, m := range members {
			select {
			case <-m.stop:
			default:
				m.leave()
			}
		}
	}()
	if err := stage(0, thirds[0], "a", "b"); err != nil {
		return err
	}
	members["c"] = startMember(j, g, "c", kgo.ServerSideBalancer()) // joins late: the group rebalances
	if err := driver.WaitUntil(func() bool { return g.Has("c") }, "the late member assigned partitions", g.Failed); err != nil {
		return err
	}
	if err := stage(thirds[0], thirds[1], "a", "b", "c"); err != nil {
		return err
	}
	members["b"].leave() // its partitions go to the others, which resume at the offsets it committed
	if err := stage(thirds[1], thirds[2], "a", "c"); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond) // a record consumed twice may still come
	for name, m := range members {
		if m.heartbeats.Load() == 0 {
			return fmt.Errorf("member %s sent no ConsumerGroupHeartbeat: franz-go joined with the classic protocol", name)
		}
	}
	return g.Finish(result)
}
