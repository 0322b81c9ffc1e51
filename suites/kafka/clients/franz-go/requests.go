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

// sniffing: a connection that notes each request frame's API key and version as it is written
type sniffing struct {
	net.Conn
	rest int    // bytes of the current frame's body still to come
	head []byte // the next frame's first 8 bytes, as far as written
}

func (c *sniffing) Write(p []byte) (int, error) {
	for data := p; len(data) > 0; {
		if c.rest > 0 {
			n := min(c.rest, len(data))
			c.rest, data = c.rest-n, data[n:]
			continue
		}
		n := min(8-len(c.head), len(data))
		c.head, data = append(c.head, data[:n]...), data[n:]
		if len(c.head) == 8 {
			key, version := int16(binary.BigEndian.Uint16(c.head[4:6])), int16(binary.BigEndian.Uint16(c.head[6:8]))
			sent.Lock()
			if sent.versions[key] == nil {
				sent.versions[key] = map[int16]bool{}
			}
			sent.versions[key][version] = true
			sent.Unlock()
			c.rest, c.head = int(binary.BigEndian.Uint32(c.head[0:4]))-4, c.head[:0]
		}
	}
	return c.Conn.Write(p)
}

func sniffingDialer() kgo.Opt {
	var dialer net.Dialer
	return kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		return &sniffing{Conn: conn}, nil
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
