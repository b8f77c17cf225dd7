// edge.test.mjs - the nginx edge helper leaves nothing behind: after stop(),
// neither its master nor any of its workers is running (a master killed
// with SIGKILL left its workers running and listening, nine per `make test`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startEdge, workerPids } from './lib/edge.mjs';

// Alive and still an nginx (a PID could be reused by something else).
function nginxAlive(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nginx') &&
      !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

test('stopping the edge stops its master and every worker', async () => {
  const edge = await startEdge({});
  const workers = workerPids(edge.pid);
  assert.ok(workers.length >= 1, 'nginx started at least one worker');
  for (const pid of [edge.pid, ...workers]) assert.ok(nginxAlive(pid), `nginx ${pid} runs`);
  await edge.stop();
  // The master waits for its workers before it exits: nothing to wait for.
  const left = [edge.pid, ...workers].filter(nginxAlive);
  assert.deepEqual(left, [], `nginx processes left running: ${left.join(' ')}`);
  const again = await fetch(edge.url).then(() => 'answered', () => 'refused');
  assert.equal(again, 'refused', 'nothing listens on the edge port any more');
});
