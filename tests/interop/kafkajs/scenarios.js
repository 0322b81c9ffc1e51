// kafkajs 2.2.4 against a Kafka-protocol broker: node scenarios.js SCENARIO HOST:PORT PREFIX
// Prints one JSON object (what the scenario observed) on stdout; tests/interop/test_kafkajs.py checks it.
'use strict'
const { Kafka, logLevel, ConfigResourceTypes } = require('kafkajs')

const [scenario, broker, prefix] = process.argv.slice(2)
const kafka = new Kafka({ clientId: 'wirecheck-kafkajs', brokers: [broker], logLevel: logLevel.ERROR,
  retry: { retries: 5, initialRetryTime: 100 } })

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

const scenarios = { admin: adminScenario }
scenarios[scenario]()
  .then(result => { process.stdout.write(JSON.stringify(result) + '\n'); process.exit(0) })
  .catch(error => { process.stderr.write(`${error.stack || error}\n`); process.exit(1) })
