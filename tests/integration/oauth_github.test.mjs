// oauth_github.test.mjs - GitHub's secret-scanning partner call
// (POST /api/alerts/github): GitHub's published test vector verifies (and
// fails once a byte changes); with a key of the test's own, leaked secrets
// of each kind are revoked or rolled and answered true_positive, others
// false_positive, with sha256 token hashes.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startOAuthApi } from './lib/oauth.mjs';

const sha256 = (s) => createHash('sha256').update(s).digest('hex');

// From GitHub's secret-scanning partner program documentation.
const VECTOR = {
  id: 'f9525bf080f75b3506ca1ead061add62b8633a346606dc5fe544e29231c6ee0d',
  key: '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEsz9ugWDj5jK5ELBK42ynytbo38gP\nHzZFI03Exwz8Lh/tCfL3YxwMdLjB+bMznsanlhK0RwcGP3IDb34kQDIo3Q==\n-----END PUBLIC KEY-----\n',
  body: '[{"token":"some_token","type":"some_type","url":"some_url","source":"some_source"}]',
  signature: 'MEUCIFLZzeK++IhS+y276SRk2Pe5LfDrfvTXu6iwKKcFGCrvAiEAhHN2kDOhy2I6eGkOFmxNkOJ+L2y8oQ9A2T9GGJo6WJY=',
};

describe('GitHub secret scanning', () => {
  let s, own;
  const alert = (body, { id = 'test-key', signature } = {}) => fetch(`${s.base}/api/alerts/github`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json', 'Github-Public-Key-Identifier': id,
      'Github-Public-Key-Signature': signature ?? sign('sha256', Buffer.from(body), own.privateKey).toString('base64'),
    },
    body,
  });
  const withBearer = (token) => fetch(`${s.base}/api/projects/`, { headers: { Authorization: `Bearer ${token}` } });

  before(async () => {
    own = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const dir = fs.mkdtempSync('/tmp/cm-github-');
    const file = path.join(dir, 'keys.json');
    fs.writeFileSync(file, JSON.stringify({ public_keys: [
      { key_identifier: VECTOR.id, key: VECTOR.key, is_current: true },
      { key_identifier: 'test-key', key: own.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true },
    ] }));
    s = await startOAuthApi({ env: { GITHUB_KEYS_FILE: file } });
  });

  after(async () => {
    await s?.stop();
  });

  test("GitHub's test vector verifies; one byte more does not", async () => {
    let r = await alert(VECTOR.body, { id: VECTOR.id, signature: VECTOR.signature });
    assert.equal(r.status, 400); // signed right, but "some_type" is not one of ours
    assert.match((await r.json()).detail, /Unknown token type/);
    r = await alert(`${VECTOR.body}\n`, { id: VECTOR.id, signature: VECTOR.signature });
    assert.equal(r.status, 401);
    assert.equal((await r.json()).detail, 'Invalid signature');
    r = await alert(VECTOR.body, { id: 'no-such-key', signature: VECTOR.signature });
    assert.equal(r.status, 401);
    r = await fetch(`${s.base}/api/alerts/github`, { method: 'POST', body: VECTOR.body });
    assert.equal(r.status, 400);
  });

  test('leaked secrets are revoked or rolled; the answer labels each', async () => {
    // a personal key of the user, an OAuth family in the store, the project's secret
    const key = { Authorization: `Bearer ${s.boot.personal_api_key}`, 'Content-Type': 'application/json' };
    const made = await (await fetch(`${s.base}/api/personal_api_keys/`, { method: 'POST', headers: key, body: JSON.stringify({ label: 'leaky', scopes: ['project:read'] }) })).json();
    assert.equal((await withBearer(made.value)).status, 200);
    const access = 'pha_LeakedAccessTokenLeakedAccessTokenLeakedAcce';
    const refresh = 'phr_LeakedRefreshTokenLeakedRefreshTokenLeakedR';
    const now = Date.now();
    const db = s.dbUrl.slice('sqlite:'.length);
    for (const [id, tok, kind] of [['t1', access, 'access'], ['t2', refresh, 'refresh']]) {
      execFileSync('sqlite3', [db, `INSERT INTO oauth_tokens (id, token_hash, kind, family, client_id, user_id, scopes, resource, expires_at, created_at)
        VALUES ('${id}', '${sha256(tok)}', '${kind}', 'fam-1', 'https://app.example.com/c.json', 1, '["project:read"]', '${s.base}', ${now + 3600000}, ${now})`]);
    }
    assert.equal((await withBearer(access)).status, 200);
    const items = [
      { token: refresh, type: 'posthog_oauth_refresh_token' },
      { token: ` ${made.value} `, type: 'posthog_feature_flags_secure_api_key' },
      { token: s.boot.project_secret_api_token, type: 'posthog_personal_api_key' },
      { token: 'phx_NotOneOfOursNotOneOfOursNotOneOfOursNotOn', type: 'posthog_feature_flags_secure_api_key' },
    ].map((i) => ({ ...i, url: 'https://gist.github.com/x', source: 'gist_content' }));
    const r = await alert(JSON.stringify(items));
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), [
      { token_hash: sha256(refresh), token_type: 'posthog_oauth_refresh_token', label: 'true_positive' },
      { token_hash: sha256(made.value), token_type: 'posthog_feature_flags_secure_api_key', label: 'true_positive' },
      { token_hash: sha256(s.boot.project_secret_api_token), token_type: 'posthog_personal_api_key', label: 'true_positive' },
      { token_hash: sha256(items[3].token), token_type: 'posthog_feature_flags_secure_api_key', label: 'false_positive' },
    ]);
    // the refresh token's whole family (its access token too), the key: gone
    assert.equal((await withBearer(access)).status, 401);
    assert.equal((await withBearer(made.value)).status, 401);
    const secret = execFileSync('sqlite3', [db, `SELECT count(*) FROM projects WHERE secret_token_hash = '${sha256(s.boot.project_secret_api_token)}'`]).toString().trim();
    assert.equal(secret, '0');
    // the same alert again: nothing of ours is left to find
    const again = await (await alert(JSON.stringify(items.slice(1, 3)))).json();
    assert.deepEqual(again.map((x) => x.label), ['false_positive', 'false_positive']);
    // the other users' and the bootstrap key still work
    assert.equal((await withBearer(s.boot.personal_api_key)).status, 200);
  });
});
