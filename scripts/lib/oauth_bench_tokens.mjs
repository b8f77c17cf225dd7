// oauth_bench_tokens.mjs DB USER_ID RESOURCE N OUT_DIR - for scripts/bench
// oauth: one live access token and N refresh tokens of a bench client,
// written into the api's SQLite metadata store as the token endpoint would
// (SHA-256 only); prints the access token and writes the refresh tokens,
// one per line, to OUT_DIR/refresh.txt for wrk's script to use in turn.
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [db, user, resource, n, out] = process.argv.slice(2);
const sha = (s) => createHash('sha256').update(s).digest('hex');
const token = (prefix) => prefix + randomBytes(33).toString('base64url').replace(/[-_]/g, 'x').slice(0, 44);
const client = 'https://bench.example.com/client.json';
const now = Date.now();
const rows = [];
const access = token('pha_');
const scopes = '["endpoint:read"]';
rows.push(`('a0', '${sha(access)}', 'access', 'f0', '${client}', ${user}, '${scopes}', '${resource}', ${now + 86400000}, ${now})`);
const refresh = [];
for (let i = 0; i < Number(n); i++) {
  const t = token('phr_');
  refresh.push(t);
  rows.push(`('r${i}', '${sha(t)}', 'refresh', 'f${i + 1}', '${client}', ${user}, '${scopes}', '${resource}', ${now + 86400000}, ${now})`);
}
const sql = path.join(out, 'tokens.sql');
fs.writeFileSync(sql, `BEGIN;\n${rows.map((r) => `INSERT INTO oauth_tokens (id, token_hash, kind, family, client_id, user_id, scopes, resource, expires_at, created_at) VALUES ${r};`).join('\n')}\nCOMMIT;\n`);
execFileSync('sqlite3', [db, `.read ${sql}`]);
fs.writeFileSync(path.join(out, 'refresh.txt'), `${refresh.join('\n')}\n`);
console.log(access);
