// corpus_split.mjs - splitByChar and splitByString, trim of a set of
// characters, case-insensitive regex operators (docs/endpoints.md
// "Arrays, tuples and lambdas"): the same arrays on SQLite (libcommon's
// cm_split) and ClickHouse, and ClickHouse 18.16's own answers for the
// edges (read from its server): '' is [''], a separator at either end
// leaves an empty string there, separators do not overlap.

export const queries = [
  { q: "SELECT splitByChar(',', '') AS a", want: [[['']]] },
  { q: "SELECT splitByString(', ', 'a, b,, c') AS a", want: [[['a', 'b,', 'c']]] },
  { q: "SELECT splitByChar(',', ',a,') AS a", want: [[['', 'a', '']]] },
  { q: "SELECT splitByString('ab', 'xabyab') AS a", want: [[['x', 'y', '']]] },
  { q: "SELECT splitByString('aa', 'aaa') AS a", want: [[['', 'a']]] },
  "SELECT event, splitByChar('e', event) AS parts FROM events GROUP BY event ORDER BY event",
  "SELECT splitByString('-', distinct_id)[2] AS n, count() FROM events GROUP BY n ORDER BY n",
  "SELECT toInt(properties.n) AS n, splitByChar(' ', ifNull(properties.label, '')) AS words FROM events WHERE n < 30 ORDER BY n",
  "SELECT arrayStringConcat(splitByChar('u', event), '+') AS back, length(splitByString('ag', event)) AS k FROM events GROUP BY event ORDER BY back",
  "SELECT count() FROM events WHERE has(splitByChar('-', distinct_id), '3')",
  { q: "SELECT trim(BOTH 'xy' FROM 'xxhixy') AS a, trim(LEADING 'x' FROM 'xxhix') AS b, trim(TRAILING ']-' FROM 'a]-]') AS c, trimLeft('  a ') AS d", want: [['hi', 'hix', 'a', 'a ']] },
  "SELECT event, trimLeft(event, '$'), trimRight(event, 'pwe'), trim(event, '$e') FROM events GROUP BY event ORDER BY event",
  "SELECT event, count() FROM events WHERE event =~* 'SIGN' OR event !~* '^\\$' GROUP BY event ORDER BY event",
];
