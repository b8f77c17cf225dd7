// corpus_wrong.mjs - part W of issue 28: answers the two stores used to
// give differently. The failing forms (a 0 divisor of intDiv or %, branches
// of no common type) are checked in endpoints_errors.test.mjs and the unit
// tests; here the forms both stores answer. Each query orders its rows
// completely.

export const queries = [
  // intDiv and % by divisors that are never 0, per row and constant
  'SELECT toInt(properties.n) AS n, intDiv(n, n % 5 + 1) AS a, n % (n % 7 + 1) AS b, modulo(n, 4) AS c, intDiv(n, -3) AS d, -n % 4 AS e FROM events ORDER BY n',
  // intDiv with a float: the quotient of the floats, truncated
  'SELECT toInt(properties.n) AS n, intDiv(n, 0.5) AS a, intDiv(n + 0.9, 2.5) AS b, intDiv(-n, 2.5) AS c FROM events ORDER BY n',
  // / by 0: no failure on either store (inf and nan leave ClickHouse as NULL)
  'SELECT toInt(properties.n) AS n, n / 0 AS a, n / (n % 3) AS b FROM events ORDER BY n',
  // branches of compatible types: a small integer literal and a float, NULL and a number, Date and DateTime
  "SELECT toInt(properties.n) AS n, if(n % 2 = 0, toFloat(n), 2.5) AS a, if(n % 2 = 0, 7, -2.5) AS a2, greatest(n, 3) AS g, multiIf(n % 3 = 0, NULL, n % 3 = 1, 1, 2.5) AS b, CASE WHEN n % 4 = 0 THEN 'x' ELSE event END AS c, coalesce(properties.plan, 'none') AS d FROM events ORDER BY n",
  // substring: an offset 0 at run time is '' on both (18.16 and SQLite), negative offsets from the end
  'SELECT toInt(properties.n) AS n, substring(event, n % 3, 2) AS a, substring(event, n % 5 - 2) AS b, substring(event, -3) AS c, substring(event, 2, n % 4) AS d FROM events ORDER BY n',
  // a boolean property is the text 'true' or 'false' (comparing it with true is refused on both)
  "SELECT properties.flag AS f, count() AS c, countIf(properties.flag = 'true') AS t FROM events GROUP BY f ORDER BY f",
  // an outer JOIN's key on the side a miss leaves NULL: NULL on both (18.16 read it as '' or 0);
  // RIGHT JOIN is printed the same way (golden), but 18.16 fails reading its left side at all
  "SELECT e.distinct_id AS who, p.pd AS k, p.pc AS m, count() AS n FROM events e LEFT JOIN (SELECT distinct_id AS pd, count() AS pc FROM events WHERE distinct_id IN ('user-1', 'user-3') GROUP BY pd) p ON e.distinct_id = p.pd GROUP BY who, k, m ORDER BY who",
  "SELECT toInt(e.properties.n) AS u, p.pe AS k FROM events e LEFT JOIN (SELECT event AS pe FROM events WHERE event = 'signup' GROUP BY pe) p ON e.event = p.pe ORDER BY u",
];
