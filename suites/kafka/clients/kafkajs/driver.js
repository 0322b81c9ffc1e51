// kafkajs driven by a job on stdin (the same job and result as python_driver.py): node driver.js
// Prints one JSON line: the client's version and codecs, and for produce-consume what was produced and consumed.
'use strict'
const { Kafka, logLevel, CompressionTypes } = require('kafkajs')
const { version } = require('kafkajs/package.json')

const CONSUME_MS = 20000
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP } // others need codec plugins

const raw = text => (text === null ? null : Buffer.from(text, 'base64'))
const b64 = data => (data === null || data === undefined ? null : Buffer.from(data).toString('base64'))

async function produceConsume (job, result) {
  const kafka = new Kafka({ clientId: 'wirecheck-kafkajs', brokers: [job.bootstrap], logLevel: logLevel.WARN,
    retry: { retries: 5, initialRetryTime: 100 } })
  const producer = kafka.producer()
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

async function main () {
  const job = JSON.parse(require('fs').readFileSync(0, 'utf8'))
  const result = { client: 'kafkajs', version, codecs: ['gzip'] }
  try {
    if (job.action === 'produce-consume') await produceConsume(job, result)
  } catch (err) {
    if (!err.waiting) throw err
    console.log(JSON.stringify({ waiting_for: `records (${result.consumed.length} of ${job.records.length} consumed)` }))
    process.exit(3)
  }
  console.log(JSON.stringify(result))
}

main().catch(err => { console.error(err.stack || String(err)); process.exit(1) })
