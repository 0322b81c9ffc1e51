// Sarama (github.com/IBM/sarama) driven by a job on stdin: the same jobs and results as python_driver.py and the
// kafkajs driver (suites/kafka/test_clients.py runs it). Built with `go build -o sarama-driver .` in this folder;
// the job, the result and the records' encoding are go-common's (package driver), shared with the franz-go
// driver. Sarama's defaults apply (its protocol version sarama.DefaultVersion, 2.8) except where a scenario is
// about a setting.
package main

import (
	"crypto/sha256"
	"crypto/sha512"
	"log"
	"os"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"

	driver "wirecheck/suites/kafka/clients/go-common"
)

var codecs = map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}

// rawKey: a key of the job as Sarama's Encoder (a nil Encoder for a null key)
func rawKey(text *string) sarama.Encoder {
	if text == nil {
		return nil
	}
	return sarama.ByteEncoder(driver.Raw(*text))
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
func config(j *driver.Job) *sarama.Config {
	conf := sarama.NewConfig()
	conf.ClientID = j.ClientIDOr("wirecheck-sarama")
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

func brokers(j *driver.Job) []string { return []string{j.Bootstrap} }

var scenarios = map[string]driver.Scenario{
	"produce-consume": driver.ProduceConsume(send, consume),
	"group-consume":   driver.GroupConsume(send, consume),
	"group-rebalance": groupRebalance,
	"transactions":    transactions,
	"admin":           admin,
	"cluster-admin":   clusterAdmin,
	"group-admin":     groupAdmin,
}

func main() {
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)
	driver.Run("sarama", driver.ModuleVersion("github.com/IBM/sarama"),
		[]string{"gzip", "snappy", "lz4", "zstd"}, scenarios) // Sarama builds in every codec
}
