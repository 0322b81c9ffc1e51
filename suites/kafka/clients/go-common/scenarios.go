package driver

// Send produces parts (the job's records in rounds, each sent before the next) to the job's topic with codec, by an
// idempotent producer where idempotent is set; [partition, offset] per record, in job order.
type Send func(j *Job, codec string, idempotent bool, parts [][]Record) ([][2]int64, error)

// Consume: a member of the job's group reads count records of the job's topic (from the earliest offset where the
// group has none), committing them when commit is set (and nothing otherwise); the member leaves on return.
type Consume func(j *Job, count int, commit bool) ([]Record, error)

// ProduceConsume is produce-consume (also idempotent, compression, sasl): the records produced in rounds with the
// job's codec, then consumed back by a group member that commits nothing
func ProduceConsume(send Send, consume Consume) Scenario {
	return func(j *Job, result map[string]any) error {
		return produceThenConsume(j, result, send, consume, j.Codec, j.Idempotent, Rounds(j), false)
	}
}

// GroupConsume is group-consume: the job's records produced, then read by the group's only member, which commits
// what it read and leaves; a second run of the group reads on from there
func GroupConsume(send Send, consume Consume) Scenario {
	return func(j *Job, result map[string]any) error {
		return produceThenConsume(j, result, send, consume, "none", false, [][]Record{j.Records}, true)
	}
}

func produceThenConsume(j *Job, result map[string]any, send Send, consume Consume, codec string, idempotent bool,
	parts [][]Record, commit bool) error {
	produced, err := send(j, codec, idempotent, parts)
	if err != nil {
		return err
	}
	result["produced"] = produced
	consumed, err := consume(j, len(j.Records), commit)
	result["consumed"] = consumed
	return err
}
