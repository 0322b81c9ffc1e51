package driver

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Group: what a group's members consumed ([member, partition, offset, value]), the partitions each holds and
// their failures, shared by their goroutines
type Group struct {
	mu       sync.Mutex
	consumed [][]any
	assigned map[string]map[int32]bool
	errs     []string
}

func NewGroup() *Group { return &Group{assigned: map[string]map[int32]bool{}} }

// Consumed notes a record a member consumed
func (g *Group) Consumed(name string, partition int32, offset int64, value []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.consumed = append(g.consumed, []any{name, partition, offset, B64(value)})
}

func (g *Group) Count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.consumed)
}

// Has: every named member holds a partition
func (g *Group) Has(names ...string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, name := range names {
		if len(g.assigned[name]) == 0 {
			return false
		}
	}
	return true
}

// Failed: the members' failures as one error (nil: none)
func (g *Group) Failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.errs) > 0 {
		return fmt.Errorf("%s", strings.Join(g.errs, "; "))
	}
	return nil
}

func (g *Group) Fail(name string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.errs = append(g.errs, fmt.Sprintf("%s: %v", name, err))
}

// Track: partitions (topic -> partitions) a member was given (owned) or gave up
func (g *Group) Track(name string, partitions map[string][]int32, owned bool) {
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

// Assign: the partitions a member holds now (nil: none), in place of what it held
func (g *Group) Assign(name string, partitions map[string][]int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	held := map[int32]bool{}
	for _, list := range partitions {
		for _, p := range list {
			held[p] = true
		}
	}
	g.assigned[name] = held
}

// Finish: the consumed records into the result, unless a member failed
func (g *Group) Finish(result map[string]any) error {
	if err := g.Failed(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	result["consumed"] = g.consumed
	return nil
}

// Rebalance is group-rebalance's course: two members consume the first half of the job's values across them; one
// leaves; the second half is produced and the remaining member consumes it (and whatever the leaver had not).
// produce sends values to the job's topic, value i to partition (first+i) % the job's partitions; start starts a
// member of g in its own goroutine and gives the function that makes it leave.
func Rebalance(j *Job, result map[string]any, produce func(values []string, first int) error,
	start func(g *Group, name string) (leave func())) error {
	half := len(j.Values) / 2
	g := NewGroup()
	if err := produce(j.Values[:half], 0); err != nil {
		return err
	}
	leaveA, leaveB := start(g, "a"), start(g, "b")
	defer leaveA()
	if err := WaitUntil(func() bool { return g.Count() >= half && g.Has("a", "b") },
		fmt.Sprintf("both members assigned and %d records consumed", half), g.Failed); err != nil {
		leaveB()
		return err
	}
	leaveB()
	if err := produce(j.Values[half:], half); err != nil {
		return err
	}
	if err := WaitUntil(func() bool { return g.Count() >= len(j.Values) },
		fmt.Sprintf("all %d records consumed", len(j.Values)), g.Failed); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond) // a record consumed twice may still come
	return g.Finish(result)
}
