// Package driver is what the Go client drivers (franz-go, sarama) share: the job they read on stdin, the records
// as the suite writes and reads them, the JSON result and its "waiting_for"/exit-3 convention, and the waits and
// group bookkeeping that do not depend on the client library. Keys, values and header values are base64 (null
// allowed for a key).
package driver

import "encoding/base64"

// Job is every job's fields; each action reads its own.
type Job struct {
	Action          string   `json:"action"`
	Bootstrap       string   `json:"bootstrap"`
	ClientID        string   `json:"client_id"`
	SASL            *Login   `json:"sasl"`
	Topic           string   `json:"topic"`
	Group           string   `json:"group"`
	Codec           string   `json:"codec"`
	Idempotent      bool     `json:"idempotent"`
	Records         []Record `json:"records"`
	Rounds          int      `json:"rounds"`
	Partitions      int32    `json:"partitions"`
	Values          []string `json:"values"`
	Source          string   `json:"source"`
	Dest            string   `json:"dest"`
	TransactionalID string   `json:"transactional_id"`
	GrowTo          int32    `json:"grow_to"`
	DeleteBelow     int64    `json:"delete_below"`
	Offset          int64    `json:"offset"`
	Wait            int      `json:"wait"`
}

// ClientIDOr: the job's client id (every client the job makes sends it, so that the suite's capture keeps the
// client's connections only), else the driver's own
func (j *Job) ClientIDOr(own string) string {
	if j.ClientID != "" {
		return j.ClientID
	}
	return own
}

// Login is the job's SASL login.
type Login struct {
	Mechanism string `json:"mechanism"`
	Username  string `json:"username"`
	Password  string `json:"password"`
}

// Record is a produced or consumed record as the suite writes and reads it.
type Record struct {
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       *string     `json:"key"`
	Value     string      `json:"value"`
	Headers   [][2]string `json:"headers"`
	Timestamp int64       `json:"timestamp"`
}

// Rounds: the job's records split into its rounds, in order (each sent before the next, so that later batches
// start at offsets above 0)
func Rounds(j *Job) [][]Record {
	count := max(j.Rounds, 1)
	size := (len(j.Records) + count - 1) / count
	var parts [][]Record
	for start := 0; start < len(j.Records); start += size {
		parts = append(parts, j.Records[start:min(start+size, len(j.Records))])
	}
	return parts
}

// Spread: values as records to a topic's partitions in turn (value i to partition (first+i) % partitions), stamped
// now
func Spread(values []string, first int, partitions int32, now int64) []Record {
	parts := make([]Record, len(values))
	for i, value := range values {
		parts[i] = Record{Partition: int32(first+i) % partitions, Value: value, Timestamp: now}
	}
	return parts
}

// Raw: a base64 text of the job as bytes (the suite writes only valid base64)
func Raw(text string) []byte {
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		panic(err)
	}
	return data
}

// RawKey: a key of the job as bytes, nil for a null key
func RawKey(text *string) []byte {
	if text == nil {
		return nil
	}
	return Raw(*text)
}

// B64: bytes as the suite reads them
func B64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

// B64Key: a key as the suite reads it, null for a nil key
func B64Key(data []byte) *string {
	if data == nil {
		return nil
	}
	text := B64(data)
	return &text
}

// Transform: what the transactions scenario puts before each source value
const Transform = "t:"

// Altered: the topic config the admin scenario sets, and its new value
var Altered = [2]string{"retention.ms", "3600000"}
