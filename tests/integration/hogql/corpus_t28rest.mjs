// corpus_t28rest.mjs - issue 28's rest (part T): sumMap (docs/endpoints.md
// "Arrays, tuples and lambdas"), the same tuple of arrays on SQLite
// (libcommon's cm_sum_map) and ClickHouse. The stated answers are ClickHouse
// 18.16's own, read from its server: keys sorted, each key's values summed,
// a key whose sum is zero left out, ([], []) over no rows. String keys need
// ClickHouse 21+ (18.16 refuses them): checked on SQLite against the answer.

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
];
