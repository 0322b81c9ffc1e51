// @platformatic/kafka driven by a job on stdin (the same jobs and results as python_driver.py and the kafkajs
// driver): node_modules/.bin/node driver.js. Prints one JSON line: the client's version and codecs, and what the
// job's scenario observed.
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Admin, ConfigResourceTypes, Consumer, FetchIsolationLevels, Producer, compressionsAlgorithms }
  from '@platformatic/kafka'

// the package's exports hide its package.json: read the installed one itself
const { version } = JSON.parse(readFileSync(new URL('node_modules/@platformatic/kafka/package.json',
  import.meta.url), 'utf8'))

const CONSUME_MS = 20000
// the codecs this build can write (zstd needs a Node.js with zlib's zstd)
const CODECS = Object.entries(compressionsAlgorithms)
  .filter(([name, codec]) => name !== 'none' && codec.available).map(([name]) => name)
const HEARTBEAT_MS = 300 // group-rebalance: a member notices a rebalance in well under a second
const TRANSFORM = 't:' // transactions: what the transform puts before each source value
const ALTERED = ['retention.ms', '3600000'] // admin: the topic config altered
// a fetch waits up to maxWaitTime (5 s by default) for data, and closing a consumer waits for it: shorter, so that
// the scenarios that stop consumers mid-way take well under a second for each stop
const FETCH_WAIT_MS = 200

class Waiting extends Error {}

const raw = text => (text === null ? undefined : Buffer.from(text, 'base64'))
const b64 = data => (data === null || data === undefined ? null : Buffer.from(data).toString('base64'))

// job.client_id (optional): every connection names it, so the suite's capture keeps the client's connections only;
// job.sasl (optional, {mechanism, username, password}): every connection logs in with it (the client's own SASL:
// PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, SASLMechanisms in its apis/enumerations.js)
const options = (job, role) => ({ clientId: job.client_id || `wirecheck-platformatic-${role}`, bootstrapBrokers: [job.bootstrap],
  retries: 5, retryDelay: 100,
  ...(job.sasl ? { sasl: { mechanism: job.sasl.mechanism, username: job.sasl.username, password: job.sasl.password } } : {}) })

async function waitUntil (condition, what, ms = CONSUME_MS) {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Waiting(what)
    await sleep(50)
  }
}

// a group member reading committed records only (the client's default, said here), committing nothing by itself
function consumer (job, groupId, extra = {}) {
  return new Consumer({ ...options(job, 'consumer'), groupId, maxWaitTime: FETCH_WAIT_MS, autocommit: false,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED, ...extra })
}

// a stream of `topics` from the group's committed offsets, from the beginning where it has none
const fromStart = topics => ({ topics, mode: 'committed', fallbackMode: 'earliest', autocommit: false })

async function produceConsume (job, result) {
  const producer = new Producer({ ...options(job, 'producer'), idempotent: Boolean(job.idempotent) })
  result.produced = []
  for (const r of job.records) { // one send per record: its offset comes back with it
    const sent = await producer.send({ compression: job.codec, messages: [{ topic: job.topic,
      partition: r.partition, key: raw(r.key), value: raw(r.value), timestamp: BigInt(r.timestamp),
      headers: new Map(r.headers.map(([name, value]) => [Buffer.from(name), raw(value)])) }] })
    const [{ partition, offset }] = sent.offsets
    result.produced.push([partition, Number(offset)])
  }
  await producer.close()
  const reader = consumer(job, job.group)
  result.consumed = []
  const stream = await reader.consume(fromStart([job.topic]))
  stream.on('data', message => {
    result.consumed.push({ partition: message.partition, offset: Number(message.offset), key: b64(message.key),
      value: b64(message.value), timestamp: Number(message.timestamp),
      headers: message.headerEntries.map(([name, value]) => [name.toString(), b64(value)]) })
  })
  try {
    await waitUntil(() => result.consumed.length >= job.records.length,
      `records (${result.consumed.length} of ${job.records.length} consumed)`)
  } finally {
    await stream.close()
    await reader.close()
  }
}

// group-rebalance: two members, each committing a record before taking the next; one leaves mid-way. Records
// come once both are assigned, so that the leaver has consumed some: the other must resume them at its commits
// (a member keeps its own position on partitions it held all along)
async function groupRebalance (job, result) {
  const values = job.values.map(raw)
  const half = Math.floor(values.length / 2)
  const producer = new Producer(options(job, 'producer'))
  const produce = async (from, to) => {
    for (let i = from; i < to; i++) {
      await producer.send({ messages: [{ topic: job.topic, partition: i % job.partitions, value: values[i] }] })
    }
  }
  result.consumed = []
  const assigned = {}
  const members = {}
  for (const name of ['a', 'b']) {
    const member = consumer(job, job.group, { heartbeatInterval: HEARTBEAT_MS })
    member.on('consumer:group:join', ({ assignments }) => {
      assigned[name] = (assignments || []).find(a => a.topic === job.topic)?.partitions || []
    })
    const stream = await member.consume(fromStart([job.topic]))
    // one record at a time: recorded once its offset is committed; after stopping, nothing more is taken
    const state = { member, stream, stopped: false, done: Promise.resolve() }
    stream.on('data', message => {
      stream.pause()
      state.done = state.done.then(async () => {
        if (state.stopped) return
        await message.commit()
        result.consumed.push([name, message.partition, Number(message.offset), b64(message.value)])
      }).finally(() => stream.resume())
    })
    members[name] = state
  }
  // both members' latest assignments, disjoint and covering the topic (a member's earlier one may still show)
  const split = () => assigned.a?.length && assigned.b?.length && assigned.a.length + assigned.b.length ===
    job.partitions && new Set([...assigned.a, ...assigned.b]).size === job.partitions
  await waitUntil(split, 'both members assigned the partitions between them')
  await produce(0, half)
  await waitUntil(() => result.consumed.length >= half, `${half} records consumed`)
  await stop(members.b)
  await produce(half, values.length)
  await producer.close()
  await waitUntil(() => result.consumed.length >= values.length, `all ${values.length} records consumed`)
  await sleep(500) // a record consumed twice may still come
  await stop(members.a)
}

async function stop (state) {
  state.stopped = true
  await state.done
  await state.stream.close()
  await state.member.close() // leaves the group
}

// transactions: consume-transform-produce, first aborted, then committed; a read_committed reader of the result
async function transactions (job, result) {
  const plain = new Producer(options(job, 'producer'))
  for (const value of job.values) {
    await plain.send({ messages: [{ topic: job.source, partition: 0, value: raw(value) }] })
  }
  await plain.close()
  // the source's group member stays in the group while its offsets go into the transactions
  const source = consumer(job, job.group)
  const read = []
  const sourceStream = await source.consume(fromStart([job.source]))
  sourceStream.on('data', message => read.push(message))
  await waitUntil(() => read.length >= job.values.length, `records of ${job.source} (${read.length} read)`)
  sourceStream.pause()
  const producer = new Producer({ ...options(job, 'producer'), transactionalId: job.transactional_id,
    idempotent: true })
  for (const commit of [false, true]) {
    const txn = await producer.beginTransaction()
    await txn.send({ messages: read.map(m => ({ topic: job.dest, partition: 0,
      value: Buffer.concat([Buffer.from(TRANSFORM), m.value]) })) })
    await txn.addConsumer(source)
    await txn.addOffset(read[read.length - 1]) // commits the offset after it: the count read
    await (commit ? txn.commit() : txn.abort())
  }
  await producer.close()
  await sourceStream.close()
  await source.close()
  const admin = new Admin(options(job, 'admin'))
  const [group] = await admin.listConsumerGroupOffsets({ groups: [job.group] })
  await admin.close()
  const committed = group.topics.find(t => t.name === job.source)?.partitions.find(p => p.partitionIndex === 0)
  result.committed = committed ? Number(committed.committedOffset) : null
  result.dest = (await consumeValues(job, `${job.group}-reader`, job.dest, job.values.length, 500)).map(b64)
}

// the first `count` values a read_committed group consumer reads from the beginning (without committing), and
// whatever comes in `settleMs` more
async function consumeValues (job, groupId, topic, count, settleMs) {
  const reader = consumer(job, groupId)
  const values = []
  const stream = await reader.consume(fromStart([topic]))
  stream.on('data', message => values.push(message.value))
  try {
    await waitUntil(() => values.length >= count, `records of ${topic} (${values.length} of ${count} read)`)
    await sleep(settleMs)
  } finally {
    await stream.close()
    await reader.close()
  }
  return values
}

// admin: create, describe, alter a config, describe again, delete
async function adminScenario (job, result) {
  const admin = new Admin(options(job, 'admin'))
  const topic = job.topic
  await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 })
  result.partitions = (await admin.metadata({ topics: [topic] })).topics.get(topic).partitionsCount
  const resource = { resourceType: ConfigResourceTypes.TOPIC, resourceName: topic }
  const config = async () => (await admin.describeConfigs({ resources: [{ ...resource,
    configurationKeys: [ALTERED[0]] }] }))[0].configs.find(c => c.name === ALTERED[0])?.value
  result.before = await config()
  await admin.alterConfigs({ resources: [{ ...resource, configs: [{ name: ALTERED[0], value: ALTERED[1] }] }] })
  result.after = await config()
  await admin.deleteTopics({ topics: [topic] })
  result.listed_after_delete = (await admin.listTopics()).includes(topic)
  await admin.close()
}

const SCENARIOS = { 'produce-consume': produceConsume, 'group-rebalance': groupRebalance, transactions,
  admin: adminScenario }

async function main () {
  const job = JSON.parse(readFileSync(0, 'utf8'))
  const result = { client: 'platformatic-kafka', version, codecs: CODECS }
  try {
    if (SCENARIOS[job.action]) await SCENARIOS[job.action](job, result)
  } catch (err) {
    if (!(err instanceof Waiting)) throw err
    console.log(JSON.stringify({ waiting_for: err.message }))
    process.exit(3)
  }
  console.log(JSON.stringify(result))
  process.exit(0) // a consumer's timers must not keep the process
}

main().catch(err => { console.error(err.stack || String(err)); process.exit(1) })
