// corpus_arrays.mjs - arrays, lambdas and array-valued aggregates (issue 28,
// part A; docs/endpoints.md "Arrays, tuples and lambdas"): each query must
// give the same rows on SQLite (arrays as JSON) and ClickHouse (native), the
// arrays answered as JSON arrays on both. Rows are ordered completely.

export const queries = [
  // literals, index, length
  "SELECT [1, 2, 3] AS a, ['x', 'y'] AS b, [] AS e, [[1], [2, 3]] AS n, [0.5, 2.5] AS f",
  "SELECT [10, 20, 30][1], [10, 20, 30][-1], [10, 20, 30][-3], ['a', 'b'][5], [1, 2][-7], arrayElement([1, 2], 2)",
  "SELECT length([1, 2]), empty([]), notEmpty(['a']), length(['a', 'b', 'c']), empty([1])",
  "SELECT event, [event, distinct_id] AS pair FROM events WHERE toInt(properties.n) < 6 ORDER BY event, distinct_id",
  "SELECT [properties.plan, 'x'][1] AS p, [properties.plan][2] AS out, toInt(properties.n) AS n FROM events WHERE n < 4 ORDER BY n",
  "SELECT [toInt(properties.n), toInt(properties.n) * 2][2] AS x FROM events WHERE toInt(properties.n) < 4 ORDER BY x",
  "SELECT [timestamp][1] AS t, [toDate(timestamp)] AS d FROM events WHERE toInt(properties.n) = 3",
  "SELECT ['It''s', 'back\\\\slash', 'tab\\tx', 'quote\"d'] AS s",
  "SELECT [properties.label] AS l FROM events WHERE properties.label IS NOT NULL ORDER BY toInt(properties.n)",
  // membership and search
  "SELECT has([1, 2], 2), has(['a'], 'b'), indexOf(['a', 'b', 'b'], 'b'), indexOf([1], 5), countEqual([1, 1, 2], 1)",
  "SELECT hasAll([1, 2, 3], [1, 3]), hasAll([1], [1, 2]), hasAll([1], []), hasAny([1, 2], [5, 2]), hasAny([1], [])",
  "SELECT count() FROM events WHERE has(['signup', 'purchase'], event)",
  "SELECT event, indexOf(['$pageview', 'signup', 'purchase'], event) AS i FROM events GROUP BY event ORDER BY event",
  // building and cutting
  "SELECT range(0), range(1), range(4)",
  "SELECT range(2, 5), range(0, 10, 3)",
  "SELECT arrayConcat([1, 2], [3], []), arrayConcat(['a'], ['b', 'c'])",
  "SELECT arraySlice([1, 2, 3, 4, 5], 2, 2), arraySlice([1, 2, 3, 4, 5], -2), arraySlice([1, 2, 3, 4, 5], 0), arraySlice([1, 2, 3, 4, 5], 2, -1), arraySlice([1, 2, 3, 4, 5], -7, 3), arraySlice([1, 2, 3, 4, 5], 7), arraySlice([1, 2, 3, 4, 5], -4, -3)",
  "SELECT arrayReverse([1, 2, 3]), arrayReverse([]), arrayDistinct([3, 1, 3, 2, 1]), arrayEnumerate(['a', 'b', 'c'])",
  "SELECT arrayCompact([1, 1, 2, 2, 1])",
  "SELECT arrayStringConcat(['a', 'b', 'c'], ', '), arrayStringConcat(['x', 'y'])",
  // lambdas
  "SELECT arrayMap(x -> x * 2, [1, 2, 3]), arrayMap(x -> concat(x, '!'), ['a', 'b']), arrayMap(x -> x > 1, [1, 2])",
  "SELECT arrayFilter(x -> x > 1, [1, 2, 3]), arrayFilter(x -> x != 'b', ['a', 'b', 'c']), arrayFilter(x -> x > 5, [1])",
  "SELECT arrayExists(x -> x = 'b', ['a', 'b']), arrayExists(x -> x > 5, [1, 2]), arrayAll(x -> x > 0, [1, 2]), arrayAll(x -> x > 1, [1, 2]), arrayAll(x -> x > 1, [])",
  "SELECT arrayCount(x -> x > 1, [1, 2, 3]), arrayCount([0, 1, 1]), arraySum([1, 2, 3]), arraySum(x -> x * 0.5, [1, 2])",
  "SELECT arraySort([3, 1, 2]), arraySort(['b', 'a', 'c']), arraySort(x -> -x, [3, 1, 2]), arrayReverseSort([3, 1, 2]), arrayReverseSort(x -> x % 3, [3, 1, 5])",
  "SELECT arrayFirst(x -> x > 1, [1, 2, 3]), arrayFirst(x -> x > 5, [1, 2]), arrayFirst(x -> x != 'a', ['a', 'b'])",
  "SELECT arrayMap(x -> arrayFilter(y -> y > x, [1, 2, 3]), [1, 2]) AS nested",
  "SELECT event, arrayMap(x -> concat(x, event), ['a', 'b']) AS m FROM events GROUP BY event ORDER BY event",
  "SELECT toInt(properties.n) AS n, arrayFilter(x -> x < n, [1, 3, 5]) AS f FROM events WHERE n < 6 ORDER BY n",
  "SELECT arraySum(x -> x, arrayMap(x -> x * 2, range(5))), length(arrayFilter(x -> x % 2 = 0, range(10)))",
  // tuples
  "SELECT (1, 'a') AS t, t.1, t.2, tupleElement((3, 'b'), 1), tuple(2.5, 'it''s').2",
  "SELECT event, (event, toInt(properties.n)) AS t FROM events WHERE toInt(properties.n) < 5 ORDER BY t.2",
  "SELECT [(1, 'a'), (2, 'b\\\\c')] AS a, arrayMap(x -> x.2, a), arrayMap(x -> (x, toString(x * 2)), [1, 2])",
  "SELECT arrayZip([1, 2], ['a', 'b'])",
  "SELECT [['a\\\\b'], [], ['it''s', 'c']] AS n, [['x']][1] AS i, arrayMap(x -> [x, 'y'], ['a']) AS m, [[1.5], [2]] AS f",
  "SELECT * FROM (SELECT ['a\\\\b', 'it''s'] AS a, (1, 'x\\\\y') AS t, [properties.plan][2] AS p FROM events WHERE toInt(properties.n) = 1)",
  "SELECT t.2, t, a[3] FROM (SELECT (toInt(properties.n), event) AS t, [properties.plan] AS a FROM events WHERE toInt(properties.n) < 3) ORDER BY t.1",
  // arrayJoin: a row per element
  "SELECT event, arrayJoin(['a', 'b']) AS x, count() FROM events WHERE x != 'b' GROUP BY event, x ORDER BY event, x",
  "SELECT arrayJoin(range(3)) AS i, arrayJoin([10, 20]) AS j ORDER BY i, j",
  "SELECT x, count() AS c FROM (SELECT arrayJoin([distinct_id, event]) AS x FROM events) GROUP BY x ORDER BY x",
  "SELECT arrayJoin(a) AS e FROM (SELECT groupUniqArray(event) AS a FROM events) ORDER BY e",
  "SELECT toInt(properties.n) AS n, arrayJoin(arrayFilter(x -> x <= n, [1, 2, 3])) AS k FROM events WHERE n < 4 ORDER BY n, k",
  // ARRAY JOIN: the clause
  "SELECT event, x, count() AS c FROM events ARRAY JOIN [event, distinct_id] AS x WHERE x != 'signup' GROUP BY event, x ORDER BY event, x",
  "SELECT n, k FROM (SELECT toInt(properties.n) AS n, arrayFilter(x -> x < n, [1, 2]) AS ks FROM events WHERE toInt(properties.n) < 4) LEFT ARRAY JOIN ks AS k ORDER BY n, k",
  "SELECT n, k FROM (SELECT toInt(properties.n) AS n, arrayFilter(x -> x < n, [1, 2]) AS ks FROM events WHERE toInt(properties.n) < 4) ARRAY JOIN ks AS k ORDER BY n, k",
  "SELECT tags, count() AS c FROM (SELECT [event, 'all'] AS tags FROM events) ARRAY JOIN tags GROUP BY tags ORDER BY tags",
  // array-valued aggregates: a stated order on both stores
  "SELECT event, groupArray(distinct_id) AS ids FROM events WHERE toInt(properties.n) < 20 GROUP BY event ORDER BY event",
  "SELECT event, groupUniqArray(distinct_id) AS ids FROM events GROUP BY event ORDER BY event",
  "SELECT groupArray(toInt(properties.n)) FROM events WHERE toInt(properties.n) < 12",
  "SELECT groupArray(properties.$browser) FROM events WHERE toInt(properties.n) < 12",
  "SELECT groupArray(event) FROM events WHERE 1 = 0",
  "SELECT groupUniqArray(toDate(timestamp)) FROM events",
  "SELECT topK(2)(event), topK(3)(distinct_id), topK(1)(properties.$browser) FROM events",
  "SELECT event, topK(2)(properties.plan) AS t FROM events GROUP BY event ORDER BY event",
  "SELECT quantiles(0.1, 0.5, 0.9)(toFloat(properties.price)) FROM events",
  "SELECT event, quantiles(0, 1)(toInt(properties.n)) AS q FROM events GROUP BY event ORDER BY event",
  "SELECT length(groupArray(event)), groupUniqArray(event)[2] FROM events",
  "SELECT has(a, 'signup'), arrayStringConcat(a, ','), arrayFilter(x -> x LIKE '%up', a) FROM (SELECT groupUniqArray(event) AS a FROM events)",
  "SELECT a[1] AS first, length(a) AS n FROM (SELECT groupArray(distinct_id) AS a FROM events)",
];
