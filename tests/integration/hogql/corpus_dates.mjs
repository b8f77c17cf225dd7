// Dates (part D of issue 28): every date function the compiler gained, run on
// both stores over the shared dataset (a UTC project; zones other than UTC are
// tested in endpoints_timezone.test.mjs). Each query orders its rows fully.
export const queries = [
  'SELECT toStartOfQuarter(timestamp) AS q, toQuarter(timestamp) AS n, count() FROM events GROUP BY q, n ORDER BY q, n',
  'SELECT toYYYYMM(timestamp) AS m, toYYYYMMDD(timestamp) AS d, count() FROM events GROUP BY m, d ORDER BY m, d',
  'SELECT toDayOfYear(timestamp) AS y, toSecond(timestamp) AS s, count() FROM events GROUP BY y, s ORDER BY y, s',
  'SELECT toStartOfFifteenMinutes(timestamp) AS a, toStartOfTenMinutes(timestamp) AS b, toStartOfFiveMinutes(timestamp) AS c, count() FROM events GROUP BY a, b, c ORDER BY a, b, c',
  "SELECT dateTrunc('month', timestamp) AS m, date_trunc('week', timestamp) AS w, dateTrunc('hour', timestamp) AS h, count() FROM events GROUP BY m, w, h ORDER BY m, w, h",
  'SELECT toStartOfInterval(timestamp, INTERVAL 1 day) AS d, toStartOfInterval(timestamp, toIntervalMonth(1)) AS m, count() FROM events GROUP BY d, m ORDER BY d, m',
  'SELECT addDays(timestamp, 1) AS a, subtractHours(timestamp, 2) AS b, addWeeks(toDate(timestamp), 1) AS c, addMinutes(timestamp, 30) AS e FROM events ORDER BY a, b, c, e',
  'SELECT addMonths(toDate(timestamp), 1) AS a, subtractMonths(timestamp, 1) AS b, addQuarters(toDate(timestamp), 1) AS c, addYears(timestamp, 1) AS d FROM events ORDER BY a, b, c, d',
  "SELECT addMonths(toDate('2024-01-31'), 1) AS a, subtractMonths(toDate('2024-03-31'), 1) AS b, addYears(toDate('2024-02-29'), 1) AS c, addMonths(toDateTime('2024-05-31 10:00:00'), -1) AS d",
  'SELECT timestamp + toIntervalDay(2) AS a, timestamp - toIntervalHour(5) AS b, dateAdd(timestamp, INTERVAL 3 day) AS c, dateSub(timestamp, INTERVAL 1 month) AS d FROM events ORDER BY a, b, c, d',
  "SELECT formatDateTime(timestamp, '%Y-%m-%d %H:%i:%S') AS a, formatDateTime(timestamp, '%F %T %y %e %j %u %w %I %p %R %D %%') AS b FROM events ORDER BY a, b",
  "SELECT parseDateTimeBestEffort('2024-03-05T10:11:12.345+02:00') AS a, parseDateTimeBestEffortOrNull('2024-03-05 10:11') AS b, parseDateTimeBestEffortOrNull('2024-03-05T10:11:12Z') AS c",
  "SELECT parseDateTimeBestEffort('2024-03-05 10:11:12') AS a, parseDateTimeBestEffortOrNull('nope') AS b, parseDateTimeBestEffortOrZero('nope') AS c, parseDateTimeBestEffortOrNull('2024-03-05T10:11:12Z') AS d",
  'SELECT toDayOfWeek(timestamp) AS a, toDayOfWeek(timestamp, 1) AS b, toDayOfWeek(timestamp, 2) AS c, toDayOfWeek(timestamp, 3) AS d, count() FROM events GROUP BY a, b, c, d ORDER BY a, b, c, d',
  "SELECT toStartOfDay(timestamp, 'Asia/Kolkata') AS d, toDate(timestamp, 'America/New_York') AS n, count() FROM events GROUP BY d, n ORDER BY d, n",
  "SELECT toHour(toTimeZone(timestamp, 'Asia/Kolkata')) AS h, toMinute(toTimeZone(timestamp, 'Asia/Kolkata')) AS m, count() FROM events GROUP BY h, m ORDER BY h, m",
  "SELECT toDateTime('2024-03-10 01:30:00', 'America/New_York') AS a, toDateTime('2024-03-10 12:00:00', 'Asia/Tokyo') AS b",
  "SELECT toISOWeek(timestamp) AS w, toISOYear(timestamp) AS y, count() FROM events GROUP BY w, y ORDER BY w, y",
  "SELECT toISOWeek(toDate('2024-12-30')) AS a, toISOYear(toDate('2024-12-30')) AS b, toISOWeek(toDate('2021-01-03')) AS c, toISOYear(toDate('2021-01-03')) AS d",
  "SELECT toUnixTimestamp('2024-01-01 00:00:00', 'Asia/Tokyo') AS a, toUnixTimestamp('2024-01-01 00:00:00') AS b, toUnixTimestamp(toDateTime('2024-01-01 00:00:00', 'America/New_York')) AS c",
  'SELECT yesterday() < today() AS a, toDate(now()) = today() AS b, assumeNotNull(event) AS e FROM events ORDER BY e LIMIT 1',
];
