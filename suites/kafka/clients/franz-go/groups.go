package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// group: what a group's members consumed ([member, partition, offset, value]), their assignments and failures,
// shared by their goroutines
type group struct {
	mu       sync.Mutex
	consumed [][]any
	assigned map[string]map[int32]bool
	errs     []string
}

func newGroup() *group { return &group{assigned: map[string]map[int32]bool{}} }

func (g *group) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.consumed)
}

func (g *group) has(names ...string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, name := range names {
		if len(g.assigned[name]) == 0 {
			return false
		}
	}
	return true
}

func (g *group) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.errs) > 0 {
		return fmt.Errorf("%s", strings.Join(g.errs, "; "))
	}
	return nil
}

func (g *group) fail(name string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.errs = append(g.errs, fmt.Sprintf("%s: %v", name, err))
}

func (g *group) track(name string, partitions map[string][]int32, owned bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.assigned[name] == nil {
		g.assigned[name] = map[int32]bool{}
	}
	for _, list := range partitions {
		for _, p := range list {
			if owned {
				g.assigned[name][p] = true
			} else {
				delete(g.assigned[name], p)
			}
		}
	}
}

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

func startMember(j *job, g *group, name string, more ...kgo.Opt) *member {
	m := &member{stop: make(chan struct{}), done: make(chan struct{})}
	opts := append([]kgo.Opt{kgo.ConsumerGroup(j.Group), kgo.ConsumeTopics(j.Topic), kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(m),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.track(name, p, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.track(name, p, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { g.track(name, p, false) }),
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
				g.mu.Lock()
				g.consumed = append(g.consumed, []any{name, r.Partition, r.Offset, b64(r.Value)})
				g.mu.Unlock()
				committing, done := context.WithTimeout(context.Background(), consumeLimit)
				err = cl.CommitRecords(committing, r)
				done()
			})
			cl.AllowRebalance()
			if err != nil {
				g.fail(name, err)
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
	case <-time.After(consumeLimit):
	}
}

// group-rebalance: two members consume the first half of the records across them; one leaves; the second half is
// produced and the remaining member consumes it (and whatever the leaver had not)
func groupRebalance(j *job, result map[string]any) error {
	half := len(j.Values) / 2
	g := newGroup()
	if err := produceValues(j, j.Topic, j.Values[:half], 0, j.Partitions); err != nil {
		return err
	}
	a := startMember(j, g, "a", kgo.HeartbeatInterval(heartbeat))
	b := startMember(j, g, "b", kgo.HeartbeatInterval(heartbeat))
	defer a.leave()
	if err := waitUntil(func() bool { return g.count() >= half && g.has("a", "b") },
		fmt.Sprintf("both members assigned and %d records consumed", half), g.failed); err != nil {
		b.leave()
		return err
	}
	b.leave()
	if err := produceValues(j, j.Topic, j.Values[half:], half, j.Partitions); err != nil {
		return err
	}
	if err := waitUntil(func() bool { return g.count() >= len(j.Values) },
		fmt.Sprintf("all %d records consumed", len(j.Values)), g.failed); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond) // a record consumed twice may still come
	return finish(g, result)
}

func finish(g *group, result map[string]any) error {
	if err := g.failed(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	result["consumed"] = g.consumed
	return nil
}

// consumer-group-protocol: three members of a KIP-848 group (kgo.ServerSideBalancer: the coordinator assigns; the
// heartbeat interval is the coordinator's), one joining late and one leaving, each between thirds of the records.
// franz-go falls back to the classic protocol where the target lacks ConsumerGroupHeartbeat v1, so the members
// count the heartbeats they sent: none is a failure of the scenario, never a silent pass.
func consumerGroupProtocol(j *job, result map[string]any) error {
	thirds := []int{len(j.Values) / 3, 2 * len(j.Values) / 3, len(j.Values)}
	g := newGroup()
	members := map[string]*member{}
	stage := func(start, end int, names ...string) error {
		if err := produceValues(j, j.Topic, j.Values[start:end], start, j.Partitions); err != nil {
			return err
		}
		return waitUntil(func() bool { return g.count() >= end && g.has(names...) },
			fmt.Sprintf("members %s assigned and %d records consumed", strings.Join(names, ", "), end), g.failed)
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
	if err := waitUntil(func() bool { return g.has("c") }, "the late member assigned partitions", g.failed); err != nil {
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
	return finish(g, result)
}
