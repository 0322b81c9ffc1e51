// franz-go (github.com/twmb/franz-go, kgo and kadm) driven by a job on stdin: the same jobs and results as
// python_driver.py and the kafkajs driver (suites/kafka/test_clients.py runs it). Built with
// `go build -o franz-go-driver .` in this folder; prints one JSON line, {"waiting_for": ...} with exit status 3
// when the driver's own limit passed. Keys, values and header values are base64 (null allowed for a key).
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// consumeLimit is the driver's own limit on waiting for records (the case's limit is longer): a driver that gives
// up says what it waited for.
const consumeLimit = 20 * time.Second

// heartbeat: group-rebalance members notice a rebalance in well under a second (the default 3 s only slows the
// scenario down; the scenario is about the rebalance)
const heartbeat = 300 * time.Millisecond

// job is every job's fields; each action reads its own.
type job struct {
	Action          string   `json:"action"`
	Bootstrap       string   `json:"bootstrap"`
	ClientID        string   `json:"client_id"`
	SASL            *login   `json:"sasl"`
	Topic           string   `json:"topic"`
	Group           string   `json:"group"`
	Codec           string   `json:"codec"`
	Idempotent      bool     `json:"idempotent"`
	Records         []record `json:"records"`
	Rounds          int      `json:"rounds"`
	Partitions      int32    `json:"partitions"`
	Values          []string `json:"values"`
	Source          string   `json:"source"`
	Dest            string   `json:"dest"`
	TransactionalID string   `json:"transactional_id"`
	GrowTo          int      `json:"grow_to"`
	DeleteBelow     int64    `json:"delete_below"`
	Offset          int64    `json:"offset"`
	Wait            int      `json:"wait"`
}

// clientID: the job's client id (every client the job makes sends it, so that the suite's capture keeps the
// client's connections only), else the driver's own
func (j *job) clientID(own string) string {
	if j.ClientID != "" {
		return j.ClientID
	}
	return own
}

type login struct {
	Mechanism string `json:"mechanism"`
	Username  string `json:"username"`
	Password  string `json:"password"`
}

// record is a produced or consumed record as the suite writes and reads it.
type record struct {
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       *string     `json:"key"`
	Value     string      `json:"value"`
	Headers   [][2]string `json:"headers"`
	Timestamp int64       `json:"timestamp"`
}

// waiting: the driver's own limit passed while waiting for what it says
type waiting struct{ what string }

func (w waiting) Error() string { return w.what }

var codecs = map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}

func raw(text string) []byte {
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		panic(err)
	}
	return data
}

func rawKey(text *string) []byte {
	if text == nil {
		return nil
	}
	return raw(*text)
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

func b64Key(data []byte) *string {
	if data == nil {
		return nil
	}
	text := b64(data)
	return &text
}

// version: franz-go's module version, as this binary was built with it
func version() string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/twmb/franz-go" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// options: where the server is and how to log in (every client the job makes logs in with the job's login)
func options(j *job, more ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(j.Bootstrap), kgo.ClientID(j.clientID("wirecheck-franz-go")),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelWarn, nil)), sniffingDialer(nil)}
	if j.SASL != nil {
		var mechanism sasl.Mechanism
		switch j.SASL.Mechanism {
		case "PLAIN":
			mechanism = plain.Auth{User: j.SASL.Username, Pass: j.SASL.Password}.AsMechanism()
		case "SCRAM-SHA-256":
			mechanism = scram.Auth{User: j.SASL.Username, Pass: j.SASL.Password}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			mechanism = scram.Auth{User: j.SASL.Username, Pass: j.SASL.Password}.AsSha512Mechanism()
		default:
			panic("unknown SASL mechanism " + j.SASL.Mechanism)
		}
		opts = append(opts, kgo.SASL(mechanism))
	}
	return append(opts, more...)
}

func client(j *job, more ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(options(j, more...)...)
	if err != nil {
		panic(err)
	}
	return cl
}

// limited: a context that ends at the driver's consume limit
func limited() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), consumeLimit)
}

// fetchErr: the first error of a poll, other than the poll's own context ending
func fetchErr(fetches kgo.Fetches) error {
	for _, failed := range fetches.Errors() {
		if !errors.Is(failed.Err, context.DeadlineExceeded) && !errors.Is(failed.Err, context.Canceled) {
			return fmt.Errorf("fetch %s-%d: %w", failed.Topic, failed.Partition, failed.Err)
		}
	}
	return nil
}

// waitUntil polls condition until it holds, a member failed (errs) or the limit passed
func waitUntil(condition func() bool, what string, errs func() error) error {
	end := time.Now().Add(consumeLimit)
	for !condition() {
		if err := errs(); err != nil {
			return err
		}
		if time.Now().After(end) {
			return waiting{what}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

var scenarios = map[string]func(*job, map[string]any) error{
	"produce-consume":         produceConsume,
	"group-consume":           groupConsume,
	"group-rebalance":         groupRebalance,
	"consumer-group-protocol": consumerGroupProtocol,
	"transactions":            transactions,
	// the same, with the request versions sent: KIP-890's transaction protocol version 2 is franz-go's where the
	// broker finalizes transaction.version 2 (kgo/client.go supportsKIP890p2)
	"transactions-v2": func(j *job, result map[string]any) error {
		err := transactions(j, result)
		result["requests"] = requestsSent()
		return err
	},
	"admin":         admin,
	"share-group":   shareGroup,
	"telemetry":     telemetry,
	"cluster-admin": clusterAdmin,
	"group-admin":   groupAdmin,
}

func main() {
	var j job
	if err := json.NewDecoder(os.Stdin).Decode(&j); err != nil {
		fmt.Fprintln(os.Stderr, "reading the job:", err)
		os.Exit(1)
	}
	result := map[string]any{"client": "franz-go", "version": version(),
		"codecs": []string{"gzip", "snappy", "lz4", "zstd"}} // kgo builds in every codec
	if j.Action != "describe" {
		scenario, known := scenarios[j.Action]
		if !known {
			fmt.Fprintln(os.Stderr, "unknown action", j.Action)
			os.Exit(1)
		}
		if err := scenario(&j, result); err != nil {
			var waited waiting
			if errors.As(err, &waited) {
				emit(map[string]any{"waiting_for": waited.what})
				os.Exit(3)
			}
			fmt.Fprintln(os.Stderr, "franz-go driver:", err)
			os.Exit(1)
		}
	}
	emit(result)
}

var printMu sync.Mutex

func emit(value any) {
	printMu.Lock()
	defer printMu.Unlock()
	line, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(line))
}
