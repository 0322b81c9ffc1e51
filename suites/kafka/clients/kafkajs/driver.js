// kafkajs driven by a job on stdin (the same jobs and results as python_driver.py): node driver.js
// Prints one JSON line: the client's version and codecs, and what the job's scenario observed.
'use strict'
const { Kafka, logLevel, CompressionTypes, ConfigResourceTypes } = require('kafkajs')
const { version } = require('kafkajs/package.json')

const CONSUME_MS = 20000
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP } // others need codec plugins

const HEARTBEAT_MS = 300 // group-rebalance: a member notices a rebalance in well under a second
const TRANSFORM = 't:' // transactions: what the transform puts before each source value
const ALTERED = ['retention.ms', '3600000'] // admin: the topic config altered
// a consumer's disconnect waits for its pending fetch, which waits up to maxWaitTimeInMs (5 s by default) for data:
// shorter for the scenarios that stop consumers mid-way, so that each stop takes well under a second
const FETCH_WAIT_MS = 200

class Waiting extends Error {}

const raw = text => (text === null ? null : Buffer.from(text, 'base64'))
const b64 = data => (data === null || data === undefined ? null : Buffer.from(data).toString('base64'))

// job.sasl ({ mechanism, username, password }, optional): log in with that mechanism (kafkajs names them in lower case)
const sasl = job => (job.sasl ? { sasl: { mechanism: job.sasl.mechanism.toLowerCase(), username: job.sasl.username,
  password: job.sasl.password } } : {})

// job.client_id (optional): every connection names it, so the suite's capture keeps the client's connections only
const client = job => new Kafka({ clientId: job.client_id || 'wirecheck-kafkajs', brokers: [job.bootstrap], logLevel: logLevel.WARN,
  retry: { retries: 5, initialRetryTime: 100 }, ...sasl(job) })

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function waitUntil (condition, what, ms = CONSUME_MS) {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Waiting(what)
    await sleep(50)
  }
}

async function produceConsume (job, result) {
  const kafka = client(job)
  const producer = kafka.producer(job.idempotent ? { idempotent: true } : {})
  await producer.connect()
  result.produced = []
  for (const r of job.records) { // one send per record: its offset comes back with it
    const [sent] = await producer.send({ topic: job.topic, compression: CODECS[job.codec], messages: [{
      partition: r.partition, key: raw(r.key), value: raw(r.value), timestamp: String(r.timestamp),
      headers: Object.fromEntries(r.headers.map(([name, value]) => [name, raw(value)])) }] })
    result.produced.push([sent.partition, Number(sent.baseOffset)])
  }
  await producer.disconnect()
  const consumer = kafka.consumer({ groupId: job.group })
  await consumer.connect()
  await consumer.subscribe({ topic: job.topic, fromBeginning: true })
  result.consumed = []
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error('waiting'), { waiting: true })), CONSUME_MS)
    consumer.run({ autoCommit: false, eachMessage: async ({ partition, message }) => {
      result.consumed.push({ partition, offset: Number(message.offset), key: b64(message.key),
        value: b64(message.value), timestamp: Number(message.timestamp),
        headers: Object.entries(message.headers || {}).map(([name, value]) => [name, b64(value)]) })
      if (result.consumed.length >= job.records.length) { clearTimeout(timer); resolve() }
    } }).catch(reject)
  }).finally(() => consumer.disconnect())
}

// group-rebalance: two members, each committing a record before taking the next; one leaves mid-way
async function groupRebalance (job, result) {
  const kafka = client(job)
  const values = job.values.map(raw)
  const half = Math.floor(values.length / 2)
  const producer = kafka.producer()
  await producer.connect()
  const produce = async from => {
    for (let i = from; i < (from ? values.length : half); i++) {
      await producer.send({ topic: job.topic, messages: [{ partition: i % job.partitions, value: values[i] }] })
    }
  }
  await produce(0)
  result.consumed = []
  const assigned = {}
  const members = {}
  for (const name of ['a', 'b']) {
    const consumer = kafka.consumer({ groupId: job.group, heartbeatInterval: HEARTBEAT_MS, maxWaitTimeInMs: FETCH_WAIT_MS })
    consumer.on(consumer.events.GROUP_JOIN, e => { assigned[name] = (e.payload.memberAssignment[job.topic] || []) })
    await consumer.connect()
    await consumer.subscribe({ topic: job.topic, fromBeginning: true })
    await consumer.run({ autoCommit: false, eachMessage: async ({ partition, message }) => {
      result.consumed.push([name, partition, Number(message.offset), b64(message.value)])
      await consumer.commitOffsets([{ topic: job.topic, partition, offset: String(Number(message.offset) + 1) }])
    } })
    members[name] = consumer
  }
  await waitUntil(() => result.consumed.length >= half && assigned.a?.length && assigned.b?.length,
    `both members assigned and ${half} records consumed`)
  await members.b.disconnect()
  await produce(half)
  await producer.disconnect()
  await waitUntil(() => result.consumed.length >= values.length, `all ${values.length} records consumed`)
  await sleep(500) // a record consumed twice may still come
  await members.a.disconnect()
}

// transactions: consume-transform-produce, first aborted, then committed; a read_committed reader of the result
async function transactions (job, result) {
  const kafka = client(job)
  const plain = kafka.producer()
  await plain.connect()
  for (const value of job.values) await plain.send({ topic: job.source, messages: [{ partition: 0, value: raw(value) }] })
  await plain.disconnect()
  const read = await consumeValues(kafka, job.group, job.source, job.values.length, 0)
  const producer = kafka.producer({ transactionalId: job.transactional_id, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  for (const commit of [false, true]) {
    const txn = await producer.transaction()
    await txn.send({ topic: job.dest, messages: read.map(v => ({ partition: 0, value: Buffer.concat([Buffer.from(TRANSFORM), v]) })) })
    await txn.sendOffsets({ consumerGroupId: job.group, topics: [{ topic: job.source,
      partitions: [{ partition: 0, offset: String(read.length) }] }] })
    await (commit ? txn.commit() : txn.abort())
  }
  await producer.disconnect()
  const admin = kafka.admin()
  await admin.connect()
  const [offsets] = await admin.fetchOffsets({ groupId: job.group, topics: [job.source] })
  await admin.disconnect()
  result.committed = Number(offsets.partitions[0].offset)
  result.dest = (await consumeValues(kafka, `${job.group}-reader`, job.dest, job.values.length, 500)).map(b64)
}

// the first `count` values a read_committed group consumer reads from the beginning (without committing), and
// whatever comes in `settleMs` more
async function consumeValues (kafka, groupId, topic, count, settleMs) {
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: FETCH_WAIT_MS })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const values = []
  await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => { values.push(message.value) } })
  try {
    await waitUntil(() => values.length >= count, `records of ${topic} (${values.length} of ${count} read)`)
    await sleep(settleMs)
  } finally {
    await consumer.disconnect()
  }
  return values
}

// admin: create, describe, alter a config, describe again, delete
async function adminScenario (job, result) {
  const admin = client(job).admin()
  await admin.connect()
  const topic = job.topic
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true })
  result.partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.length
  const config = async () => (await admin.describeConfigs({ includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [ALTERED[0]] }] }))
    .resources[0].configEntries.find(e => e.configName === ALTERED[0])?.configValue
  result.before = await config()
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic,
    configEntries: [{ name: ALTERED[0], value: ALTERED[1] }] }] })
  result.after = await config()
  await admin.deleteTopics({ topics: [topic] })
  result.listed_after_delete = (await admin.listTopics()).includes(topic)
  await admin.disconnect()
}

// cluster-admin: the topic grown and described, partition 0's first records deleted, the cluster described
async function clusterAdmin (job, result) {
  const kafka = client(job)
  const producer = kafka.producer()
  await producer.connect()
  await producer.send({ topic: job.topic, messages: job.values.map(v => ({ partition: 0, value: raw(v) })) })
  await producer.disconnect()
  const admin = kafka.admin()
  await admin.connect()
  try {
    await admin.createPartitions({ topicPartitions: [{ topic: job.topic, count: job.grow_to }] })
    // the new partitions' leaders take their place a moment later (Admin.java: "it may take several seconds"), and
    // deleteTopicRecords lists every partition's offsets first: asked until each answers, for up to 15 s
    const until = Date.now() + 15000
    for (;;) {
      try {
        await admin.fetchTopicOffsets(job.topic)
        break
      } catch (error) {
        if (!error.retriable || Date.now() > until) throw error
        await sleep(200)
      }
    }
    const metadata = await admin.fetchTopicMetadata({ topics: [job.topic] })
    result.partitions = metadata.topics[0].partitions.length
    await admin.deleteTopicRecords({ topic: job.topic,
      partitions: [{ partition: 0, offset: String(job.delete_below) }] })
    result.brokers = (await admin.describeCluster()).brokers.map(b => [b.nodeId, b.host, b.port])
  } finally {
    await admin.disconnect()
  }
}

// group-admin: an offset committed (kafkajs commits without consuming through its admin client), the group listed
// with it, then deleted
async function groupAdmin (job, result) {
  const admin = client(job).admin()
  await admin.connect()
  try {
    await admin.setOffsets({ groupId: job.group, topic: job.topic,
      partitions: [{ partition: 0, offset: String(job.offset) }] })
    const listed = async () => (await admin.listGroups()).groups.some(g => g.groupId === job.group)
    result.listed = await listed()
    const [offsets] = await admin.fetchOffsets({ groupId: job.group, topics: [job.topic] })
    const first = offsets.partitions.find(p => p.partition === 0)
    result.offset = first && Number(first.offset) >= 0 ? Number(first.offset) : null
    await admin.deleteGroups([job.group])
    result.listed_after_delete = await listed()
  } finally {
    await admin.disconnect()
  }
}

const SCENARIOS = { 'produce-consume': produceConsume, 'group-rebalance': groupRebalance, transactions,
  admin: adminScenario, 'cluster-admin': clusterAdmin, 'group-admin': groupAdmin }

async function main () {
  const job = JSON.parse(require('fs').readFileSync(0, 'utf8'))
  const result = { client: 'kafkajs', version, codecs: ['gzip'] }
  try {
    if (SCENARIOS[job.action]) await SCENARIOS[job.action](job, result)
  } catch (err) {
    if (!err.waiting && !(err instanceof Waiting)) throw err
    const waitingFor = err instanceof Waiting
      ? err.message : `records (${result.consumed.length} of ${job.records.length} consumed)`
    console.log(JSON.stringify({ waiting_for: waitingFor }))
    process.exit(3)
  }
  console.log(JSON.stringify(result))
  process.exit(0) // a consumer's timers must not keep the process
}

main().catch(err => { console.error(err.stack || String(err)); process.exit(1) })
