// kafka_properties.test.mjs - the librdkafka pass-through a Kafka over
// SASL/SSL needs (docs/deploy.md): each variable reaches its own client -
// ingest's producer (KAFKA_PRODUCER_PROPERTIES), the writer's consumer
// (KAFKA_CONSUMER_PROPERTIES) and its dead-letter producer
// (KAFKA_PRODUCER_PROPERTIES), shown by a property librdkafka refuses being
// named by that client as the service refuses to start - and the documented
// SASL_SSL example is accepted by the librdkafka the services link (they
// start and answer /_health; no broker here speaks SASL, so not /_ready).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, ROOT, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';

const BIN = (name) => path.join(BUILD, 'bin', name);

// the example's lines from docs/deploy.md, "Kafka over SASL/SSL"
function documentedExample() {
  const docs = fs.readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
  const section = docs.split('## Kafka over SASL/SSL')[1].split('\n## ')[0];
  const env = Object.fromEntries([...section.matchAll(/^(KAFKA_[A-Z_]+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
  assert.match(env.KAFKA_PRODUCER_PROPERTIES ?? '', /security\.protocol=SASL_SSL/);
  assert.match(env.KAFKA_CONSUMER_PROPERTIES ?? '', /security\.protocol=SASL_SSL/);
  return env;
}

describe('Kafka client properties', () => {
  let redis, tmp;
  // a closed loopback port: the services start without reaching a broker
  const broker = '127.0.0.1:9';
  before(async () => {
    redis = await startRedis();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-kafka-props-'));
  });
  after(async () => {
    await redis?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });
  const writerEnv = () => ({ WRITER_PORT: '0', REDIS_URL: redis.url, KAFKA_BROKERS: broker, EVENTS_DB: path.join(tmp, 'events.db'), PERSONS_DATABASE_URL: `sqlite:${path.join(tmp, 'persons.db')}`, LOG_LEVEL: 'warn' });
  const ingestEnv = () => ({ INGEST_PORT: '0', REDIS_URL: redis.url, KAFKA_BROKERS: broker, LOG_LEVEL: 'warn' });
  const bad = 'no.such.property=1';

  test("each variable reaches its own client (a refused property named by that client)", async () => {
    await assert.rejects(startServer(BIN('ingest'), { ...ingestEnv(), KAFKA_PRODUCER_PROPERTIES: bad }),
      /exited with 1 before listening[\s\S]*"queue kafka: property no\.such\.property/);
    await assert.rejects(startServer(BIN('writer'), { ...writerEnv(), KAFKA_CONSUMER_PROPERTIES: bad }),
      /exited with 1 before listening[\s\S]*"queue consumer kafka: property no\.such\.property/);
    // the dead-letter producer: its own variable, not the consumer's
    await assert.rejects(startServer(BIN('writer'), { ...writerEnv(), KAFKA_PRODUCER_PROPERTIES: bad }),
      /exited with 1 before listening[\s\S]*"queue kafka: property no\.such\.property/);
  });

  test('the documented SASL_SSL example configures ingest and the writer', async () => {
    const example = documentedExample();
    for (const [bin, env] of [['ingest', ingestEnv()], ['writer', writerEnv()]]) {
      const srv = await startServer(BIN(bin), { ...env, ...example });
      try {
        const r = await fetch(`http://127.0.0.1:${srv.port}/_health`);
        assert.equal(r.status, 200, `${bin}: ${srv.stderr()}`);
        assert.doesNotMatch(srv.stderr(), /property|Unsupported value|consumer property|producer property/i, bin);
      } finally {
        await srv.stop();
      }
    }
  });
});
