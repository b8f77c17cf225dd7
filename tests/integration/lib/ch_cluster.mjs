// ch_cluster.mjs - a ClickHouse cluster on loopback for the cluster tests:
// one ZooKeeper (Debian's zookeeper 3.8, its java server as a plain
// process) and shards x replicas of clickhouse-server 18.16 (lib/clickhouse.mjs
// starts each), every process on its own 127.0.0.1 ports, stopped by PID.
//
// Each node gets macros {shard} and {replica}, the ZooKeeper section, its own
// interserver port (replicas fetch parts from each other over it), and the
// cluster in config.d/cluster.xml. remote_servers is written once all nodes
// are up (only then are their ports known) and the servers reload it; the
// start waits until every node sees the whole cluster.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startClickHouse, pickPorts } from './clickhouse.mjs';

const zks = new Map(); // pid -> dir
process.on('exit', () => {
  for (const [pid, dir] of zks) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    try { fs.rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
  }
});

const ZK_JAR = '/usr/share/java/zookeeper.jar';

function ruok(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write('ruok'));
    let got = '';
    s.on('data', (d) => { got += d; });
    s.on('error', () => resolve(false));
    s.on('close', () => resolve(got === 'imok'));
    s.setTimeout(1000, () => s.destroy());
  });
}

// startZooKeeper() -> {port, pid, dir, stop}
export async function startZooKeeper({ timeoutMs = 30000 } = {}) {
  if (!fs.existsSync(ZK_JAR)) throw new Error('zookeeper not installed: run scripts/setup');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cm-zk-${process.pid}-`));
  fs.mkdirSync(path.join(dir, 'data'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const [port] = await pickPorts();
    fs.writeFileSync(path.join(dir, 'zoo.cfg'), [
      'tickTime=500', `dataDir=${path.join(dir, 'data')}`, `clientPort=${port}`, 'clientPortAddress=127.0.0.1',
      'admin.enableServer=false', 'maxClientCnxns=200', '4lw.commands.whitelist=ruok', '',
    ].join('\n'));
    const child = spawn('java', ['-Xmx128m', '-XX:+UseSerialGC', '-cp', ZK_JAR,
      'org.apache.zookeeper.server.ZooKeeperServerMain', path.join(dir, 'zoo.cfg')],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out = (out + d).slice(-8192); });
    child.stderr.on('data', (d) => { out = (out + d).slice(-8192); });
    zks.set(child.pid, dir);
    let gone = false;
    const exited = new Promise((r) => child.on('exit', () => { gone = true; zks.delete(child.pid); r(); }));
    const deadline = Date.now() + timeoutMs;
    while (!gone && Date.now() < deadline) {
      if (await ruok(port)) {
        return {
          port, pid: child.pid, dir,
          async stop() {
            try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ }
            await exited;
            fs.rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!gone) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`zookeeper did not answer in ${timeoutMs} ms: ${out}`);
    }
    if (!/Address already in use|BindException/.test(out)) throw new Error(`zookeeper exited: ${out}`);
  }
  throw new Error('could not start zookeeper: no free port');
}

const nodeXml = (zkPort, interPort, shard, replica) => `  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>${interPort}</interserver_http_port>
  <macros><shard>${shard}</shard><replica>${replica}</replica></macros>
  <zookeeper><node><host>127.0.0.1</host><port>${zkPort}</port></node><session_timeout_ms>10000</session_timeout_ms></zookeeper>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
`;

function clusterXml(name, shards) {
  const s = shards.map((nodes) => `      <shard><internal_replication>true</internal_replication>
${nodes.map((n) => `        <replica><host>127.0.0.1</host><port>${n.tcpPort}</port></replica>`).join('\n')}
      </shard>`).join('\n');
  return `<?xml version="1.0"?>\n<yandex>\n  <remote_servers>\n    <${name}>\n${s}\n    </${name}>\n  </remote_servers>\n</yandex>\n`;
}

// startCluster({name, shards, replicas}) -> {name, zk, nodes, stop}; nodes
// are lib/clickhouse.mjs handles with .shard and .replica added.
export async function startCluster({ name = 'cm_cluster', shards = 2, replicas = 2 } = {}) {
  const zk = await startZooKeeper();
  const specs = [];
  for (let s = 1; s <= shards; s++) for (let r = 1; r <= replicas; r++) specs.push({ shard: `0${s}`, replica: `r${s}_${r}` });
  const started = await Promise.allSettled(specs.map((sp) => startClickHouse({
    extraConfig: async () => nodeXml(zk.port, (await pickPorts())[0], sp.shard, sp.replica),
  }).then((ch) => Object.assign(ch, sp))));
  const nodes = started.filter((x) => x.status === 'fulfilled').map((x) => x.value);
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await zk.stop();
  };
  const failed = started.find((x) => x.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const byShard = [];
  for (let s = 0; s < shards; s++) byShard.push(nodes.slice(s * replicas, (s + 1) * replicas));
  const xml = clusterXml(name, byShard);
  for (const n of nodes) {
    fs.mkdirSync(path.join(n.dir, 'config.d'), { recursive: true });
    fs.writeFileSync(path.join(n.dir, 'config.d', 'cluster.xml'), xml);
  }
  // the servers re-read their configuration every few seconds
  const deadline = Date.now() + 60000;
  for (const n of nodes) {
    for (;;) {
      const [{ c }] = await n.rows(`SELECT count() AS c FROM system.clusters WHERE cluster = '${name}'`);
      if (Number(c) === nodes.length) break;
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`cluster ${name} not seen by every node in 60 s`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { name, zk, nodes, stop };
}
