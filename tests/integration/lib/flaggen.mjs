// flaggen.mjs - a deterministic generator of random feature-flag definitions,
// persons and groups for the flags differential test.
//
// generateScenario({ seed, flags, persons, ... }) returns:
//   envelope     the local-evaluation envelope {flags, group_type_mapping,
//                cohorts[, property_matching_version]} exactly as
//                GET /flags/definitions serves it (shapes per the research
//                PostHog's flag shape (docs/flags.md): conditions in `filters.groups`, payloads
//                as JSON-encoded strings, type "flag" filters keyed by the
//                flag key with a `dependency_chain`, cohorts as property groups)
//   persons      [{ distinctId, stored, request, groups, groupRequest,
//                staticCohorts }]: `stored` goes to Redis
//                (persons:<project>:<distinct id>), `request` is sent as
//                person_properties, `groups` maps group type -> key and
//                `groupRequest` holds the group_properties sent in the request
//   groupRecords [{ type, key, properties }] stored in Redis
//                (groups:<project>:<type>:<key>)
//
// All randomness comes from one seeded PRNG (sfc32), so a seed always gives
// the same scenario. Nothing here depends on the clock: person dates are
// absolute; relative date filters ("-30d") are resolved by the evaluators.
//
// Deliberately NOT generated (the two evaluators are known to differ by
// design, docs/flags.md): early access (feature_enrollment, super_groups),
// explicit evaluation_runtime client/server, deleted flags, duplicate keys,
// v2 ("version": 2) filters, and `$feature_enrollment/...` properties.
// Generated but expected to be left undecided by posthog-node (the test
// skips those): static cohorts, experience continuity, cyclic or missing
// dependencies, unknown operators and group types, non-portable regexes,
// integral numbers in exact matches, missing properties.
import { redisCommand } from './redis.mjs';

// ---- PRNG ------------------------------------------------------------------

export function makeRng(seed) {
  // splitmix32 expands the seed into sfc32's state.
  let s = seed >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split(), b = split(), c = split(), d = split();
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next();
  const rng = {
    u32: next,
    float: () => next() / 4294967296,
    int: (lo, hi) => lo + Math.floor((next() / 4294967296) * (hi - lo + 1)), // inclusive
    chance: (p) => next() / 4294967296 < p,
    pick: (arr) => arr[Math.floor((next() / 4294967296) * arr.length)],
    // weighted pick: [[weight, value], ...]
    wpick: (pairs) => {
      let total = 0;
      for (const [w] of pairs) total += w;
      let x = (next() / 4294967296) * total;
      for (const [w, v] of pairs) {
        if (x < w) return v;
        x -= w;
      }
      return pairs[pairs.length - 1][1];
    },
    shuffle: (arr) => {
      const a2 = arr.slice();
      for (let i = a2.length - 1; i > 0; i--) {
        const j = Math.floor((next() / 4294967296) * (i + 1));
        [a2[i], a2[j]] = [a2[j], a2[i]];
      }
      return a2;
    },
    subset: (arr, p) => arr.filter(() => next() / 4294967296 < p),
  };
  return rng;
}

// ---- value domains ------------------------------------------------------------

const FIRST = ['ann', 'Bob', 'carla', 'DIEGO', 'eve', 'fatima', 'gus', 'hana', 'Ivan', 'jo', 'Zoë', 'Jürgen', 'İlker', 'straße', 'ÅSA', '李雷', 'o\'neil', 'x_y'];
const DOMAINS = ['example.com', 'posthog.com', 'Gmail.COM', 'corp.example.org', 'mail.ru'];
const COUNTRIES = ['US', 'us', 'Us', 'CA', 'ca', 'UK', 'uk', 'DE', 'FR', 'BR', 'JP', 'IN', 'de'];
const PLANS = ['free', 'pro', 'Pro', 'PRO', 'enterprise', 'team', 'startup', ''];
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', 'chrome', 'Mobile Safari'];
const INDUSTRIES = ['fintech', 'health', 'Retail', 'SaaS', 'saas', 'gaming', 'media'];
const PATHS = ['/', '/login', '/pricing', '/app/dashboard', '/app/settings?tab=2', '/docs/Feature-Flags', '/blog/2024/01/x'];
const HOSTS = ['https://app.example.com', 'http://Example.org', 'https://posthog.com', 'https://shop.example.co.uk:8443'];
const VERSIONS = ['1.2.3', '1.2.4', '1.3.0', '1.10.2', '2.0.0', '2.1.0', 'v1.2.3', 'V2.0.1', '1.2', '1', '0.3.5', '0.0.5',
  '0.0.7', '0.4.0', '10.0.1', '1.2.3-beta.1', '2.0.0-rc.1', '1.2.3+build.5', ' 1.4.0 ', '01.2.3', '1.02.0', 'abc', '1.2.3.4',
  '3.0.0', '1.2.x', '', '1..2', '1.2.3 ', 'v 1.2', '1.2.3-', '2.0.0-alpha+exp.sha.5', '1.2.3.', '99999999999.0.0', '1.-2.3'];
const TAGS = ['alpha', 'beta', 'Beta', 'gamma', 'vip', 'staff'];

function dateValue(rng) {
  // An instant between 1995 and 2035, written in one of many formats.
  const ms = Date.UTC(1995, 0, 1) + Math.floor(rng.float() * (Date.UTC(2035, 0, 1) - Date.UTC(1995, 0, 1)));
  const d = new Date(ms);
  const iso = d.toISOString();
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const ymd = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const hms = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const MON = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const DAY = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  return rng.wpick([
    [20, iso],                                    // 2023-05-17T08:30:00.123Z
    [10, iso.replace(/\.\d{3}Z$/, 'Z')],          // 2023-05-17T08:30:00Z
    [12, ymd],                                    // date only (UTC midnight)
    [6, `${ymd}T${hms}`],                         // naive (local = UTC here)
    [5, `${ymd}T${hms}+05:30`],
    [4, `${ymd}T${hms}.5-08:00`],
    [4, `${ymd} ${hms}`],
    [4, `${MON[d.getUTCMonth()]} ${d.getUTCDate()} ${d.getUTCFullYear()}`],
    [3, `${DAY[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MON[d.getUTCMonth()]} ${d.getUTCFullYear()} ${hms} GMT`],
    [10, ms],                                     // a number: milliseconds for the SDK
    [2, ms / 1000 + 0.25],                        // a fractional number
    [2, String(Math.floor(ms / 1000))],           // a numeric string
    [2, 'not a date'],
    [1, true],
    // V8's legacy date forms
    [1, `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}`],
    [1, `${d.getUTCDate()} ${MON[d.getUTCMonth()]} ${d.getUTCFullYear()} ${hms}`],
    [1, `${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${d.getUTCFullYear()}`],
    [1, `${DAY[d.getUTCDay()]} ${MON[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${d.getUTCFullYear()} ${hms} GMT+0100 (CET)`],
    [1, `${ymd}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`],
    [1, `${d.getUTCFullYear()}`],
    [1, `${ymd}T25:00:00Z`],
    [1, `+00${ymd}T${hms}Z`],
    [1, `${ymd}T${hms}Z`.toLowerCase()],
  ]);
}

function email(rng) {
  return `${rng.pick(FIRST)}${rng.int(1, 99)}@${rng.pick(DOMAINS)}`;
}

// Person properties: key -> value generator. Each person gets a random subset.
const PERSON_PROPS = {
  email: (r) => email(r),
  name: (r) => {
    const n = r.pick(FIRST);
    return r.wpick([[4, n], [1, n.toUpperCase()], [1, n.toLowerCase()]]);
  },
  country: (r) => r.pick(COUNTRIES),
  plan: (r) => r.pick(PLANS),
  age: (r) => r.wpick([[6, r.int(12, 90)], [2, String(r.int(12, 90))], [1, r.int(120, 180) / 4],
    [1, `${r.int(12, 90)}.5`], [1, 'abc'], [1, ' 42'], [1, null], [1, '1e2'],
    // parseFloat reads a numeric prefix; the rest are not numbers at all
    [1, r.pick(['42abc', '  7 ', 'Infinity', '-Infinity', '0x1A', '.5', '5.', '1e', '+3', '1_000', 'NaN', '-0'])]]),
  score: (r) => r.wpick([[5, r.int(-500, 5000) / 8], [2, String(r.int(0, 1000) / 4)], [1, r.int(0, 100)], [1, 'high'], [1, '-3.5e1']]),
  is_beta: (r) => r.pick([true, false, 'true', 'false', 'True', 'FALSE', 'yes', 1, 0, null]),
  signup_date: dateValue,
  last_seen: dateValue,
  app_version: (r) => r.pick(VERSIONS),
  url: (r) => `${r.pick(HOSTS)}${r.pick(PATHS)}`,
  $browser: (r) => r.pick(BROWSERS),
  tags: (r) => r.wpick([[4, r.subset(TAGS, 0.3)], [1, []], [1, ['true', 'TRUE']], [1, [1, 2.5]]]),
  meta: (r) => r.wpick([[2, { tier: r.pick(PLANS), n: r.int(1, 5) + 0.5 }], [1, { b: true, a: 'x' }], [1, {}]]),
  nullable: (r) => r.wpick([[3, null], [1, 'null'], [1, 'NULL value']]),
  count: (r) => r.int(0, 20),
  ratio: (r) => r.int(1, 999) / 1000,
  $device_id: (r) => r.wpick([[6, `dev-${r.u32().toString(16)}`], [1, ''], [1, null]]),
  // numbers whose JavaScript spelling is unusual
  big: (r) => r.pick([1e21, 1.5e-7, 123456789012345680000, 0.1 + 0.2, -0.5, 2 ** 53 + 2, 5e-324, 1e300, -1e-10]),
  multiline: (r) => r.pick(['line1\nline2', 'a\r\nb', 'tab\there', 'ümlaut', 'plain']),
};
const PERSON_KEYS = Object.keys(PERSON_PROPS);

// Group types and their properties.
const GROUP_TYPES = ['company', 'project', 'team'];
const GROUP_PROPS = {
  name: (r) => `${r.pick(['Acme', 'Globex', 'Initech', 'umbrella', 'Hooli', 'Stark'])} ${r.pick(['Inc', 'Ltd', 'GmbH', ''])}`.trim(),
  industry: (r) => r.pick(INDUSTRIES),
  employees: (r) => r.wpick([[4, r.int(1, 5000)], [1, String(r.int(1, 5000))], [1, r.int(1, 100) + 0.5]]),
  revenue: (r) => r.int(0, 10_000_000) / 100,
  plan: (r) => r.pick(PLANS),
  created_at: dateValue,
  version: (r) => r.pick(VERSIONS),
  verified: (r) => r.pick([true, false, 'true', 'false']),
  domain: (r) => r.pick(DOMAINS),
};
const GROUP_KEYS = Object.keys(GROUP_PROPS);

// ---- filters -------------------------------------------------------------------

// Every operator posthog-node knows, plus a few only the server knows (the SDK
// leaves those undecided).
const OPERATORS = [
  [12, 'exact'], [8, 'is_not'], [6, 'icontains'], [4, 'not_icontains'], [3, 'starts_with'], [2, 'not_starts_with'],
  [3, 'ends_with'], [2, 'not_ends_with'], [6, 'regex'], [4, 'not_regex'], [4, 'gt'], [3, 'gte'], [4, 'lt'], [3, 'lte'],
  [4, 'is_set'], [3, 'is_not_set'], [5, 'is_date_before'], [5, 'is_date_after'], [2, 'semver_eq'], [2, 'semver_neq'],
  [2, 'semver_gt'], [2, 'semver_gte'], [2, 'semver_lt'], [2, 'semver_lte'], [2, 'semver_tilde'], [2, 'semver_caret'],
  [2, 'semver_wildcard'], [1, 'icontains_multi'], [1, 'between'], [1, 'is_date_exact'],
];

// Keys that fit an operator best (the rest of the time any key is used).
const PERSON_KEYS_FOR = {
  exact: ['email', 'country', 'plan', 'is_beta', 'name', 'tags', 'meta', 'nullable', 'ratio', 'age', 'distinct_id', 'big'],
  is_not: ['email', 'country', 'plan', 'is_beta', 'name', 'nullable', 'ratio'],
  icontains: ['email', 'url', 'name', 'plan', '$browser', 'age', 'tags', 'big', 'meta', 'distinct_id'],
  starts_with: ['email', 'url', 'name', 'country'],
  ends_with: ['email', 'url', 'name'],
  regex: ['email', 'url', 'country', 'plan', 'app_version', 'multiline', 'name', 'age', 'big', 'distinct_id'],
  cmp: ['age', 'score', 'count', 'ratio', 'name', 'plan', 'big'],
  date: ['signup_date', 'last_seen'],
  semver: ['app_version'],
};
const GROUP_KEYS_FOR = {
  exact: ['name', 'industry', 'plan', 'verified', 'domain', '$group_key'],
  is_not: ['industry', 'plan', 'verified', '$group_key'],
  icontains: ['name', 'industry', 'domain', '$group_key'],
  starts_with: ['name', 'domain'],
  ends_with: ['name', 'domain'],
  regex: ['name', 'industry', 'domain', 'version', '$group_key'],
  cmp: ['employees', 'revenue', 'name'],
  date: ['created_at'],
  semver: ['version'],
};

function keyFamily(op) {
  if (op === 'exact' || op === 'is_not') return op;
  if (op.endsWith('icontains') || op === 'icontains_multi') return 'icontains';
  if (op.endsWith('starts_with')) return 'starts_with';
  if (op.endsWith('ends_with')) return 'ends_with';
  if (op.endsWith('regex')) return 'regex';
  if (['gt', 'gte', 'lt', 'lte', 'between'].includes(op)) return 'cmp';
  if (op.startsWith('is_date')) return 'date';
  if (op.startsWith('semver')) return 'semver';
  return null;
}

// Regexes: the portable subset the SDK evaluates, ones JavaScript rejects
// (false for both regex and not_regex), and ones the SDK hands to the server.
const REGEXES = [
  '^[a-z]+\\d+@example\\.com$', 'example\\.(com|org)', '^(US|CA)$', '(?:pro|enterprise)', '\\d{2,}', '^https?://',
  '^/app/', 'Gmail', '[0-9]+\\.[0-9]+', '^$', '', '.*', 'a|b', '^[^@]+@[^@]+$', '\\.co\\.uk', 'x{2}', '\\s', 'o\\Sn',
  '^(?:1\\.2|2\\.)', 'line1\\nline2', '^(?:Chrome|Firefox)$', '[A-Z]{2}', '\\w+', 'ann|eve|jo', '^.{3,5}$',
  // JavaScript rejects these: both regex and not_regex are false
  '[', '(unclosed', '*star', 'a{2,1}',
  // server-only syntax / non-ASCII: the SDK defers (no answer)
  '(?i)us', '\\bpro\\b', '(?=a)a', 'ü', 'straße', '\\p{L}+', '(?P<x>a)', '[[:alpha:]]',
];

function dateFilterValue(rng) {
  return rng.wpick([
    [4, `-${rng.int(1, 400)}d`], [2, `${rng.int(1, 400)}d`], [2, `-${rng.int(1, 9999)}h`], [2, `-${rng.int(1, 200)}w`],
    [3, `-${rng.int(1, 120)}m`], [3, `-${rng.int(1, 30)}y`], [1, `${rng.int(1, 30)}y`], [1, '-10000d'], [1, '-0d'],
    [3, `${rng.int(1996, 2034)}-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`],
    [2, `${rng.int(1996, 2034)}-0${rng.int(1, 9)}-1${rng.int(0, 9)}T${String(rng.int(0, 23)).padStart(2, '0')}:30:00Z`],
    [1, `${rng.int(1996, 2034)}-06-15T12:00:00+02:00`],
    [1, `${rng.int(1996, 2034)}-06-15T12:00:00`],
    [1, `Jan ${rng.int(1, 28)} ${rng.int(1996, 2034)}`],
    [1, Date.UTC(rng.int(1996, 2034), rng.int(0, 11), 1)],
    [1, 'garbage'], [1, true],
  ]);
}

const SEMVER_FILTERS = ['1.2.3', '1.2.4', 'v1.3.0', '2.0.0', '1.2', '1', '0.3.1', '0.0.5', '0.4', '10.0.0', '1.2.3-beta.2',
  ' 2.1.0', '01.2.3', 'abc'];
const WILDCARDS = ['1.*', '1.2.*', '2.*', '0.*', '1.2', '1', '*', 'v1.*', 'x.*'];

function filterValue(rng, op, key, group) {
  const gen = group ? GROUP_PROPS[key] : PERSON_PROPS[key];
  const special = {
    distinct_id: () => rng.pick(['user-3', 'USER-7', 'user-1', `user-${rng.int(0, 199)}`, 'someone-else']),
    $group_key: () => rng.pick(['company-3', 'Company-1', 'proj_2', `company-${rng.int(0, 23)}`, 'Team 1 ✓']),
  };
  const sample = () => (gen ? gen(rng) : special[key] ? special[key]() : 'x');
  switch (op) {
    case 'exact':
    case 'is_not':
      return rng.wpick([
        [6, sample()],
        [3, Array.from({ length: rng.int(1, 4) }, sample)],
        [1, rng.pick([true, false, 'true', 'false', 'False', ['true'], []])],
        [1, rng.int(1, 999) / 8],
        [1, rng.int(1, 50)], // integral: the SDK cannot tell 1 from 1.0
        [1, 'null'],
      ]);
    case 'icontains':
    case 'not_icontains':
      return rng.pick(['example', 'GMAIL', 'pro', '.com', 'app', 'an', '3', '', 'ü', 'E', 'true', 'acme', 'SaaS', 'inc']);
    case 'icontains_multi':
      return ['pro', 'acme'];
    case 'starts_with':
    case 'not_starts_with':
      return rng.pick(['ann', 'Bob', 'https://', 'http://ex', 'U', 'a', '', 'Acme', 'gmail']);
    case 'ends_with':
    case 'not_ends_with':
      return rng.pick(['.com', '.COM', 'example.org', 'Inc', 'ltd', '.ru', '', 'x']);
    case 'regex':
    case 'not_regex':
      return rng.pick(REGEXES);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return rng.wpick([[4, rng.int(0, 100)], [2, rng.int(0, 4000) / 8], [3, String(rng.int(0, 100))], [1, '42.5'],
        [1, 'm'], [1, 'Pro'], [1, '1e2'], [1, -rng.int(1, 50)]]);
    case 'between':
      return [rng.int(0, 20), rng.int(21, 100)];
    case 'is_set':
    case 'is_not_set':
      return rng.pick(['is_set', 'is_not_set', null, '']);
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return dateFilterValue(rng);
    case 'semver_wildcard':
      return rng.pick(WILDCARDS);
    default:
      if (op.startsWith('semver')) return rng.pick(SEMVER_FILTERS);
      return 'x';
  }
}

// A property filter on the person (groupIndex null) or on a group.
function propertyFilter(rng, groupIndex) {
  const op = rng.wpick(OPERATORS);
  const group = groupIndex !== null && groupIndex !== undefined;
  const fam = keyFamily(op);
  const keysFor = group ? GROUP_KEYS_FOR : PERSON_KEYS_FOR;
  const allKeys = group ? GROUP_KEYS : PERSON_KEYS;
  let key = fam && keysFor[fam] && rng.chance(0.8) ? rng.pick(keysFor[fam]) : rng.pick(allKeys);
  if (!group && rng.chance(0.03)) key = 'never_set_anywhere';
  const f = { key, value: filterValue(rng, op, key, group) };
  // operator absent means exact
  if (op !== 'exact' || rng.chance(0.7)) f.operator = op;
  f.type = group ? 'group' : 'person';
  if (group) f.group_type_index = groupIndex;
  if (rng.chance(0.1)) f.label = 'ui only';
  return f;
}

// ---- cohorts -------------------------------------------------------------------------

function cohortLeaf(rng, id, nCohorts) {
  if (id > 1 && rng.chance(0.15)) {
    // a nested cohort, always one with a lower id: no cycles
    const leaf = { key: 'id', type: 'cohort', value: rng.int(1, id - 1) };
    if (rng.chance(0.3)) leaf.negation = true;
    return leaf;
  }
  const leaf = propertyFilter(rng, null);
  if (rng.chance(0.25)) leaf.negation = true;
  else if (rng.chance(0.2)) leaf.negation = false;
  void nCohorts;
  return leaf;
}

function cohortGroup(rng, id, nCohorts, depth) {
  const type = rng.wpick([[5, 'AND'], [5, 'OR'], [1, 'property']]);
  if (depth < 2 && rng.chance(depth === 0 ? 0.8 : 0.3)) {
    return { type, values: Array.from({ length: rng.int(1, 3) }, () => cohortGroup(rng, id, nCohorts, depth + 1)) };
  }
  return { type: type === 'property' ? 'AND' : type, values: Array.from({ length: rng.int(1, 3) }, () => cohortLeaf(rng, id, nCohorts)) };
}

function makeCohorts(rng, n) {
  const cohorts = {};
  for (let id = 1; id <= n; id++) {
    const shape = rng.wpick([[14, 'normal'], [1, 'empty'], [1, 'empty-and'], [1, 'empty-or']]);
    if (shape === 'empty') cohorts[id] = {};
    else if (shape === 'empty-and') cohorts[id] = { type: 'AND', values: [] };
    else if (shape === 'empty-or') cohorts[id] = { type: 'OR', values: [] };
    else cohorts[id] = cohortGroup(rng, id, n, 0);
  }
  return cohorts;
}

// ---- flags ------------------------------------------------------------------------------

const VARIANT_NAMES = ['control', 'test', 'variant-a', 'variant-b', 'blue', 'green', 'Red', 'v_3', 'holdout-x', 'ünï'];

function payloadString(rng) {
  return JSON.stringify(rng.wpick([
    [4, { color: rng.pick(['red', 'blue']), size: rng.int(1, 9), nested: { on: rng.chance(0.5) } }],
    [2, [rng.int(1, 9), 'two', { three: 3.5 }]],
    [2, rng.pick(['plain string', 'ünïcödé ✓', 'with "quotes"', 'x'])],
    [1, rng.int(1, 1000) + 0.25],
    [1, rng.int(1, 1000)],
    [1, true],
  ]));
}

function variants(rng) {
  const n = rng.int(2, 5);
  const names = rng.shuffle(VARIANT_NAMES).slice(0, n);
  let pcts;
  const mode = rng.wpick([[6, 'sum100'], [2, 'thirds'], [2, 'short'], [1, 'zero']]);
  if (mode === 'thirds' && n === 3) pcts = [33.33, 33.33, 33.34];
  else {
    // random split of 100 (or less: the rest gets no variant => true)
    const total = mode === 'short' ? rng.int(30, 95) : 100;
    const cuts = Array.from({ length: n - 1 }, () => rng.int(0, total)).sort((a, b) => a - b);
    pcts = [];
    let prev = 0;
    for (const c of cuts) { pcts.push(c - prev); prev = c; }
    pcts.push(total - prev);
    if (mode === 'zero') pcts[0] = 0;
  }
  return names.map((key, i) => ({ key, name: `Variant ${key}`, rollout_percentage: pcts[i] ?? 0 }));
}

function rollout(rng) {
  return rng.wpick([[3, 100], [2, 0], [3, undefined], [2, null], [8, rng.int(1, 99)], [2, rng.int(1, 999) / 10], [1, 0.5], [1, 99.9]]);
}

export function generateScenario(opts = {}) {
  const {
    seed = 0x5eed1,
    flags: nFlags = 1000,
    persons: nPersons = 200,
    cohorts: nCohorts = 40,
    projectId = 1,
    propertyMatchingVersion, // 2 => explicit exact matching; undefined => legacy
    keyPrefix = 'flag',
  } = opts;
  const rng = makeRng(seed);

  const groupTypeMapping = { 0: 'company', 1: 'project', 2: 'team' };
  const cohorts = makeCohorts(rng, nCohorts);
  // Ids of static cohorts: referenced by flags, never in the envelope.
  const staticCohortIds = [nCohorts + 101, nCohorts + 102];

  const flags = [];
  const keyOf = (i) => `${keyPrefix}-${String(i).padStart(4, '0')}`;
  const depsOf = new Map(); // key -> Set of keys it depends on directly

  function dependencyChain(target) {
    // Topological order of target's transitive dependencies, ending with target.
    const order = [];
    const seen = new Set();
    const visit = (k) => {
      if (seen.has(k)) return;
      seen.add(k);
      for (const d of depsOf.get(k) || []) visit(d);
      order.push(k);
    };
    visit(target);
    return order;
  }

  for (let i = 0; i < nFlags; i++) {
    const key = keyOf(i);
    depsOf.set(key, new Set());
    const kind = rng.wpick([[10, 'person'], [3, 'group'], [2, 'mixed']]);
    const flagAgg = kind === 'group' ? rng.wpick([[6, 0], [3, 1], [2, 2], [1, 7]]) : undefined; // 7: no such type
    const multivariate = rng.chance(0.4) ? { variants: variants(rng) } : null;
    const variantKeys = multivariate ? multivariate.variants.map((v) => v.key) : [];

    const nConditions = rng.wpick([[1, 0], [8, 1], [5, 2], [3, 3], [1, 5]]);
    const conditions = [];
    for (let c = 0; c < nConditions; c++) {
      const cond = {};
      // aggregation of this condition
      let agg = flagAgg === undefined ? null : flagAgg;
      if (kind === 'mixed' && rng.chance(0.6)) {
        agg = rng.wpick([[5, 0], [3, 1], [1, 2]]);
        cond.aggregation_group_type_index = agg;
      } else if (kind === 'mixed' && rng.chance(0.3)) {
        cond.aggregation_group_type_index = null;
      } else if (kind === 'group' && rng.chance(0.08)) {
        // rare: another group type, or explicit person (null), under a group flag
        agg = rng.chance(0.5) ? null : (flagAgg + 1) % 3;
        cond.aggregation_group_type_index = agg;
        if (agg === null) agg = flagAgg; // the SDK keeps the flag's group bag
      }
      const props = [];
      const nProps = rng.wpick([[3, 0], [6, 1], [4, 2], [2, 3]]);
      for (let p = 0; p < nProps; p++) {
        const r = rng.float();
        if (r < 0.1 && (agg === null || rng.chance(0.15))) {
          // cohort filter (static ones are not in the envelope)
          const cf = { key: 'id', type: 'cohort', value: rng.chance(0.05) ? rng.pick(staticCohortIds) : rng.int(1, nCohorts) };
          const op = rng.wpick([[5, 'in'], [3, 'not_in'], [1, undefined]]);
          if (op) cf.operator = op;
          if (rng.chance(0.3)) cf.cohort_name = `Cohort ${cf.value}`;
          props.push(cf);
        } else if (r < 0.18 && i > 0) {
          // flag dependency on an earlier flag (no cycles here)
          const target = keyOf(rng.int(Math.max(0, i - 200), i - 1));
          const tf = flags.find((f) => f.key === target);
          const tVariants = tf.filters.multivariate ? tf.filters.multivariate.variants.map((v) => v.key) : [];
          const value = tVariants.length && rng.chance(0.4) ? rng.pick(tVariants) : rng.wpick([[5, true], [3, false], [1, 'no-such-variant']]);
          depsOf.get(key).add(target);
          props.push({ key: target, type: 'flag', value, operator: 'flag_evaluates_to' });
        } else {
          // a property filter on the condition's aggregation (rarely the other kind)
          let gi = agg;
          if (rng.chance(0.03)) gi = gi === null ? rng.int(0, 2) : null;
          props.push(propertyFilter(rng, gi));
        }
      }
      if (props.length || rng.chance(0.5)) cond.properties = props;
      const ro = rollout(rng);
      if (ro !== undefined) cond.rollout_percentage = ro;
      if (multivariate && rng.chance(0.3)) cond.variant = rng.chance(0.85) ? rng.pick(variantKeys) : 'not-a-variant';
      else if (rng.chance(0.05)) cond.variant = null;
      conditions.push(cond);
    }

    const filters = { groups: conditions };
    if (flagAgg !== undefined) filters.aggregation_group_type_index = flagAgg;
    else if (rng.chance(0.3)) filters.aggregation_group_type_index = null;
    if (multivariate) filters.multivariate = multivariate;
    else if (rng.chance(0.2)) filters.multivariate = null;

    // payloads
    const payloads = {};
    for (const v of variantKeys) if (rng.chance(0.7)) payloads[v] = payloadString(rng);
    if (rng.chance(multivariate ? 0.3 : 0.6)) payloads.true = payloadString(rng);
    if (rng.chance(0.03)) payloads.true = { stored: 'as an object' }; // not a string: served encoded
    // holdout
    if (rng.chance(0.12)) {
      const id = rng.int(1, 30);
      filters.holdout = { id, exclusion_percentage: rng.wpick([[2, 0], [1, 100], [5, rng.int(1, 60)], [1, 12.5]]) };
      if (rng.chance(0.6)) payloads[`holdout-${id}`] = payloadString(rng);
    } else if (rng.chance(0.05)) {
      filters.holdout = null;
    }
    if (Object.keys(payloads).length || rng.chance(0.5)) filters.payloads = payloads;
    if (rng.chance(0.15)) filters.early_exit = true;
    else if (rng.chance(0.05)) filters.early_exit = false;
    if (rng.chance(0.02)) { delete filters.groups; } // no conditions at all

    const flag = {
      id: 1000 + i,
      team_id: projectId,
      name: `Flag ${i}`,
      key,
      filters,
      deleted: false,
      active: rng.chance(0.92),
      ensure_experience_continuity: rng.chance(0.03),
      has_encrypted_payloads: false,
      version: rng.int(1, 12),
      evaluation_runtime: rng.wpick([[3, 'all'], [2, null]]),
      evaluation_contexts: rng.wpick([[4, null], [2, []], [1, ['web']], [1, ['docs', 'app']]]),
      bucketing_identifier: rng.wpick([[6, null], [3, 'distinct_id'], [1, ''], [2, 'device_id']]),
    };
    if (rng.chance(0.3)) flag.has_experiment = rng.chance(0.5);
    flags.push(flag);
  }

  // A few dependency shapes the definitions builder writes with an empty
  // chain: a missing target, and a cycle. The SDK has no answer for these.
  if (nFlags >= 4) {
    const a = flags[nFlags - 1];
    const b = flags[nFlags - 2];
    const c = flags[nFlags - 3];
    a.filters.groups = [{ properties: [{ key: b.key, type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }];
    b.filters.groups = [{ properties: [{ key: a.key, type: 'flag', value: false, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }];
    depsOf.set(a.key, new Set([b.key]));
    depsOf.set(b.key, new Set([a.key]));
    c.filters.groups = [{ properties: [{ key: 'flag-that-does-not-exist', type: 'flag', value: true, operator: 'flag_evaluates_to' }] }];
    a.active = b.active = c.active = true;
    a.filters.cyclic = true; // marks for readers; unknown filter keys are ignored
  }

  // dependency_chain as the definitions builder writes it.
  const keys = new Set(flags.map((f) => f.key));
  const cyclic = (k) => {
    const stack = new Set();
    const done = new Set();
    const dfs = (x) => {
      if (stack.has(x)) return true;
      if (done.has(x)) return false;
      stack.add(x);
      for (const d of depsOf.get(x) || []) if (dfs(d)) return true;
      stack.delete(x);
      done.add(x);
      return false;
    };
    return dfs(k);
  };
  for (const f of flags) {
    for (const cond of f.filters.groups || []) {
      for (const p of cond.properties || []) {
        if (p.type !== 'flag') continue;
        p.dependency_chain = !keys.has(p.key) || cyclic(p.key) ? [] : dependencyChain(p.key);
      }
    }
  }
  for (const f of flags) delete f.filters.cyclic;

  // Flags that reference a static cohort by id (never in the envelope) are
  // fine; cohorts may only reference cohorts present.
  flags.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));

  const envelope = { flags, group_type_mapping: groupTypeMapping, cohorts };
  if (propertyMatchingVersion !== undefined) envelope.property_matching_version = propertyMatchingVersion;

  // ---- groups --------------------------------------------------------------------------
  const groupKeys = {
    company: Array.from({ length: 24 }, (_, k) => `company-${k}`),
    project: Array.from({ length: 16 }, (_, k) => `proj_${k}`),
    team: Array.from({ length: 10 }, (_, k) => `Team ${k} ✓`),
  };
  const groupRecords = [];
  const groupStored = {}; // "type\0key" -> props
  for (const type of GROUP_TYPES) {
    for (const gk of groupKeys[type]) {
      if (!rng.chance(0.7)) continue; // the rest exists only in requests (or nowhere)
      const props = {};
      for (const k of GROUP_KEYS) if (rng.chance(0.75)) props[k] = GROUP_PROPS[k](rng);
      groupRecords.push({ type, key: gk, properties: props });
      groupStored[`${type}\0${gk}`] = props;
    }
  }

  // ---- persons -----------------------------------------------------------------------------
  const persons = [];
  for (let p = 0; p < nPersons; p++) {
    const distinctId = rng.wpick([
      [8, `user-${p}`], [2, `${rng.pick(FIRST)}.${p}@${rng.pick(DOMAINS)}`], [1, `ü-${p}-ñ`], [1, `${p}`],
      [1, `018f${p.toString(16).padStart(4, '0')}-7a2b-7c3d-8e4f-${(p * 7919).toString(16).padStart(12, '0')}`],
    ]);
    const props = {};
    for (const k of PERSON_KEYS) if (rng.chance(k === '$device_id' ? 0.5 : 0.72)) props[k] = PERSON_PROPS[k](rng);
    // a distinct_id property of its own (the evaluators add one only when absent)
    if (rng.chance(0.04)) props.distinct_id = rng.chance(0.5) ? 'someone-else' : distinctId.toUpperCase();
    const mode = rng.wpick([[7, 'stored'], [7, 'request'], [6, 'both'], [1, 'none']]);
    let stored = null;
    let request = null;
    if (mode === 'stored') stored = props;
    else if (mode === 'request') request = props;
    else if (mode === 'both') {
      stored = {};
      request = {};
      for (const [k, v] of Object.entries(props)) {
        const where = rng.wpick([[4, 'stored'], [4, 'request'], [2, 'both']]);
        if (where === 'stored') stored[k] = v;
        else if (where === 'request') request[k] = v;
        else {
          // the request overrides a different stored value
          stored[k] = k in PERSON_PROPS ? PERSON_PROPS[k](rng) : 'stale';
          request[k] = v;
        }
      }
    } else if (rng.chance(0.5)) {
      stored = {}; // a stored person without properties
    }

    const groups = {};
    const groupRequest = {};
    for (const type of GROUP_TYPES) {
      if (!rng.chance(0.6)) continue;
      const gk = rng.pick(groupKeys[type]);
      groups[type] = gk;
      const storedG = groupStored[`${type}\0${gk}`];
      const r = rng.float();
      if (r < 0.4) {
        // request carries some properties, overriding or adding to stored ones
        const over = {};
        for (const k of GROUP_KEYS) if (rng.chance(storedG ? 0.25 : 0.7)) over[k] = GROUP_PROPS[k](rng);
        if (rng.chance(0.05)) over.$group_key = `override-${gk}`;
        groupRequest[type] = over;
      } else if (r < 0.5) {
        groupRequest[type] = {};
      }
    }
    const staticCohorts = rng.chance(0.3) ? rng.subset(staticCohortIds, 0.5) : undefined;
    persons.push({ distinctId, stored, request, groups, groupRequest, staticCohorts });
  }
  // distinct ids must be unique (they name the Redis records)
  const seen = new Set();
  for (const person of persons) {
    while (seen.has(person.distinctId)) person.distinctId += '~';
    seen.add(person.distinctId);
  }

  return { projectId, envelope, persons, groupRecords, groupStored };
}

// What an evaluator sees for one person once stored and request data are
// merged (request wins, key by key): the SDK gets exactly this.
export function mergedView(scenario, person) {
  const personProperties = { ...(person.stored || {}), ...(person.request || {}) };
  const groupProperties = {};
  for (const [type, gk] of Object.entries(person.groups)) {
    groupProperties[type] = { ...(scenario.groupStored[`${type}\0${gk}`] || {}), ...(person.groupRequest[type] || {}) };
  }
  return { personProperties, groups: { ...person.groups }, groupProperties };
}

// A scenario's group and person records written where flags reads them
// (Redis on port), for the project projectId.
export async function storeRecords(port, projectId, sc) {
  for (const g of sc.groupRecords) {
    await redisCommand(port, 'SET', `groups:${projectId}:${g.type}:${g.key}`, JSON.stringify(g.properties));
  }
  for (const p of sc.persons) {
    if (p.stored === null && !p.staticCohorts) continue;
    const rec = { properties: p.stored || {} };
    if (p.staticCohorts) rec.static_cohorts = p.staticCohorts;
    await redisCommand(port, 'SET', `persons:${projectId}:${p.distinctId}`, JSON.stringify(rec));
  }
}
