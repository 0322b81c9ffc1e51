package main

import (
	"context"
	"time"

	"github.com/IBM/sarama"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// handler: one member's claims; each record is noted, marked and committed (synchronously: auto-commit is off)
// before the next is taken. Sarama's rebalances are eager: a session ends only once every ConsumeClaim returned,
// so a partition moves only once its last record is committed and the new owner resumes there.
type handler struct {
	g    *driver.Group
	name string
}

func (h handler) Setup(session sarama.ConsumerGroupSession) error {
	h.g.Assign(h.name, session.Claims())
	return nil
}

func (h handler) Cleanup(sarama.ConsumerGroupSession) error {
	h.g.Assign(h.name, nil)
	return nil
}

func (h handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.g.Consumed(h.name, msg.Partition, msg.Offset, msg.Value)
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

func startMember(j *driver.Job, g *driver.Group, name string) *member {
	conf := config(j)
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Consumer.Offsets.AutoCommit.Enable = false
	conf.Consumer.Group.Heartbeat.Interval = driver.Heartbeat
	conf.Consumer.Return.Errors = true
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		consumer, err := sarama.NewConsumerGroup(brokers(j), j.Group, conf)
		if err != nil {
			g.Fail(name, err)
			return
		}
		defer consumer.Close()
		go func() {
			for err := range consumer.Errors() {
				if ctx.Err() == nil {
					g.Fail(name, err)
				}
			}
		}()
		for ctx.Err() == nil {
			if err := consumer.Consume(ctx, []string{j.Topic}, handler{g, name}); err != nil && ctx.Err() == nil {
				g.Fail(name, err)
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
	case <-time.After(driver.ConsumeLimit):
	}
}

// group-rebalance: driver.Rebalance with Sarama members (startMember heartbeats every driver.Heartbeat)
func groupRebalance(j *driver.Job, result map[string]any) error {
	return driver.Rebalance(j, result, func(values []string, first int) error {
		return produceValues(j, j.Topic, values, first, j.Partitions)
	}, func(g *driver.Group, name string) func() { return startMember(j, g, name).leave })
}
