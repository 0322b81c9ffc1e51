package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// group: what a group's members consumed ([member, partition, offset, value]), their claims and failures,
// shared by their goroutines
type group struct {
	mu       sync.Mutex
	consumed [][]any
	assigned map[string]int
	errs     []string
}

func (g *group) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.consumed)
}

func (g *group) has(names ...string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, name := range names {
		if g.assigned[name] == 0 {
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

// handler: one member's claims; each record is noted, marked and committed (synchronously: auto-commit is off)
// before the next is taken. Sarama's rebalances are eager: a session ends only once every ConsumeClaim returned,
// so a partition moves only once its last record is committed and the new owner resumes there.
type handler struct {
	g    *group
	name string
}

func (h handler) Setup(session sarama.ConsumerGroupSession) error {
	h.g.mu.Lock()
	defer h.g.mu.Unlock()
	h.g.assigned[h.name] = 0
	for _, partitions := range session.Claims() {
		h.g.assigned[h.name] += len(partitions)
	}
	return nil
}

func (h handler) Cleanup(sarama.ConsumerGroupSession) error {
	h.g.mu.Lock()
	defer h.g.mu.Unlock()
	h.g.assigned[h.name] = 0
	return nil
}

func (h handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.g.mu.Lock()
			h.g.consumed = append(h.g.consumed, []any{h.name, msg.Partition, msg.Offset, b64(msg.Value)})
			h.g.mu.Unlock()
			session.MarkMessage(msg, "")
			session.Commit()
		case <-session.Context().Done():
			return nil
		}
	}
}

// member: one member of the group in its own goroutine until leave (then it leaves the group)
type member struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startMember(j *job, g *group, name string) *member {
	conf := config(j)
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Consumer.Offsets.AutoCommit.Enable = false
	conf.Consumer.Group.Heartbeat.Interval = heartbeat
	conf.Consumer.Return.Errors = true
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		consumer, err := sarama.NewConsumerGroup(brokers(j), j.Group, conf)
		if err != nil {
			g.fail(name, err)
			return
		}
		defer consumer.Close()
		go func() {
			for err := range consumer.Errors() {
				if ctx.Err() == nil {
					g.fail(name, err)
				}
			}
		}()
		for ctx.Err() == nil {
			if err := consumer.Consume(ctx, []string{j.Topic}, handler{g, name}); err != nil && ctx.Err() == nil {
				g.fail(name, err)
				return
			}
		}
	}()
	return m
}

func (m *member) leave() {
	m.cancel()
	select {
	case <-m.done:
	case <-time.After(consumeLimit):
	}
}

// group-rebalance: two members consume the first half of the records across them; one leaves; the second half is
// produced and the remaining member consumes it (and whatever the leaver had not)
func groupRebalance(j *job, result map[string]any) error {
	half := len(j.Values) / 2
	g := &group{assigned: map[string]int{}}
	if err := produceValues(j, j.Topic, j.Values[:half], 0, j.Partitions); err != nil {
		return err
	}
	a, b := startMember(j, g, "a"), startMember(j, g, "b")
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
	if err := g.failed(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	result["consumed"] = g.consumed
	return nil
}
