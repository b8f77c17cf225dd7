// corpus_fns.mjs - part F of issue 28: aggregates (argMax/argMin, anyLast,
// the -If forms, variances), URL functions, trims, math and conversions.
// Each query orders its rows completely; URL edge cases come from literals
// (dataset() is shared), spread over rows by a GROUP BY on the dataset.

const urls = [
  'https://a.b.com:8080/x/y?q=1&r=2#frag',
  'http://user:pw@host.io/p?a=1&b=2&a=3',
  '//u:p@h.com/x',
  'a.b.com/x?a=1',
  'mailto:x@y.com',
  'https://h.com?x=1',
  'http://h/x#?a=9',
  'http://h/?aa=1&a',
  'http://h/x#f?a=1',
  'ftp+x.y-z://host/',
  '',
  '/',
  'http://',
];

const urlQueries = urls.map((u) => {
  const s = `'${u.replace(/'/g, "\\'")}'`;
  return `SELECT domain(${s}) AS d, path(${s}) AS p, extractURLParameter(${s}, 'a') AS a, ` +
    `extractURLParameter(${s}, 'q') AS q, cutQueryString(${s}) AS c`;
});

export const queries = [
  // argMax / argMin: ties on y go to the largest (smallest) x; NULLs skipped
  'SELECT event, argMax(properties.$browser, toInt(properties.n) % 3) AS b, argMin(properties.$browser, toInt(properties.n) % 3) AS w FROM events GROUP BY event ORDER BY event',
  'SELECT distinct_id, argMax(event, timestamp), argMin(event, timestamp), argMax(toInt(properties.n), properties.plan) FROM events GROUP BY distinct_id ORDER BY distinct_id',
  "SELECT event, argMaxIf(distinct_id, timestamp, properties.$browser = 'Chrome') AS a, argMinIf(toFloat(properties.price), properties.label, properties.flag = 'true') AS b FROM events GROUP BY event ORDER BY event",
  "SELECT argMax(event, timestamp), argMin(uuid, toInt(properties.n)) FROM events WHERE event = 'nothing'",
  // anyLast / anyIf / anyLastIf: the largest (smallest) value
  'SELECT event, anyLast(properties.$browser), anyLast(toInt(properties.n)), any(properties.plan) FROM events GROUP BY event ORDER BY event',
  "SELECT distinct_id, anyIf(event, properties.plan = 'pro'), anyLastIf(event, properties.plan = 'free'), anyLastIf(toInt(properties.n), properties.$browser IS NULL) FROM events GROUP BY distinct_id ORDER BY distinct_id",
  // countIf(x, cond), countDistinct, uniqExactIf, medianIf
  "SELECT event, countIf(properties.$browser, toInt(properties.n) > 30), countIf(properties.plan = 'pro'), countDistinct(distinct_id), countDistinctIf(properties.$browser, properties.plan IS NOT NULL), uniqExactIf(distinct_id, properties.flag = 'true') FROM events GROUP BY event ORDER BY event",
  "SELECT event, medianIf(toInt(properties.n), properties.$browser = 'Safari'), medianIf(toFloat(properties.price), 1 = 0) FROM events GROUP BY event ORDER BY event",
  "SELECT event, quantileIf(0.9)(toFloat(properties.price), properties.$browser IS NOT NULL), quantileIf(0)(toInt(properties.n), properties.plan = 'pro'), quantileIf(1)(toInt(properties.n), 1 = 0) FROM events GROUP BY event ORDER BY event",
  // quantileExact / medianExact: the value at floor(l * n), not interpolated
  "SELECT event, quantileExact(0.9)(toInt(properties.n)), quantileExact(0)(toFloat(properties.price)), quantileExact(1)(toInt(properties.n)), medianExact(toInt(properties.n)), medianExactIf(toInt(properties.n), properties.plan = 'pro'), medianExactIf(toFloat(properties.price), 1 = 0) FROM events GROUP BY event ORDER BY event",
  "SELECT event, quantileExact(0.25)(toUnixTimestamp(timestamp)), medianExactIf(toUnixTimestamp(timestamp), distinct_id = 'user-3'), medianExactIf(toUnixTimestamp(timestamp), event = 'none') FROM events GROUP BY event ORDER BY event",
  "SELECT quantileExact(0.5)(n), medianExact(n), medianExactIf(n, n > 100) FROM (SELECT toInt(properties.n) AS n FROM events WHERE n < 4 UNION ALL SELECT 2 AS n) ",
  // variances: NULL where ClickHouse answers nan; rounded (the stores add in their own order)
  'SELECT event, round(varPop(toFloat(properties.price)), 6), round(varSamp(toInt(properties.n)), 6), round(stddevPop(toInt(properties.n)), 6), round(stddevSamp(toFloat(properties.price)), 6) FROM events GROUP BY event ORDER BY event',
  "SELECT distinct_id, round(varPopIf(toInt(properties.n), properties.plan = 'pro'), 6), round(varSampIf(toInt(properties.n), properties.plan = 'pro'), 6), round(stddevPopIf(toFloat(properties.price), properties.$browser = 'Chrome'), 6), round(stddevSampIf(toFloat(properties.price), properties.label IS NOT NULL), 6) FROM events GROUP BY distinct_id ORDER BY distinct_id",
  'SELECT varPop(toInt(properties.n)), varSamp(toInt(properties.n)), stddevSamp(toInt(properties.n)) FROM events WHERE toInt(properties.n) = 7',
  // covariance and correlation (NULL where ClickHouse says nan)
  'SELECT event, round(covarPop(toInt(properties.n), toFloat(properties.price)), 6), round(covarSamp(toInt(properties.n), toInt(properties.n) % 7), 6), round(corr(toInt(properties.n), toFloat(properties.price)), 6), corr(toInt(properties.n), 1) FROM events GROUP BY event ORDER BY event',
  "SELECT distinct_id, round(covarPopIf(toInt(properties.n), toFloat(properties.price), properties.plan = 'pro'), 6), round(covarSampIf(toInt(properties.n), toFloat(properties.price), properties.$browser = 'Chrome'), 6) FROM events GROUP BY distinct_id ORDER BY distinct_id",
  // URL functions over odd URLs (ClickHouse 18.16's reading)
  ...urlQueries,
  "SELECT properties.label, domain(properties.label), path(properties.$browser), extractURLParameter(properties.plan, 'x'), cutQueryString(properties.label) FROM events WHERE toInt(properties.n) < 20 ORDER BY toInt(properties.n)",
  "SELECT extractURLParameter(concat('https://x.io/p?plan=', properties.plan, '&n=', properties.n), 'n') AS n, extractURLParameter(concat('https://x.io/p?plan=', properties.plan), 'plan') AS p FROM events ORDER BY toInt(properties.n) LIMIT 12",
  // decodeURLComponent, substringUTF8, reverse
  "SELECT decodeURLComponent('a%20b+c'), decodeURLComponent('%'), decodeURLComponent('%2'), decodeURLComponent('%zz%41'), decodeURLComponent('%e2%82%AC'), substringUTF8('héllo', 2, 3), substringUTF8('héllo', 10, 2), substringUTF8('héllo', 2, 0), reverse('abc'), reverse('')",
  "SELECT properties.label, decodeURLComponent(properties.label), substringUTF8(properties.label, 2, 4), reverse(properties.$browser), decodeURLComponent(extractURLParameter(concat('https://x.io/?l=', replaceAll(properties.label, ' ', '%20')), 'l')) FROM events WHERE toInt(properties.n) < 40 ORDER BY toInt(properties.n)",
  "SELECT ltrim(concat('  ', properties.plan)), rtrim(concat(properties.plan, '  ')), lpad(properties.plan, 5, '-'), rpad(properties.plan, 5, '-') FROM events ORDER BY toInt(properties.n) LIMIT 8",
  // hex: a string's bytes, an integer's as a UInt64
  "SELECT hex('abc'), hex(''), hex(255), hex(256), hex(0), hex(-1), hex(4096), hex(NULL)",
  "SELECT properties.$browser, hex(properties.$browser), hex(toInt(properties.n)), hex(count()) FROM events GROUP BY properties.$browser, toInt(properties.n) ORDER BY toInt(properties.n) LIMIT 10",
  // base64: ClickHouse 21.3+ (Debian's 18.16 lacks it: refused there, run on SQLite)
  "SELECT base64Encode('abc'), base64Encode(''), base64Decode('YWI='), tryBase64Decode('not base64!'), base64Decode(base64Encode(properties.label)) = properties.label FROM events ORDER BY toInt(properties.n) LIMIT 10",
  // sign: ClickHouse 21.3+ (refused on 18.16, run on SQLite)
  "SELECT sign(toInt(properties.n) - 50), sign(toFloat(properties.price) - 3), sign(properties.$browser) FROM events ORDER BY toInt(properties.n) LIMIT 5",
  // leftPad / rightPad / repeat: ClickHouse 21.8+ (refused on 18.16, run on SQLite)
  "SELECT leftPad(toString(toInt(properties.n)), 3, '0'), rightPad(properties.$browser, 8, '.-'), leftPad(properties.plan, 2), repeat(properties.plan, 2) FROM events ORDER BY toInt(properties.n) LIMIT 12",
  // trims, case-blind position, UTF-8 length, replaceOne
  "SELECT trimLeft('  a b  ') AS l, trimRight('  a b  ') AS r, trimLeft(properties.plan), trimRight(properties.$browser) FROM events ORDER BY toInt(properties.n) LIMIT 6",
  "SELECT positionCaseInsensitive(properties.$browser, 'REF'), positionCaseInsensitive('Hello World', 'o w'), lengthUTF8('héllo wörld'), lengthUTF8(properties.label), replaceOne(properties.label, '\"', '<q>'), replaceOne('aXbXc', 'X', '--') FROM events ORDER BY toInt(properties.n) LIMIT 20",
  // regular expressions (RE2's syntax; '.' takes a newline in match and extract only)
  String.raw`SELECT properties.$browser AS b, match(b, 'ro'), match(b, '^(?i)s'), match(b, 'e$'), extract(b, '[aeiou]+'), extract(b, '(.)(.)'), replaceRegexpOne(b, '([a-z])', '<\\1>'), replaceRegexpAll(b, '[aeiou]', '_\\0\\\\') FROM events WHERE toInt(properties.n) < 10 ORDER BY toInt(properties.n)`,
  String.raw`SELECT properties.label, extract(properties.label, '\\d+'), match(properties.label, '"\\d{2}"'), replaceRegexpAll(properties.label, '\\W+', '-') FROM events WHERE properties.label IS NOT NULL ORDER BY toInt(properties.n)`,
  String.raw`SELECT match('a\nb', 'a.b'), extract('a\nb', 'a.b'), replaceRegexpAll('a\nb', 'a.b', 'X'), match('ab\n', 'b$'), match('é', '^.$'), match('É', '(?i)é'), extract('abc', '(z)?b'), extract('abc', 'a(b)(c)'), replaceRegexpOne('abc', 'x*', '-'), replaceRegexpAll('aaa', '^a', 'X'), replaceRegexpAll('a.b.c', '\\.', '\\\\'), extract('k=v; k2=v2', 'k2=(\\w+)')`,
  "SELECT event, countIf(match(distinct_id, '[13579]$')), countIf(match(properties.$browser, '^(Chrome|Safari)$')) FROM events GROUP BY event ORDER BY event",
  // conversions to NULL and to 0
  "SELECT properties.mixed, toIntOrNull(properties.mixed), toIntOrZero(properties.mixed), toFloatOrZero(properties.price), toFloat64OrNull(properties.$browser), toInt64OrZero('12x'), toFloatOrZero('2.5') FROM events WHERE toInt(properties.n) < 30 ORDER BY toInt(properties.n)",
  // toUUID: NULL for text that is no UUID
  "SELECT toUUID('61F0C404-5CB3-11E7-907B-A6006AD3DBA0'), toUUID('61f0c4045cb311e7907ba6006ad3dba0'), toUUID('zzzzzzzz-5cb3-11e7-907b-a6006ad3dba0'), toUUID(''), toUUID(NULL)",
  "SELECT uuid, toUUID(toString(uuid)) = uuid, toUUID(properties.plan) FROM events WHERE uuid = toUUID(upper(toString(uuid))) ORDER BY uuid LIMIT 5",
  // math: non-finite answers are NULL
  'SELECT toInt(properties.n) AS n, round(sqrt(n), 6), round(pow(n, 0.5), 6), round(log(n), 6), round(log2(n + 1), 6), round(log10(n + 1), 6), round(exp(n / 100), 6) FROM events WHERE n < 12 ORDER BY n',
  'SELECT sqrt(-1), log(0), log10(0), pow(10, 400), exp(1000), power(2, 10), ln(1), exp2(10), exp10(3), asin(2), acos(-3), round(pi(), 9), round(e(), 9)',
  'SELECT toInt(properties.n) AS n, round(sin(n), 9), round(cos(n), 9), round(tan(n / 10), 9), round(asin(n / 200), 9), round(acos(n / 200), 9), round(atan(n), 9), round(exp2(n / 4), 6), round(exp10(n / 40), 6) FROM events WHERE n < 10 ORDER BY n',
  "SELECT event, round(sum(sqrt(toFloat(properties.price))), 6), round(avg(log(toFloat(properties.price) + 1)), 6) FROM events GROUP BY event ORDER BY event",
];
