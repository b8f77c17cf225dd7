// corpus_syntax.mjs - part S of issue 28 in the differential corpus: the
// spellings PostHog prints HogQL in (operators as calls, ??, ?.), set
// operators and parenthesized set parts, numbers(n), person_distinct_ids,
// and the constructs ClickHouse 18.16 refuses (windows, INTERSECT,
// EXCEPT, LIMIT ... WITH TIES, a second JOIN), checked there for the
// refusal (CLICKHOUSE_18_REFUSES in corpus.mjs). Every query orders its
// rows completely.

export const queries = [
  // operators as calls: the same rows as the operators
  "SELECT event, count() FROM events WHERE and(notEquals(event, 'signup'), or(equals(distinct_id, 'user-1'), equals(distinct_id, 'user-2'))) GROUP BY event ORDER BY event",
  'SELECT toInt(properties.n) AS n, plus(n, 1), minus(n, 1), multiply(n, 2), divide(n, 4), modulo(n, 7), negate(n) FROM events WHERE less(n, 6) ORDER BY n',
  "SELECT count() FROM events WHERE in(distinct_id, ('user-1', 'user-3')) AND notIn(event, ('signup')) AND not(like(event, '%view'))",
  "SELECT event, greater(toInt(properties.n), 60) AS big, count() FROM events WHERE ilike(event, '%A%') AND notILike(event, 'SIGN%') GROUP BY event, big ORDER BY event, big",
  'SELECT greaterOrEquals(toInt(properties.n), 10) AS a, lessOrEquals(toInt(properties.n), 20) AS b, count() FROM events GROUP BY a, b ORDER BY a, b',
  "SELECT count() FROM events WHERE notLike(event, '$%') AND and(1, 1, greater(toFloat(properties.price), 3))",
  // ?? and ?.
  "SELECT properties.$browser ?? 'none' AS b, count() FROM events GROUP BY b ORDER BY b",
  "SELECT properties?.plan ?? properties?.['$browser'] ?? '-' AS p, count() FROM events GROUP BY p ORDER BY p",
  // set operators ClickHouse 18.16 runs: UNION DISTINCT, parenthesized parts, ORDER BY/LIMIT on the whole
  "(SELECT event FROM events) UNION DISTINCT (SELECT 'other') UNION DISTINCT (SELECT 'signup') ORDER BY event",
  "SELECT * FROM (SELECT distinct_id FROM events WHERE event = 'signup' UNION DISTINCT SELECT distinct_id FROM events WHERE event = 'purchase') ORDER BY distinct_id",
  "(SELECT event, count() AS c FROM events GROUP BY event) UNION ALL (SELECT 'total', count() FROM events) ORDER BY c DESC, event LIMIT 3",
  "(SELECT distinct_id AS d FROM events WHERE event = 'signup') UNION DISTINCT (SELECT 'user-0') ORDER BY d LIMIT 4 OFFSET 1",
  "SELECT count() FROM ((SELECT event FROM events) UNION ALL (SELECT event FROM events WHERE event = 'signup'))",
  // numbers(n)
  'SELECT number, number * number AS sq FROM numbers(6) ORDER BY number',
  // the right side's join key is not read back (ClickHouse 18.16 gives it the type's default on a miss)
  'SELECT n.number AS k, count(e.uuid) AS c FROM numbers(1, 5) n LEFT JOIN (SELECT toInt(properties.n) AS n, uuid FROM events) e ON e.n = n.number GROUP BY k ORDER BY k',
  'SELECT count(), sum(number), min(number), max(number) FROM numbers(10, 0)',
  '(SELECT number FROM numbers(3)) UNION DISTINCT (SELECT number FROM numbers(2, 3)) ORDER BY number',
  // person_distinct_ids
  'SELECT count(), uniq(person_id) FROM person_distinct_ids',
  'SELECT d.distinct_id, count() FROM events e JOIN person_distinct_ids d ON e.distinct_id = d.distinct_id GROUP BY d.distinct_id ORDER BY d.distinct_id',
  // names in any case where PostHog takes them so
  'SELECT COUNT(), Sum(toInt(properties.n)), MAX(timestamp) FROM events',
  // ClickHouse 18.16 refuses these ("needs ClickHouse"): windows, INTERSECT, EXCEPT, WITH TIES, two JOINs
  "(SELECT event FROM events) INTERSECT (SELECT 'signup') ORDER BY event",
  "(SELECT distinct_id FROM events) INTERSECT DISTINCT (SELECT distinct_id FROM events WHERE event = 'purchase') ORDER BY distinct_id",
  "(SELECT event FROM events) EXCEPT (SELECT 'signup') ORDER BY event",
  "(SELECT event FROM events) EXCEPT DISTINCT (SELECT '$pageview') ORDER BY event",
  'SELECT uuid, row_number() OVER w AS r, lag(event) OVER w AS prev, lead(event, 1, \'end\') OVER w AS next FROM events WINDOW w AS (PARTITION BY distinct_id ORDER BY timestamp) ORDER BY uuid LIMIT 20',
  'SELECT uuid, sum(toInt(properties.n)) OVER (ORDER BY timestamp ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM events ORDER BY uuid LIMIT 20',
  'SELECT uuid, first_value(event) OVER (PARTITION BY distinct_id ORDER BY timestamp) AS f, last_value(event) OVER (PARTITION BY distinct_id ORDER BY timestamp ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS l FROM events ORDER BY uuid LIMIT 20',
  'SELECT toDate(timestamp) AS d, event FROM events ORDER BY d, event LIMIT 5 WITH TIES',
  'SELECT count() FROM events e JOIN person_distinct_ids d ON e.distinct_id = d.distinct_id JOIN events e2 ON e2.uuid = e.uuid',
];
