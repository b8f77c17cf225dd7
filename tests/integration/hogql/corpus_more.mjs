// corpus_more.mjs - PostHog's pdi and poe on events (the distinct id's row
// and the person on the event), PREWHERE, DISTINCT inside aggregates.

export const queries = [
  'SELECT pdi.distinct_id AS d, count() FROM events GROUP BY d ORDER BY d',
  'SELECT e.pdi.distinct_id AS d, e.pdi.person.properties.email AS m, poe.properties.email AS p FROM events e GROUP BY d, m, p ORDER BY d',
  'SELECT count() FROM events WHERE poe.id IS NOT NULL AND pdi.person_id = person_id',
  "SELECT event, count() FROM events PREWHERE event != 'signup' GROUP BY event ORDER BY event",
  "SELECT count() FROM events PREWHERE event = 'purchase' WHERE toInt(properties.n) > 40",
  'SELECT event, sum(DISTINCT toInt(properties.n) % 5) AS s, avg(DISTINCT toFloat(properties.price)) AS a, min(DISTINCT distinct_id), uniq(DISTINCT distinct_id) FROM events GROUP BY event ORDER BY event',
  "SELECT sum(DISTINCT toInt(properties.n)), avg(DISTINCT toFloat(properties.price)) FROM events WHERE event = 'nothing'",
  { q: 'SELECT sum(DISTINCT x), avg(DISTINCT x) FROM (SELECT 1 AS x UNION ALL SELECT 1 UNION ALL SELECT 3)', want: [[4, 2]] },
  // a string against true/false: the boolean it spells ('true', 'false'), else neither
  { q: "SELECT 'true' = true, 'abc' = true, 'false' != false, 'x' != false, 'false' = false", want: [[1, 0, 0, 1, 1]] },
  'SELECT properties.flag = true AS t, properties.flag != false AS nf, count() FROM events GROUP BY t, nf ORDER BY t, nf',
  // a pattern per row (18.16 refuses it: CLICKHOUSE_18_REFUSES)
  { q: "SELECT a =~ b, a !~ b, c =~* b, 'x' =~ d FROM (SELECT '3' AS a, '3' AS b, 'A3' AS c, NULL AS d)", want: [[1, 0, 1, 0]] },
  "SELECT event, countIf(DISTINCT distinct_id, toInt(properties.n) % 3 = 0) AS c FROM events GROUP BY event ORDER BY event",
  'SELECT a, count() FROM events INNER ARRAY JOIN [1, 2] AS a GROUP BY a ORDER BY a',
];
