// corpus_t28rest.mjs - issue 28's rest (part T), each on SQLite and ClickHouse
// 18.16 (docs/endpoints.md): sumMap (the stated answers ClickHouse 18.16's
// own, read from its server: keys sorted, each key's values summed, a key
// whose sum is zero left out, ([], []) over no rows; string keys need 21+),
// toBool of a number, encodeURLComponent and toWeek (21+ and SQLite: checked
// on SQLite against the stated answers), ARRAY JOIN of several arrays,
// numbers() of a constant expression, regular expressions whose pattern is
// one text in every row, and lowerUTF8/upperUTF8 over every code point.

import { dataset } from './dataset.mjs';

// C's strftime week numbers of a UTC day: %U from Sunday, %W from Monday.
function strftimeWeek(t, monday) {
  const d = new Date(t);
  const yday = Math.round((t - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000);
  const wday = monday ? (d.getUTCDay() + 6) % 7 : d.getUTCDay();
  return Math.floor((yday + 7 - wday) / 7);
}
const WEEK_DAYS = 3000;
function weekSums() {
  const sums = [0, 0, 0, 0];
  for (let i = 0; i < WEEK_DAYS; i++) {
    const t = Date.UTC(1999, 11, 20 + i);
    const w0 = strftimeWeek(t, false), w5 = strftimeWeek(t, true);
    const lastOfPrev = Date.UTC(new Date(t).getUTCFullYear() - 1, 11, 31);
    const weeks = [w0, w5, w0 || strftimeWeek(lastOfPrev, false), w5 || strftimeWeek(lastOfPrev, true)];
    weeks.forEach((w, k) => { sums[k] += w * (i + 1); });
  }
  return sums;
}

export const queries = [
  {
    q: 'SELECT sumMap(k, v) AS m FROM (SELECT [1, 2] AS k, [10, 20] AS v UNION ALL SELECT [2, 3] AS k, [5, 7] AS v)',
    want: [[[[1, 2, 3], [10, 25, 7]]]],
  },
  {
    q: 'SELECT sumMap(k, v) AS m FROM (SELECT [1, 2] AS k, [10, -10] AS v UNION ALL SELECT [3, 2] AS k, [0, 10] AS v)',
    want: [[[[1], [10]]]],
  },
  { q: "SELECT sumMap([1], [1]) AS m FROM events WHERE event = 'no such event'", want: [[[[], []]]] },
  {
    q: 'SELECT sumMap(k, v) AS m FROM (SELECT [1, 2] AS k, [0.5, 1] AS v UNION ALL SELECT [1, 2] AS k, [0.5, 1] AS v)',
    want: [[[[1, 2], [1, 2]]]],
  },
  'SELECT event, sumMap([1, 2], [length(event), 1]) AS m FROM events GROUP BY event ORDER BY event',
  'SELECT sumMap(range(3), [0.5, 1.5, 2.5]) AS m FROM events',
  'SELECT sumMap([ifNull(toInt(properties.n), 0) % 3, 7], [1, 2]) AS m FROM events',
  "SELECT toStartOfMonth(timestamp) AS month, sumMap([ifNull(toInt(properties.n), 0) % 4], [1.5]) AS m FROM events GROUP BY month ORDER BY month",
  // string keys: ClickHouse 21+ and SQLite
  { q: "SELECT sumMap(['b', 'a'], [1, 2]) AS m FROM (SELECT 1 UNION ALL SELECT 2)", want: [[[['a', 'b'], [4, 2]]]] },
  { q: "SELECT sumMap(['it''s', 'a\\\\b', 'B'], [1, 2, 3]) AS m", want: [[[['B', 'a\\b', "it's"], [3, 2, 1]]]] },
  "SELECT sumMap([event], [1]) AS m FROM events",
  // toBool of a number: x != 0 (a boolean answers 1 or 0 here, as comparisons do)
  { q: 'SELECT toBool(0) AS a, toBool(2) AS b, toBool(-0.5) AS c, toBool(NULL) AS d', want: [[0, 1, 1, null]] },
  'SELECT toBool(toInt(properties.n) % 3) AS b, count() FROM events GROUP BY b ORDER BY b',
  // encodeURLComponent: ClickHouse 21+ and SQLite; every byte but letters, digits and -_.~ as %XX
  { q: "SELECT encodeURLComponent('a b/c?d=\u00e9~_-.') AS e", want: [['a%20b%2Fc%3Fd%3D%C3%A9~_-.']] },
  { q: "SELECT count() FROM events WHERE decodeURLComponent(encodeURLComponent(properties.label)) != properties.label", want: [[0]] },
  // toWeek: ClickHouse 21+ and SQLite (modes 0 to 7); the answers MySQL's manual states for
  // its WEEK(), whose modes ClickHouse's toWeek takes, and ClickHouse's own example (2016-12-27)
  {
    q: "SELECT toWeek(toDate('2008-02-20')) AS a, toWeek(toDate('2008-02-20'), 1) AS b, toWeek(toDate('2008-12-31'), 1) AS c, toWeek(toDate('2000-01-01'), 0) AS d, toWeek(toDate('2000-01-01'), 2) AS e, toWeek(toDate('2016-12-27')) AS f, toWeek(toDate('2016-12-27'), 1) AS g",
    want: [[7, 8, 53, 0, 52, 52, 52]],
  },
  // mode 3 is ISO 8601's week: toISOWeek's answer on eight years of days
  { q: "SELECT count() FROM (SELECT addDays(toDate('1999-12-20'), number) AS d FROM numbers(3000)) WHERE toWeek(d, 3) != toISOWeek(d)", want: [[0]] },
  "SELECT toWeek(timestamp) AS w0, toWeek(timestamp, 1) AS w1, toWeek(timestamp, 2) AS w2, toWeek(timestamp, 5) AS w5, toWeek(timestamp, 7) AS w7, count() FROM events GROUP BY w0, w1, w2, w5, w7 ORDER BY w0, w1",
  // modes 0 and 5 are C's strftime %U and %W (weeks from the first Sunday / Monday, 0 before
  // it), modes 2 and 7 the same with week 0 counted as the last year's last week
  // (over 3000 days, each day's week weighted by its place: one row of sums)
  { q: `SELECT sum(toWeek(d) * k) AS w0, sum(toWeek(d, 5) * k) AS w5, sum(toWeek(d, 2) * k) AS w2, sum(toWeek(d, 7) * k) AS w7 FROM (SELECT number + 1 AS k, addDays(toDate('1999-12-20'), number) AS d FROM numbers(${WEEK_DAYS}))`, want: [weekSums()] },
  // ARRAY JOIN of several arrays in one clause: zipped, element by element (ClickHouse's)
  { q: "SELECT DISTINCT x, y FROM events ARRAY JOIN [1, 2, 3] AS x, ['a', 'b', 'c'] AS y ORDER BY x", want: [[1, 'a'], [2, 'b'], [3, 'c']] },
  'SELECT x, y, z, count() AS n FROM events ARRAY JOIN range(length(event) % 4) AS x, arrayMap(v -> v * 10, range(length(event) % 4)) AS y, arrayMap(v -> toString(v), range(length(event) % 4)) AS z GROUP BY x, y, z ORDER BY x',
  'SELECT x, y, count() AS n FROM events LEFT ARRAY JOIN range(length(event) % 3) AS x, arrayMap(v -> concat(event, toString(v)), range(length(event) % 3)) AS y GROUP BY x, y ORDER BY x, y',
  // numbers() of a constant expression
  { q: 'SELECT sum(number) AS s, count() AS n FROM numbers(2 * 3 - 1, 4 % 3 + 2)', want: [[18, 3]] },
  // a regular expression that is one text in every row (a column of a FROM-less subquery, or
  // concat() of such): ClickHouse 18.16 runs it; PostHog's answers (its test_null_equality)
  { q: "SELECT match(a, b) AS m FROM (SELECT '3' AS a, '3' AS b)", want: [[1]] },
  { q: "SELECT '3' !~* b AS m FROM (SELECT '4' AS b)", want: [[1]] },
  { q: "SELECT a !~ b AS m FROM (SELECT '3' AS a, '3' AS b)", want: [[0]] },
  { q: "SELECT count() AS n FROM (SELECT '^\\$page' AS p, event FROM events) WHERE match(event, p) AND NOT match(event, concat(p, 'x'))", want: [[dataset().filter((e) => e.event === '$pageview').length]] },
  // lowerUTF8 / upperUTF8 of the events' own text
  "SELECT upperUTF8(event) AS u, lowerUTF8(upperUTF8(distinct_id)) AS l FROM events ORDER BY u, l LIMIT 20",
];

// lowerUTF8 / upperUTF8 over every code point of the Basic Multilingual
// Plane and the cased blocks past it (but control characters), in pieces:
// SQLite (ICU's simple mappings of the same UTF-8 length) answers as
// ClickHouse for each one.
function codePoints(from, to) {
  let s = '';
  for (let c = from; c < to; c++) {
    if (c < 0x20 || c === 0x7f || (c >= 0xd800 && c <= 0xdfff)) continue;
    const ch = String.fromCodePoint(c);
    s += ch === "'" || ch === '\\' ? `\\${ch}` : ch;
  }
  return s;
}
const CASED_PAST_BMP = [[0x10400, 0x10500], [0x10c80, 0x10d00], [0x118a0, 0x11900], [0x16e40, 0x16ea0], [0x1e900, 0x1e960]];
const pieces = [];
for (let c = 0; c < 0x10000; c += 2048) pieces.push([c, c + 2048]);
for (const p of [...pieces, ...CASED_PAST_BMP]) {
  const s = codePoints(p[0], p[1]);
  queries.push(`SELECT lowerUTF8('${s}') AS l, upperUTF8('${s}') AS u`);
}
