// kafkajs 2.2.4 against a Kafka-protocol broker: node scenarios.js SCENARIO HOST:PORT PREFIX
// Prints one JSON object (what the scenario observed) on stdout; tests/interop/test_kafkajs.py checks it.
'use strict'
const { Kafka, logLevel, ConfigResourceTypes } = require('kafkajs')

const [scenario, broker, prefix] = process.argv.slice(2)
const kafka = new Kafka({ clientId: 'wirecheck-kafkajs', brokers: [broker], logLevel: logLevel.ERROR,
  retry: { retries: 5, initialRetryTime: 100 } })

function consumeN (consumer, topic, count, timeoutMs = 20000) {
  // Resolves with the first `count` values the group consumer receives, in partition order.
  return new Promise((resolve, reject) => {
    const values = []
    const timer = setTimeout(() => reject(new Error(`only ${values.length} of ${count} messages`)), timeoutMs)
    consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value.toString())
        if (values.length === count) { clearTimeout(timer); resolve(values) }
      }
    }).catch(reject)
  })
}

async function produceConsume () {
  const topic = `${prefix}-pc`
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })
  const producer = kafka.producer()
  await producer.connect()
  const sent = await producer.send({ topic, messages: ['a', 'b', 'c'].map(v => ({ key: 'k', value: v })) })
  await producer.disconnect()
  const groupId = `${prefix}-group`
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const values = await consumeN(consumer, topic, 3)
  await consumer.disconnect() // commits what it consumed, then leaves
  const committed = await admin.fetchOffsets({ groupId, topics: [topic] })
  await admin.disconnect()
  return { baseOffset: sent[0].baseOffset, values, committed: committed[0].partitions[0].offset }
}

async function adminScenario () {
  const topic = `${prefix}-adm`
  const admin = kafka.admin()
  await admin.connect()
  const created = await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })
  const producer = kafka.producer()
  await producer.connect()
  for (const v of ['a', 'b', 'c']) await producer.send({ topic, messages: [{ key: 'k', value: v }] })
  await producer.disconnect()
  const describe = async () => (await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }],
    includeSynonyms: false
  })).resources[0].configEntries.map(e => [e.configName, e.configValue])
  const before = await describe()
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic,
    configEntries: [{ name: 'retention.ms', value: '3600000' }] }] })
  const after = await describe()
  let unknownConfig = null
  try {
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic,
      configEntries: [{ name: 'wirecheck.no.such.config', value: '1' }] }] })
  } catch (e) { unknownConfig = e.type || e.name }
  const offsetsBefore = await admin.fetchTopicOffsets(topic)
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] })
  const offsetsAfter = await admin.fetchTopicOffsets(topic)
  await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] })
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
  const groupId = `${prefix}-admin-group`
  await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] })
  const groupsBefore = (await admin.listGroups()).groups.map(g => g.groupId).filter(g => g === groupId)
  const deleted = await admin.deleteGroups([groupId])
  const groupsAfter = (await admin.listGroups()).groups.map(g => g.groupId).filter(g => g === groupId)
  const cluster = await admin.describeCluster()
  await admin.deleteTopics({ topics: [topic] })
  const topicsAfter = (await admin.listTopics()).filter(t => t === topic)
  await admin.disconnect()
  return { created, before, after, unknownConfig, offsetsBefore, offsetsAfter,
    partitions: metadata.topics[0].partitions.map(p => p.partitionId).sort(),
    groupsBefore, deleted: deleted.map(d => [d.groupId, d.errorCode]), groupsAfter,
    brokers: cluster.brokers.map(b => [b.nodeId, b.host, b.port]), topicsAfter }
}

async function transaction () {
  const source = `${prefix}-tx-src`
  const sink = `${prefix}-tx-sink`
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: source }, { topic: sink }], waitForLeaders: true })
  const producer = kafka.producer({ transactionalId: `${prefix}-txid`, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const groupId = `${prefix}-tx-group`
  const committedTxn = await producer.transaction()
  await committedTxn.send({ topic: sink, messages: [{ key: 'k', value: 'kept-1' }, { key: 'k', value: 'kept-2' }] })
  await committedTxn.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: source,
    partitions: [{ partition: 0, offset: '7' }] }] })
  await committedTxn.commit()
  const abortedTxn = await producer.transaction()
  await abortedTxn.send({ topic: sink, messages: [{ key: 'k', value: 'dropped' }] })
  await abortedTxn.abort()
  const lastTxn = await producer.transaction()
  await lastTxn.send({ topic: sink, messages: [{ key: 'k', value: 'kept-3' }] })
  await lastTxn.commit()
  await producer.disconnect()
  const offsets = await admin.fetchOffsets({ groupId, topics: [source] })
  await admin.disconnect()
  const consumer = kafka.consumer({ groupId: `${prefix}-tx-reader`, readUncommitted: false })
  await consumer.connect()
  await consumer.subscribe({ topic: sink, fromBeginning: true })
  const values = await consumeN(consumer, sink, 3)
  await consumer.disconnect()
  return { sourceOffset: offsets[0].partitions[0].offset, values }
}

const scenarios = { 'produce-consume': produceConsume, admin: adminScenario, transaction }
scenarios[scenario]()
  .then(result => { process.stdout.write(JSON.stringify(result) + '\n'); process.exit(0) })
  .catch(error => { process.stderr.write(`${error.stack || error}\n`); process.exit(1) })
