package main

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	driver "wirecheck/suites/kafka/clients/go-common"
)

// the KIP-714 requests franz-go sends on its own (kgo/metrics_714.go: on by default unless DisableClientMetrics,
// where the broker advertises both)
const (
	telemetrySubscriptions int16 = 71 // GetTelemetrySubscriptions
	telemetryPush          int16 = 72 // PushTelemetry
)

// telemetryLog: what one client's telemetry conversation said, read off its connections (kgo's hooks and log do
// not show the answers): the subscriptions it got, the last one's push interval and requested metrics, the pushes
// the broker accepted, and every answer with an error
type telemetryLog struct {
	mu            sync.Mutex
	subscriptions int
	interval      *int32
	requested     *int
	accepted      int
	failures      []string
}

// answer: a telemetry response's body after its correlation id (response header v1: tagged fields first)
func (t *telemetryLog) answer(key, version int16, body []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	body, err := skipTags(body)
	if err != nil {
		t.failures = append(t.failures, fmt.Sprintf("%s v%d answer: %v", kmsg.NameForKey(key), version, err))
		return
	}
	switch key {
	case telemetrySubscriptions:
		resp := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
		resp.SetVersion(version)
		if err := resp.ReadFrom(body); err != nil {
			t.failures = append(t.failures, fmt.Sprintf("GetTelemetrySubscriptions v%d answer: %v", version, err))
		} else if resp.ErrorCode != 0 {
			t.failures = append(t.failures, fmt.Sprintf("GetTelemetrySubscriptions: %v", kerr.ErrorForCode(resp.ErrorCode)))
		} else {
			requested := len(resp.RequestedMetrics)
			t.subscriptions, t.interval, t.requested = t.subscriptions+1, &resp.PushIntervalMillis, &requested
		}
	case telemetryPush:
		resp := kmsg.NewPtrPushTelemetryResponse()
		resp.SetVersion(version)
		if err := resp.ReadFrom(body); err != nil {
			t.failures = append(t.failures, fmt.Sprintf("PushTelemetry v%d answer: %v", version, err))
		} else if resp.ErrorCode != 0 {
			t.failures = append(t.failures, fmt.Sprintf("PushTelemetry: %v", kerr.ErrorForCode(resp.ErrorCode)))
		} else {
			t.accepted++
		}
	}
}

// skipTags: the body after a flexible header's tagged fields
func skipTags(body []byte) ([]byte, error) {
	count, n := binary.Uvarint(body)
	if n <= 0 {
		return nil, fmt.Errorf("no tagged fields count")
	}
	body = body[n:]
	for range count {
		_, n := binary.Uvarint(body)
		if n <= 0 {
			return nil, fmt.Errorf("truncated tag")
		}
		size, m := binary.Uvarint(body[n:])
		if m <= 0 || uint64(len(body)) < uint64(n+m)+size {
			return nil, fmt.Errorf("truncated tag")
		}
		body = body[uint64(n+m)+size:]
	}
	return body, nil
}

// settled: nothing more to wait for (a push accepted, an error seen, or a subscription asking for no metrics)
func (t *telemetryLog) settled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.accepted > 0 || len(t.failures) > 0 || (t.requested != nil && *t.requested == 0)
}

func (t *telemetryLog) summary() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return map[string]any{"subscriptions": t.subscriptions, "push_interval_ms": t.interval,
		"requested_metrics": t.requested, "pushes_accepted": t.accepted, "failures": append([]string{}, t.failures...)}
}

// telemetry: produce-consume with franz-go's default KIP-714 metrics push, the producer kept open while the
// consumer reads; then both keep running (for wait seconds at most) until each has had a push accepted (or
// cannot). Gives produced, consumed and telemetry (producer, consumer: each client's telemetry log summary).
func telemetry(j *driver.Job, result map[string]any) error {
	logs := map[string]*telemetryLog{"producer": {}, "consumer": {}}
	p := producerWith(j, j.Codec, sniffingDialer(logs["producer"]))
	defer p.Close()
	produced, err := produce(p, j.Topic, driver.Rounds(j))
	if err != nil {
		return err
	}
	result["produced"] = produced
	c := client(j, kgo.ConsumerGroup(j.Group), kgo.ConsumeTopics(j.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), sniffingDialer(logs["consumer"]))
	defer c.Close()
	consumed, err := read(c, len(j.Records))
	result["consumed"] = consumed
	if err != nil {
		return err
	}
	for end := time.Now().Add(time.Duration(j.Wait) * time.Second); time.Now().Before(end); {
		if logs["producer"].settled() && logs["consumer"].settled() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	result["telemetry"] = map[string]any{"producer": logs["producer"].summary(), "consumer": logs["consumer"].summary()}
	return nil
}
