package driver

import "time"

// ConsumeLimit is the driver's own limit on waiting for records (the case's limit is longer): a driver that gives
// up says what it waited for.
const ConsumeLimit = 20 * time.Second

// Heartbeat: group-rebalance members notice a rebalance in well under a second (the default 3 s only slows the
// scenario down; the scenario is about the rebalance)
const Heartbeat = 300 * time.Millisecond

// Waiting: the driver's own limit passed while waiting for what it says
type Waiting struct{ What string }

func (w Waiting) Error() string { return w.What }

// WaitUntil polls condition until it holds, a member failed (errs) or the limit passed
func WaitUntil(condition func() bool, what string, errs func() error) error {
	end := time.Now().Add(ConsumeLimit)
	for !condition() {
		if err := errs(); err != nil {
			return err
		}
		if time.Now().After(end) {
			return Waiting{what}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// SettleLimit: how long a driver asks again for a change it was told is made to show. Apache Kafka's brokers learn
// of topics, partitions and configs from the controller's metadata log, so a broker may describe the state before
// a change for a moment after the controller answered it (KRaft: the broker's MetadataCache is updated when it
// replays the record, KIP-500); what is still not shown after this is reported as seen, for the suite to judge.
const SettleLimit = 10 * time.Second

// Settle asks until done says the change shows or SettleLimit passed; an error of the asking ends it
func Settle(done func() (bool, error)) error {
	end := time.Now().Add(SettleLimit)
	for {
		shown, err := done()
		if err != nil || shown || time.Now().After(end) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
