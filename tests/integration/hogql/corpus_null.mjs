// corpus_null.mjs - NULL in comparisons, LIKE, IN, BETWEEN and ||, as HogQL
// answers them: two-valued (docs/endpoints.md, "One answer on both stores").
// Every query carries `want`, computed here by a small model of those rules
// over dataset(), so both stores are checked against the rules themselves,
// not only against each other.
import { dataset } from './dataset.mjs';

// ---- the model ------------------------------------------------------------------------------
// null is NULL. A comparison never answers NULL:
const eq = (a, b) => (a === null || b === null ? (a === null && b === null ? 1 : 0) : a === b ? 1 : 0);
const ne = (a, b) => (a === null || b === null ? (a === null && b === null ? 0 : 1) : a !== b ? 1 : 0);
const ord = (f) => (a, b) => (a === null || b === null ? 0 : f(a, b) ? 1 : 0);
const likeRe = (p, flags) => new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%/g, '.*').replace(/_/g, '.')}$`, flags);
const like = (ci) => (a, p) => (a === null || p === null ? eq(a, p) : likeRe(p, ci ? 'si' : 's').test(a) ? 1 : 0);
const notLike = (ci) => (a, p) => (a === null || p === null ? ne(a, p) : 1 - like(ci)(a, p));
const OPS = {
  '=': eq,
  '!=': ne,
  '<': ord((a, b) => a < b),
  '<=': ord((a, b) => a <= b),
  '>': ord((a, b) => a > b),
  '>=': ord((a, b) => a >= b),
  LIKE: like(false),
  'NOT LIKE': notLike(false),
  ILIKE: like(true),
  'NOT ILIKE': notLike(true),
};
// IN: a NULL matches a NULL of the list (transform_null_in); NOT IN its negation.
const isIn = (a, list) => (list.some((x) => (a === null ? x === null : x === a)) ? 1 : 0);
// [NOT] BETWEEN: a >= lo AND a <= hi (NOT: a < lo OR a > hi) in SQL's
// three-valued logic, then NULL is 0: 4 NOT BETWEEN NULL AND 3 is 1.
const t3 = (a, b, f) => (a === null || b === null ? null : f(a, b));
const and3 = (x, y) => (x === false || y === false ? false : x === null || y === null ? null : true);
const or3 = (x, y) => (x === true || y === true ? true : x === null || y === null ? null : false);
const between = (a, lo, hi, not) => {
  const r = not ? or3(t3(a, lo, (p, q) => p < q), t3(a, hi, (p, q) => p > q)) : and3(t3(a, lo, (p, q) => p >= q), t3(a, hi, (p, q) => p <= q));
  return r === true ? 1 : 0;
};
// AND, OR: SQL's three-valued logic (NULL AND 0 is 0, NULL OR 0 is NULL); a number is true unless 0.
const truth = (x) => (x === null ? null : x !== 0);
const fromTruth = (t) => (t === null ? null : t ? 1 : 0);
// || and concat: a NULL is ''.
const cat = (...xs) => xs.map((x) => (x === null ? '' : String(x))).join('');

// ---- the data, as HogQL reads it ------------------------------------------------------------
const rows = dataset().map((e) => ({
  n: e.properties.n,
  event: e.event,
  browser: e.properties.$browser ?? null,
  plan: e.properties.plan ?? null,
  mixed: typeof e.properties.mixed === 'number' ? e.properties.mixed : null, // toInt('x7') is NULL
}));
const FEW = 15; // n 0..14: every browser shape (a name, JSON null, missing) and every plan
const few = rows.filter((r) => r.n < FEW);
const perRow = (sql, f) => ({
  q: `SELECT toInt(properties.n) AS n, ${sql} AS r FROM events WHERE toInt(properties.n) < ${FEW} ORDER BY n`,
  want: few.map((r) => [r.n, f(r)]),
});
const counted = (sql, f) => ({
  q: `SELECT count() FROM events WHERE toInt(properties.n) >= 0 AND ${sql}`,
  want: [[rows.filter(f).length]],
});

const side = {
  browser: { sql: 'properties.$browser', v: (r) => r.browser },
  plan: { sql: 'properties.plan', v: (r) => r.plan },
  event: { sql: 'event', v: (r) => r.event },
  null: { sql: 'NULL', v: () => null },
  str: (s) => ({ sql: `'${s}'`, v: () => s }),
};

export const queries = [];

// comparisons over nullable properties, a non-nullable column, NULL itself
for (const op of ['=', '!=', '<', '<=', '>', '>=']) {
  for (const [a, b] of [
    [side.browser, side.str('Chrome')],
    [side.browser, side.null],
    [side.browser, side.plan],
    [side.event, side.str('purchase')],
    [side.null, side.plan],
  ]) queries.push(perRow(`${a.sql} ${op} ${b.sql}`, (r) => OPS[op](a.v(r), b.v(r))));
}
// the same through a filter, and under NOT (NOT of a NULL would drop the row)
for (const op of ['=', '!=']) {
  queries.push(counted(`properties.$browser ${op} 'Chrome'`, (r) => OPS[op](r.browser, 'Chrome')));
  queries.push(counted(`NOT (properties.$browser ${op} 'Firefox')`, (r) => 1 - OPS[op](r.browser, 'Firefox')));
  queries.push(counted(`properties.$browser ${op} properties.plan`, (r) => OPS[op](r.browser, r.plan)));
}
// five events, the issue's example: != keeps the event whose browser is NULL
queries.push({
  q: "SELECT count() FROM events WHERE toInt(properties.n) IN (0, 1, 3, 5, 10) AND properties.$browser != 'Chrome'",
  want: [[rows.filter((r) => [0, 1, 3, 5, 10].includes(r.n) && ne(r.browser, 'Chrome')).length]],
});

// LIKE and ILIKE, plain and negated
for (const op of ['LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE']) {
  for (const [a, b] of [
    [side.browser, side.str('%r%')],
    [side.browser, side.str('CH%')],
    [side.browser, side.null],
    [side.plan, side.str('p%')],
    [side.event, side.str('%up')],
  ]) queries.push(perRow(`${a.sql} ${op} ${b.sql}`, (r) => OPS[op](a.v(r), b.v(r))));
}

// IN and NOT IN: lists with and without NULL, a nullable and a non-nullable left side
for (const not of [false, true]) {
  const op = not ? 'NOT IN' : 'IN';
  for (const [a, list] of [
    [side.browser, ["'Chrome'", 'NULL']],
    [side.browser, ["'Chrome'", "'Safari'"]],
    [side.browser, ['NULL']],
    [side.event, ["'signup'", 'NULL']],
    [side.plan, ["'pro'", "'free'"]],
  ]) {
    // (ClickHouse 18.16 takes only constants in an IN list and a LIKE pattern)
    const vals = () => list.map((x) => (x === 'NULL' ? null : x.slice(1, -1)));
    queries.push(perRow(`${a.sql} ${op} (${list.join(', ')})`, (r) => (not ? 1 - isIn(a.v(r), vals(r)) : isIn(a.v(r), vals(r)))));
  }
  // a subquery answering a NULL among its rows, and one that cannot
  const sub = few.filter((r) => r.n === 0 || r.n === 3).map((r) => r.browser);
  queries.push(perRow(
    `properties.$browser ${op} (SELECT properties.$browser FROM events WHERE toInt(properties.n) IN (0, 3))`,
    (r) => (not ? 1 - isIn(r.browser, sub) : isIn(r.browser, sub)),
  ));
  queries.push(perRow(
    `properties.plan ${op} (SELECT event FROM events WHERE toInt(properties.n) IN (0, 1))`,
    (r) => (not ? 1 - isIn(r.plan, ['$pageview', 'signup']) : isIn(r.plan, ['$pageview', 'signup'])),
  ));
}

// BETWEEN and NOT BETWEEN with a NULL on any side
for (const not of [false, true]) {
  const op = not ? 'NOT BETWEEN' : 'BETWEEN';
  queries.push(perRow(`toInt(properties.mixed) ${op} 0 AND 8`, (r) => between(r.mixed, 0, 8, not)));
  queries.push(perRow(`toInt(properties.n) ${op} 3 AND toInt(properties.mixed)`, (r) => between(r.n, 3, r.mixed, not)));
  queries.push(perRow(`toInt(properties.n) ${op} NULL AND 5`, (r) => between(r.n, null, 5, not)));
  queries.push(counted(`toInt(properties.mixed) ${op} 10 AND 60`, (r) => between(r.mixed, 10, 60, not)));
}

// || and concat: NULL is ''
queries.push(perRow("properties.$browser || '/' || properties.plan", (r) => cat(r.browser, '/', r.plan)));
queries.push(perRow('concat(properties.plan, NULL, properties.$browser)', (r) => cat(r.plan, null, r.browser)));
queries.push(perRow("event || NULL", (r) => cat(r.event, null)));

// the operators between constants, directly and through a subquery's columns
const lit = (x) => (x === null ? 'NULL' : typeof x === 'string' ? `'${x}'` : String(x));
const pairs = (xs) => xs.flatMap((a) => xs.map((b) => [a, b]));
for (const op of Object.keys(OPS)) {
  const vals = /LIKE/.test(op) ? [null, 'ab', 'a%'] : [null, 1, 2];
  const names = ['a', 'b', 'c'];
  const ps = pairs(vals.map((v, i) => [v, names[i]]));
  queries.push({ q: `SELECT ${ps.map(([[a], [b]]) => `${lit(a)} ${op} ${lit(b)}`).join(', ')}`, want: [ps.map(([[a], [b]]) => OPS[op](a, b))] });
  queries.push({
    q: `SELECT ${ps.map(([[, a], [, b]]) => `${a} ${op} ${b}`).join(', ')} FROM (SELECT ${vals.map((v, i) => `${lit(v)} AS ${names[i]}`).join(', ')})`,
    want: [ps.map(([[a], [b]]) => OPS[op](a, b))],
  });
}
{
  const cases = [[null, 1, 3], [2, null, 3], [2, 1, null], [4, null, 3], [0, 1, null], [2, 1, 3], [4, 1, 3]];
  for (const not of [false, true]) {
    const op = not ? 'NOT BETWEEN' : 'BETWEEN';
    queries.push({ q: `SELECT ${cases.map((c) => `${lit(c[0])} ${op} ${lit(c[1])} AND ${lit(c[2])}`).join(', ')}`, want: [cases.map((c) => between(...c, not))] });
  }
  const ins = [[null, [1, null]], [null, [1, 2]], [1, [1, null]], [3, [1, null]], [3, [1, 2]]];
  for (const not of [false, true]) {
    const op = not ? 'NOT IN' : 'IN';
    queries.push({
      q: `SELECT ${ins.map(([a, l]) => `${lit(a)} ${op} (${l.map(lit).join(', ')})`).join(', ')}`,
      want: [ins.map(([a, l]) => (not ? 1 - isIn(a, l) : isIn(a, l)))],
    });
    queries.push({
      q: `SELECT ${ins.map(([a, l], i) => `x${i} ${op} (${l.map(lit).join(', ')})`).join(', ')} FROM (SELECT ${ins.map(([a], i) => `${lit(a)} AS x${i}`).join(', ')})`,
      want: [ins.map(([a, l]) => (not ? 1 - isIn(a, l) : isIn(a, l)))],
    });
  }
  queries.push({ q: "SELECT 'a' || NULL, NULL || 'b', concat('a', NULL, 'b'), concat(NULL, NULL)", want: [['a', 'b', 'ab', '']] });
}

// AND, OR, NOT over a value that may be NULL
queries.push(perRow('toInt(properties.mixed) AND toInt(properties.n) > 3', (r) => fromTruth(and3(truth(r.mixed), r.n > 3))));
queries.push(perRow('toInt(properties.mixed) OR toInt(properties.n) > 3', (r) => fromTruth(or3(truth(r.mixed), r.n > 3))));
queries.push(perRow('NOT (toInt(properties.mixed) AND toInt(properties.n) < 3)', (r) => {
  const t = and3(truth(r.mixed), r.n < 3);
  return t === null ? null : t ? 0 : 1;
}));
{
  const vs = [null, 0, 1];
  const ps = pairs(vs);
  for (const op of ['AND', 'OR']) {
    const f = op === 'AND' ? and3 : or3;
    queries.push({ q: `SELECT ${ps.map(([a, b]) => `${lit(a)} ${op} ${lit(b)}`).join(', ')}`, want: [ps.map(([a, b]) => fromTruth(f(truth(a), truth(b))))] });
    queries.push({
      q: `SELECT ${ps.map(([a, b]) => `x${vs.indexOf(a)} ${op} x${vs.indexOf(b)}`).join(', ')} FROM (SELECT NULL AS x0, 0 AS x1, 1 AS x2)`,
      want: [ps.map(([a, b]) => fromTruth(f(truth(a), truth(b))))],
    });
  }
}

// a JOIN's ON compares plain, as HogQL prints it there: a NULL key matches nothing
queries.push({
  q: 'SELECT toInt(e.properties.n) AS n, p.b AS b, p.c AS c FROM events e LEFT JOIN (SELECT properties.$browser AS b, count() AS c FROM events WHERE toInt(properties.n) < 15 GROUP BY b) p ON e.properties.$browser = p.b WHERE toInt(e.properties.n) < 10 ORDER BY n',
  want: rows.filter((r) => r.n < 10).sort((x, y) => x.n - y.n).map((r) => [r.n, r.browser, r.browser === null ? null : few.filter((f) => f.browser === r.browser).length]),
});
