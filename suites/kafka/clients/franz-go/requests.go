package main

import (
	"context"
	"encoding/binary"
	"net"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sent: every request version the driver's clients wrote, by API key, read off the bytes each connection writes
// (size, then the request header's API key and version): kgo's hooks name the key, not the version
var sent = struct {
	sync.Mutex
	versions map[int16]map[int16]bool
}{versions: map[int16]map[int16]bool{}}

// sniffing: a connection that notes each request frame's API key and version as it is written; with a telemetry
// log, it also reads the answers to its GetTelemetrySubscriptions and PushTelemetry requests (by correlation id)
type sniffing struct {
	net.Conn
	rest int    // bytes of the current request's body still to come
	head []byte // the next request's first 12 bytes (size, key, version, correlation id), as far as written

	tele    *telemetryLog
	mu      sync.Mutex
	pending map[int32][2]int16 // correlation id -> key, version of a telemetry request awaiting its answer
	answer  []byte             // the response being read: its size and correlation id, then its body if kept
	left    int                // bytes of the current response still to come
	keep    [2]int16           // the key and version the current response answers (key -1: not kept)
}

func (c *sniffing) Write(p []byte) (int, error) {
	for data := p; len(data) > 0; {
		if c.rest > 0 {
			n := min(c.rest, len(data))
			c.rest, data = c.rest-n, data[n:]
			continue
		}
		n := min(12-len(c.head), len(data))
		c.head, data = append(c.head, data[:n]...), data[n:]
		if len(c.head) == 12 {
			key, version := int16(binary.BigEndian.Uint16(c.head[4:6])), int16(binary.BigEndian.Uint16(c.head[6:8]))
			sent.Lock()
			if sent.versions[key] == nil {
				sent.versions[key] = map[int16]bool{}
			}
			sent.versions[key][version] = true
			sent.Unlock()
			if c.tele != nil && (key == telemetrySubscriptions || key == telemetryPush) {
				c.mu.Lock()
				c.pending[int32(binary.BigEndian.Uint32(c.head[8:12]))] = [2]int16{key, version}
				c.mu.Unlock()
			}
			c.rest, c.head = int(binary.BigEndian.Uint32(c.head[0:4]))-8, c.head[:0]
		}
	}
	return c.Conn.Write(p)
}

func (c *sniffing) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.tele != nil {
		c.answered(p[:n])
	}
	return n, err
}

// answered: the response bytes read, split into frames; a telemetry answer's body goes to the log
func (c *sniffing) answered(data []byte) {
	for len(data) > 0 {
		if len(c.answer) < 8 { // size and correlation id
			n := min(8-len(c.answer), len(data))
			c.answer, data = append(c.answer, data[:n]...), data[n:]
			if len(c.answer) == 8 {
				c.left = int(binary.BigEndian.Uint32(c.answer[0:4])) - 4
				c.mu.Lock()
				request, ok := c.pending[int32(binary.BigEndian.Uint32(c.answer[4:8]))]
				delete(c.pending, int32(binary.BigEndian.Uint32(c.answer[4:8])))
				c.mu.Unlock()
				c.keep = [2]int16{-1, 0}
				if ok {
					c.keep = request
				}
			}
			continue
		}
		n := min(c.left, len(data))
		if c.keep[0] >= 0 {
			c.answer = append(c.answer, data[:n]...)
		}
		c.left, data = c.left-n, data[n:]
		if c.left == 0 {
			if c.keep[0] >= 0 {
				c.tele.answer(c.keep[0], c.keep[1], c.answer[8:])
			}
			c.answer = c.answer[:0]
		}
	}
}

// sniffingDialer: connections that note the requests written, and read telemetry answers into tele (if not nil)
func sniffingDialer(tele *telemetryLog) kgo.Opt {
	var dialer net.Dialer
	return kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		return &sniffing{Conn: conn, tele: tele, pending: map[int32][2]int16{}}, nil
	})
}

// upperSnake: kmsg's API name as Apache Kafka's ApiKeys names it (TxnOffsetCommit: TXN_OFFSET_COMMIT, SASLHandshake:
// SASL_HANDSHAKE)
func upperSnake(name string) string {
	var out strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(runes[i-1]) ||
			(i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1]))) {
			out.WriteRune('_')
		}
		out.WriteRune(unicode.ToUpper(r))
	}
	return out.String()
}

// requestsSent: API name -> the versions sent, ascending
func requestsSent() map[string][]int16 {
	sent.Lock()
	defer sent.Unlock()
	shown := map[string][]int16{}
	for key, versions := range sent.versions {
		name := upperSnake(kmsg.NameForKey(key))
		for version := range versions {
			shown[name] = append(shown[name], version)
		}
		sort.Slice(shown[name], func(i, j int) bool { return shown[name][i] < shown[name][j] })
	}
	return shown
}
