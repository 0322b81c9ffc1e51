// Sarama (github.com/IBM/sarama) driven by a job on stdin: the same jobs and results as python_driver.py and the
// kafkajs driver (suites/kafka/test_clients.py runs it). Built with `go build -o sarama-driver .` in this folder;
// prints one JSON line, {"waiting_for": ...} with exit status 3 when the driver's own limit passed. Keys, values
// and header values are base64 (null allowed for a key). Sarama's defaults apply (its protocol version
// sarama.DefaultVersion, 2.8) except where a scenario is about a setting.
package main

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"runtime/debug"
	"time"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
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
	GrowTo          int32    `json:"grow_to"`
	DeleteBelow     int64    `json:"delete_below"`
	Offset          int64    `json:"offset"`
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

var codecs = map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}

func raw(text string) []byte {
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		panic(err)
	}
	return data
}

func rawKey(text *string) sarama.Encoder {
	if text == nil {
		return nil
	}
	return sarama.ByteEncoder(raw(*text))
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

func b64Key(data []byte) *string {
	if data == nil {
		return nil
	}
	text := b64(data)
	return &text
}

// version: Sarama's module version, as this binary was built with it
func version() string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/IBM/sarama" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// xdgSCRAM: Sarama leaves the SCRAM conversation to the application (sarama.SCRAMClient); this is the
// implementation its examples use, xdg-go/scram, which checks the server's signature
type xdgSCRAM struct {
	hash         scram.HashGeneratorFcn
	conversation *scram.ClientConversation
}

func (s *xdgSCRAM) Begin(user, password, authzID string) error {
	client, err := s.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conversation = client.NewConversation()
	return nil
}

func (s *xdgSCRAM) Step(challenge string) (string, error) { return s.conversation.Step(challenge) }

func (s *xdgSCRAM) Done() bool { return s.conversation.Done() }

// config: Sarama's defaults, where the server is and how to log in (every client the job makes logs in with the
// job's login)
func config(j *job) *sarama.Config {
	conf := sarama.NewConfig()
	conf.ClientID = j.clientID("wirecheck-sarama")
	if j.SASL != nil {
		conf.Net.SASL.Enable = true
		conf.Net.SASL.User = j.SASL.Username
		conf.Net.SASL.Password = j.SASL.Password
		switch j.SASL.Mechanism {
		case "PLAIN":
			conf.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		case "SCRAM-SHA-256":
			conf.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
			conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient {
				return &xdgSCRAM{hash: scram.HashGeneratorFcn(sha256.New)}
			}
		case "SCRAM-SHA-512":
			conf.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient {
				return &xdgSCRAM{hash: scram.HashGeneratorFcn(sha512.New)}
			}
		default:
			panic("unknown SASL mechanism " + j.SASL.Mechanism)
		}
	}
	return conf
}

func brokers(j *job) []string { return []string{j.Bootstrap} }

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
	"produce-consume": produceConsume,
	"group-consume":   groupConsume,
	"group-rebalance": groupRebalance,
	"transactions":    transactions,
	"admin":           admin,
	"cluster-admin":   clusterAdmin,
	"group-admin":     groupAdmin,
}

func main() {
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)
	var j job
	if err := json.NewDecoder(os.Stdin).Decode(&j); err != nil {
		fmt.Fprintln(os.Stderr, "reading the job:", err)
		os.Exit(1)
	}
	result := map[string]any{"client": "sarama", "version": version(),
		"codecs": []string{"gzip", "snappy", "lz4", "zstd"}} // Sarama builds in every codec
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
			fmt.Fprintln(os.Stderr, "sarama driver:", err)
			os.Exit(1)
		}
	}
	emit(result)
}

func emit(value any) {
	line, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(line))
}
