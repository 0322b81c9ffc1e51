// franz-go (github.com/twmb/franz-go, kgo and kadm) driven by a job on stdin: the same jobs and results as
// python_driver.py and the kafkajs driver (suites/kafka/test_clients.py runs it). Built with
// `go build -o franz-go-driver .` in this folder; the job, the result and the records' encoding are go-common's
// (package driver), shared with the Sarama driver.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	driver "wirecheck/suites/kafka/clients/go-common"
)

var codecs = map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}

// options: where the server is and how to log in (every client the job makes logs in with the job's login)
func options(j *driver.Job, more ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(j.Bootstrap), kgo.ClientID(j.ClientIDOr("wirecheck-franz-go")),
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

func client(j *driver.Job, more ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(options(j, more...)...)
	if err != nil {
		panic(err)
	}
	return cl
}

// limited: a context that ends at the driver's consume limit
func limited() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), driver.ConsumeLimit)
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

var scenarios = map[string]driver.Scenario{
	"produce-consume":         driver.ProduceConsume(send, consume),
	"group-consume":           driver.GroupConsume(send, consume),
	"group-rebalance":         groupRebalance,
	"consumer-group-protocol": consumerGroupProtocol,
	"transactions":            transactions,
	// the same, with the request versions sent: KIP-890's transaction protocol version 2 is franz-go's where the
	// broker finalizes transaction.version 2 (kgo/client.go supportsKIP890p2)
	"transactions-v2": func(j *driver.Job, result map[string]any) error {
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
	driver.Run("franz-go", driver.ModuleVersion("github.com/twmb/franz-go"),
		[]string{"gzip", "snappy", "lz4", "zstd"}, scenarios) // kgo builds in every codec
}
