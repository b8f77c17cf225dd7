// corpus.mjs - the differential corpus: HogQL queries that must give the
// same answer on SQLite and on ClickHouse over dataset() (endpoints_
// differential.test.mjs, with corpus_*.mjs beside it). Every query orders its rows completely, so the
// stores cannot differ by an arbitrary order; floats are halves, so sums
// are exact whatever order the stores add in.

import { readdirSync } from 'node:fs';

// dataset() lives in dataset.mjs, so that a corpus_<topic>.mjs can compute its
// answers from it (importing this file from one would be a cycle).
export { dataset } from './dataset.mjs';

const filters = [
  '1 = 1',
  "event = '$pageview'",
  "properties.$browser = 'Chrome'",
  'toFloat(properties.price) > 10',
  "distinct_id IN ('user-1', 'user-2')",
  "timestamp >= '2024-03-04'",
  'properties.plan IS NULL',
  "event LIKE '%up'",
  "NOT (event = 'signup')",
  'toInt(properties.n) BETWEEN 5 AND 15',
  "properties.$browser IS NOT NULL AND properties.$browser != 'Safari'",
  "timestamp BETWEEN '2024-03-02' AND '2024-03-05 12:00:00'",
];
const aggregates = [
  'count()',
  'uniq(distinct_id)',
  'sum(toFloat(properties.price))',
  'max(toInt(properties.n))',
  'min(timestamp)',
  'avg(toFloat(properties.price))',
  "countIf(properties.plan = 'pro')",
  'quantile(0.9)(toFloat(properties.price))',
  'median(toInt(properties.n))',
];

const handwritten = [
  'SELECT event, distinct_id, timestamp FROM events ORDER BY timestamp LIMIT 10',
  'SELECT uuid, event FROM events ORDER BY uuid LIMIT 5 OFFSET 3',
  'SELECT properties.$browser AS b, count() FROM events GROUP BY b ORDER BY b',
  'SELECT properties.plan, count() AS c FROM events GROUP BY properties.plan ORDER BY c DESC, properties.plan',
  'SELECT properties.mixed FROM events WHERE properties.mixed IS NOT NULL ORDER BY toInt(properties.n)',
  'SELECT properties.flag, count() FROM events GROUP BY 1 ORDER BY 1',
  'SELECT properties.label FROM events WHERE properties.label IS NOT NULL ORDER BY 1',
  'SELECT toFloat(properties.mixed) AS f FROM events WHERE properties.mixed IS NOT NULL ORDER BY toInt(properties.n)',
  'SELECT distinct_id, count() AS c, sum(toFloat(properties.price)) AS s FROM events GROUP BY distinct_id ORDER BY distinct_id',
  'SELECT distinct_id, max(timestamp) AS last FROM events GROUP BY distinct_id HAVING count() > 11 ORDER BY distinct_id',
  'SELECT DISTINCT event FROM events ORDER BY event',
  'SELECT toDate(timestamp) AS d, count() FROM events GROUP BY d ORDER BY d',
  'SELECT toStartOfDay(timestamp) AS d, count() FROM events GROUP BY d ORDER BY d',
  'SELECT toStartOfHour(timestamp) AS h, count() FROM events GROUP BY h ORDER BY h LIMIT 20',
  'SELECT toStartOfWeek(timestamp) AS w, count() FROM events GROUP BY w ORDER BY w',
  'SELECT toStartOfWeek(timestamp, 1) AS w, count() FROM events GROUP BY w ORDER BY w',
  'SELECT toStartOfMonth(timestamp) AS m, count() FROM events GROUP BY m ORDER BY m',
  'SELECT toStartOfMinute(timestamp) AS m FROM events ORDER BY m LIMIT 5',
  'SELECT toYear(timestamp), toMonth(timestamp), toDayOfMonth(timestamp), count() FROM events GROUP BY 1, 2, 3 ORDER BY 1, 2, 3',
  'SELECT toDayOfWeek(timestamp) AS dow, count() FROM events GROUP BY dow ORDER BY dow',
  'SELECT toHour(timestamp) AS h, count() FROM events GROUP BY h ORDER BY h',
  'SELECT toMinute(timestamp) AS m, count() FROM events GROUP BY m ORDER BY m',
  'SELECT toUnixTimestamp(timestamp) FROM events ORDER BY 1 LIMIT 5',
  "SELECT dateDiff('day', toDateTime('2024-03-01'), timestamp) AS d, count() FROM events GROUP BY d ORDER BY d",
  "SELECT dateDiff('hour', toDateTime('2024-03-01 00:30:00'), timestamp) AS d FROM events ORDER BY d LIMIT 10",
  "SELECT dateDiff('week', toDateTime('2024-03-01'), timestamp) AS d, count() FROM events GROUP BY d ORDER BY d",
  "SELECT dateDiff('month', toDateTime('2024-01-15'), timestamp) AS d, count() FROM events GROUP BY d ORDER BY d",
  "SELECT dateDiff('minute', toDateTime('2024-03-01'), timestamp) AS d FROM events ORDER BY d LIMIT 5",
  "SELECT dateAdd('day', 2, timestamp) AS t FROM events ORDER BY t LIMIT 5",
  "SELECT dateSub('hour', 5, timestamp) AS t FROM events ORDER BY t LIMIT 5",
  'SELECT timestamp + INTERVAL 1 DAY AS t FROM events ORDER BY t LIMIT 5',
  'SELECT timestamp - INTERVAL 3 HOUR AS t FROM events ORDER BY t LIMIT 5',
  'SELECT toDate(timestamp) + INTERVAL 1 MONTH AS t FROM events ORDER BY t LIMIT 3',
  "SELECT count() FROM events WHERE timestamp > toDateTime('2024-03-05 06:00:00')",
  "SELECT count() FROM events WHERE toDate(timestamp) = '2024-03-03'",
  "SELECT toTimeZone(timestamp, 'UTC') FROM events ORDER BY 1 LIMIT 3",
  "SELECT fromUnixTimestamp(1709251200) AS t",
  'SELECT lower(event), upper(event), length(event) FROM events GROUP BY event ORDER BY event',
  "SELECT concat(event, '-', distinct_id) AS x FROM events ORDER BY x LIMIT 10",
  "SELECT concat(properties.plan, '/', properties.n) AS x FROM events ORDER BY toInt(properties.n) LIMIT 10",
  'SELECT substring(distinct_id, 1, 4), substring(event, 2) FROM events GROUP BY distinct_id, event ORDER BY 1, 2',
  "SELECT position(event, 'u') AS p, count() FROM events GROUP BY p ORDER BY p",
  "SELECT startsWith(event, '$'), endsWith(event, 'up'), count() FROM events GROUP BY 1, 2 ORDER BY 1, 2",
  "SELECT replaceAll(event, '$', 'dollar-') AS e, count() FROM events GROUP BY e ORDER BY e",
  "SELECT trim(concat('  ', event, '  ')) AS e FROM events GROUP BY e ORDER BY e",
  "SELECT empty(coalesce(properties.plan, '')) AS e, notEmpty(event), count() FROM events GROUP BY 1, 2 ORDER BY 1, 2",
  "SELECT 'it''s' AS a, 'back\\\\slash' AS b, 'q\"uote' AS c",
  "SELECT coalesce(properties.plan, properties.$browser, 'none') AS x, count() FROM events GROUP BY x ORDER BY x",
  "SELECT ifNull(properties.plan, '-') AS p, count() FROM events GROUP BY p ORDER BY p",
  "SELECT nullIf(properties.plan, 'free') AS p, count() FROM events GROUP BY p ORDER BY p",
  'SELECT isNull(properties.$browser), isNotNull(properties.plan), count() FROM events GROUP BY 1, 2 ORDER BY 1, 2',
  "SELECT CASE WHEN toInt(properties.n) < 40 THEN 'low' WHEN toInt(properties.n) < 80 THEN 'mid' ELSE 'high' END AS band, count() FROM events GROUP BY band ORDER BY band",
  "SELECT CASE event WHEN 'signup' THEN 1 WHEN 'purchase' THEN 2 END AS k, count() FROM events GROUP BY k ORDER BY k",
  "SELECT multiIf(event = 'signup', 'S', event = 'purchase', 'P', 'other') AS k, count() FROM events GROUP BY k ORDER BY k",
  "SELECT if(toFloat(properties.price) > 12, 'dear', 'cheap') AS k, count() FROM events GROUP BY k ORDER BY k",
  "SELECT toInt(properties.n) > 50 ? 'b' : 'a' AS k, count() FROM events GROUP BY k ORDER BY k",
  'SELECT 7 / 2, 7 % 3, intDiv(7, 2), -(5), 2 + 3 * 4, (2 + 3) * 4, 10 - 4 - 3',
  'SELECT round(2.25, 1), round(7.0), floor(2.5), ceil(2.5), abs(-3), abs(-2.5)',
  'SELECT greatest(1, 5, 3), least(4, 2, 8), greatest(1.5, 2)',
  'SELECT toInt(properties.n) % 5 AS r, sum(toFloat(properties.price)) FROM events GROUP BY r ORDER BY r',
  'SELECT round(avg(toFloat(properties.price)), 3) FROM events',
  'SELECT toString(toInt(properties.n)) AS s FROM events ORDER BY s LIMIT 10',
  'SELECT toString(timestamp) FROM events ORDER BY 1 LIMIT 3',
  'SELECT toInt(properties.plan), toFloat(properties.$browser) FROM events ORDER BY toInt(properties.n) LIMIT 6',
  "SELECT CAST(properties.n AS Int64) + 1 AS x FROM events ORDER BY x LIMIT 5",
  "SELECT CAST(toInt(properties.n) AS String) AS s FROM events ORDER BY s LIMIT 5",
  'SELECT count() FROM events WHERE toInt(properties.n) IN (1, 2, 3, 50)',
  "SELECT count() FROM events WHERE event NOT IN ('signup', 'purchase')",
  "SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE event = 'purchase' AND toInt(properties.n) < 30)",
  'SELECT count() FROM events WHERE toInt(properties.n) NOT BETWEEN 10 AND 100',
  "SELECT count() FROM events WHERE event ILIKE '%PAGE%'",
  "SELECT count() FROM events WHERE event NOT LIKE '$%'",
  "SELECT count() FROM events WHERE event LIKE '\\\\$%'",
  "SELECT count() FROM events WHERE event LIKE 'SIGNUP'",
  "SELECT count() FROM events WHERE properties.$browser = 'chrome'",
  'SELECT d, c FROM (SELECT distinct_id AS d, count() AS c FROM events GROUP BY distinct_id) WHERE c > 11 ORDER BY d',
  'SELECT max(c) FROM (SELECT event, count() AS c FROM events GROUP BY event)',
  "WITH buyers AS (SELECT distinct_id FROM events WHERE event = 'purchase') SELECT count() FROM buyers",
  "WITH buyers AS (SELECT DISTINCT distinct_id AS d FROM events WHERE event = 'purchase'), counts AS (SELECT d FROM buyers) SELECT count() FROM counts",
  'WITH 10 AS ten SELECT count() FROM events WHERE toInt(properties.n) < ten',
  "SELECT event FROM events WHERE event = 'signup' AND toInt(properties.n) < 10 UNION ALL SELECT event FROM events WHERE event = 'purchase' AND toInt(properties.n) < 10",
  "SELECT e, count() FROM (SELECT event AS e FROM events UNION ALL SELECT 'extra' AS e) GROUP BY e ORDER BY e",
  'SELECT e.event, count() FROM events e INNER JOIN events f ON e.uuid = f.uuid GROUP BY e.event ORDER BY e.event',
  "SELECT a.d, a.c, b.c FROM (SELECT distinct_id AS d, count() AS c FROM events WHERE event = 'signup' GROUP BY distinct_id) a LEFT JOIN (SELECT distinct_id AS d, count() AS c FROM events WHERE event = 'purchase' GROUP BY distinct_id) b ON a.d = b.d ORDER BY a.d",
  'SELECT count() FROM events a JOIN events b USING (uuid)',
  'SELECT event, timestamp FROM events ORDER BY timestamp DESC LIMIT 2 BY event',
  'SELECT distinct_id, toInt(properties.n) AS n FROM events ORDER BY n LIMIT 1 BY distinct_id',
  'SELECT event, toInt(properties.n) AS n FROM events ORDER BY n DESC LIMIT 1 OFFSET 1 BY event',
  'SELECT properties.$browser AS b FROM events GROUP BY b ORDER BY b NULLS FIRST',
  'SELECT properties.$browser AS b FROM events GROUP BY b ORDER BY b DESC',
  'SELECT properties.plan AS p FROM events GROUP BY p ORDER BY p DESC NULLS FIRST',
  'SELECT count(), sum(toFloat(properties.price)), min(event), max(timestamp), uniq(event) FROM events WHERE 1 = 0',
  'SELECT sumIf(toFloat(properties.price), event = \'purchase\'), avgIf(toFloat(properties.price), event = \'signup\'), minIf(toInt(properties.n), event = \'signup\'), maxIf(event, toInt(properties.n) < 3), uniqIf(distinct_id, event = \'purchase\') FROM events',
  "SELECT any(event) FROM events WHERE distinct_id = 'user-3'",
  'SELECT event, quantile(0)(toFloat(properties.price)), quantile(1)(toFloat(properties.price)), quantile(0.37)(toFloat(properties.mixed)) FROM events GROUP BY event ORDER BY event',
  "SELECT median(toFloat(properties.mixed)), quantile(0.25)(toInt(properties.n)) FROM events WHERE event = 'nothing'",
  'SELECT count(DISTINCT properties.$browser) FROM events',
  'SELECT count(properties.plan) FROM events',
  "SELECT JSONExtractString(properties, 'plan') AS p, count() FROM events GROUP BY p ORDER BY p",
  'SELECT person.properties.email AS e, count() FROM events GROUP BY e ORDER BY e',
  'SELECT person_id IS NOT NULL, count() FROM events GROUP BY 1',
  "SELECT count() FROM persons WHERE properties.email LIKE '%@example.com'",
  'SELECT p.properties.email AS e FROM persons p ORDER BY e',
  "SELECT e.distinct_id, p.properties.email AS email FROM events e JOIN persons p ON e.person_id = p.id WHERE e.event = 'signup' GROUP BY e.distinct_id, email ORDER BY e.distinct_id",
  'SELECT count() FROM groups',
  'SELECT 1 AS one, 2.5 AS f, NULL AS nothing, true AS t, false AS ff',
];

// Topic files beside this one (corpus_<topic>.mjs) each export `queries`:
// strings, or { q, want } where want is the rows PostHog answers (its tests
// state them), checked on both stores besides their agreeing.
const topics = await Promise.all(
  readdirSync(new URL('.', import.meta.url))
    .filter((f) => /^corpus_[a-z0-9_]+\.mjs$/.test(f))
    .sort()
    .map((f) => import(new URL(f, import.meta.url)))
);

// Every query with the rows PostHog states, where it states them.
export function corpusEntries() {
  const out = corpus().map((q) => ({ q }));
  for (const t of topics) for (const e of t.queries) out.push(typeof e === 'string' ? { q: e } : e);
  return out;
}

export function corpus() {
  const out = [...handwritten];
  for (const f of filters)
    for (const a of aggregates) {
      out.push(`SELECT ${a} FROM events WHERE ${f}`);
      out.push(`SELECT event, ${a} AS v FROM events WHERE ${f} GROUP BY event ORDER BY event`);
    }
  return out;
}

// JSONExtract* needs ClickHouse 19.3+: where the store refuses it, both
// stores are not compared (the refusal is tested on its own).
export const CLICKHOUSE_18_REFUSES = [/JSONExtract/, /OFFSET \d+ BY/, /\bsign\(/, /\b(leftPad|rightPad|repeat|lpad|rpad)\(/, /\b(base64Encode|base64Decode|tryBase64Decode)\(/];
CLICKHOUSE_18_REFUSES.push(/\bINTERSECT\b|\bEXCEPT\b|\bOVER\b|WITH TIES|JOIN.*JOIN/); // part S: 21+ syntax
CLICKHOUSE_18_REFUSES.push(/arrayCompact|arrayZip|range\(\d+, /); // part A: 21+ array functions
CLICKHOUSE_18_REFUSES.push(/=~\*? [a-z]\b/); // a regex pattern per row
CLICKHOUSE_18_REFUSES.push(/sumMap\(\[(event|'|"|properties)/); // part T: sumMap's string keys need 21+
CLICKHOUSE_18_REFUSES.push(/encodeURLComponent/); // part T: not in 18.16
CLICKHOUSE_18_REFUSES.push(/toWeek/); // part T: not in 18.16
