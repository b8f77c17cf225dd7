// insights.test.mjs - insight endpoints (TrendsQuery) on both pairs, end
// to end: posthog-node captures a fixed set of events through ingest and
// the writer; the project is on Europe/Berlin, whose clocks go forward on
// 2024-03-31 (a 23-hour day), and a week of the range crosses into April.
// Every number below is worked out by hand from the events in the table.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';
import SwaggerParser from '@apidevtools/swagger-parser';

// [UTC time, event, distinct id, $browser, price]; Berlin is UTC+1 until
// 2024-03-31 01:00 UTC, then UTC+2.
const EVENTS = [
  ['2024-03-27T22:59:59Z', '$pageview', 'u3', 'Chrome', 1], // Berlin 27 Mar 23:59:59: before the range
  ['2024-03-27T23:00:00Z', '$pageview', 'u3', null, 2], // 28 Mar 00:00
  ['2024-03-30T22:59:59Z', '$pageview', 'u1', 'Chrome', 10], // 30 Mar 23:59:59
  ['2024-03-30T23:00:00Z', '$pageview', 'u1', 'Chrome', 20], // 31 Mar 00:00
  ['2024-03-31T10:00:00Z', '$pageview', 'u3', 'Chrome', 6], // 31 Mar 12:00 (summer time)
  ['2024-03-31T21:59:59Z', '$pageview', 'u2', 'Firefox', 5], // 31 Mar 23:59:59
  ['2024-03-31T22:00:00Z', 'signup', 'u2', 'Firefox', 7], // 1 Apr 00:00
  ['2024-04-03T21:59:59Z', '$pageview', 'u1', 'Safari', 3], // 3 Apr 23:59:59
  ['2024-04-03T22:00:00Z', '$pageview', 'u1', 'Chrome', 4], // 4 Apr 00:00: after the range
];
const DAYS = ['2024-03-28', '2024-03-29', '2024-03-30', '2024-03-31', '2024-04-01', '2024-04-02', '2024-04-03'];
const LABELS = ['28-Mar-2024', '29-Mar-2024', '30-Mar-2024', '31-Mar-2024', '1-Apr-2024', '2-Apr-2024', '3-Apr-2024'];
const RANGE = { date_from: '2024-03-28', date_to: '2024-04-03' };

for (const pair of PAIRS) describe(`insight endpoints: ${pairName(pair)}`, () => {
  let s, E;
  const trends = (query) => ({ kind: 'TrendsQuery', dateRange: RANGE, interval: 'day', ...query });
  const make = async (name, query) => {
    const r = await s.call('POST', E, { name, query });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  };
  const run = async (name, body = {}) => {
    const r = await s.call('POST', `${E}${name}/run`, body);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json;
  };

  before(async () => {
    s = await startPair(pair, { apiEnv: { MATERIALIZE_CHECK: '200ms' } });
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
    const r = await s.call('PATCH', `/api/projects/${s.boot.project_id}/`, { timezone: 'Europe/Berlin' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    for (const [ts, event, distinctId, browser, price] of EVENTS) {
      const properties = { price };
      if (browser) properties.$browser = browser;
      client.capture({ distinctId, event, timestamp: new Date(ts), properties });
    }
    await client.shutdown();
    await within(30000, 'the events stored', async () => (await s.store.distinct()) >= EVENTS.length);
  });

  after(async () => {
    await s?.stop();
  });

  test('total per day across the spring-forward day, PostHog\'s series shape', async () => {
    await make('pageviews', trends({ series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview' }] }));
    const r = await run('pageviews');
    assert.equal(r.results.length, 1);
    const [one] = r.results;
    assert.deepEqual(one.data, [1, 0, 1, 3, 0, 0, 1]);
    assert.deepEqual(one.days, DAYS);
    assert.deepEqual(one.labels, LABELS);
    assert.equal(one.count, 6);
    assert.equal(one.label, '$pageview');
    assert.equal(one.breakdown_value, undefined);
    assert.equal(one.action.id, '$pageview');
    assert.equal(one.action.type, 'events');
    assert.equal(one.action.order, 0);
    assert.equal(one.action.math, 'total');
    assert.deepEqual(one.action.days, DAYS);
    assert.equal(r.timezone, 'Europe/Berlin');
    const ep = (await s.call('GET', `${E}pageviews/`)).json;
    assert.deepEqual(ep.materialization, { can_materialize: true, reason: null });
    assert.equal(r.is_cached, false);
    assert.equal(r.hasMore, false);
    assert.equal(r.endpoint_version, 1);
    const again = await run('pageviews');
    assert.equal(again.is_cached, true);
    assert.deepEqual(again.results, r.results);
    // date_from "all": from the project's first event's day (27 Mar in Berlin)
    const all = (await run('pageviews', { variables: { date_from: 'all' } })).results[0];
    assert.deepEqual(all.days, ['2024-03-27', ...DAYS]);
    assert.deepEqual(all.data, [1, 1, 0, 1, 3, 0, 0, 1]);
  });

  test('dau, and sum of a property broken down by $browser with a limit and Other', async () => {
    await make('daily-users', trends({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }] }));
    assert.deepEqual((await run('daily-users')).results[0].data, [1, 0, 1, 3, 0, 0, 1]);
    // trailing windows: u3's pageview of 27 Mar (before the range) counts on 28 Mar
    await make('active', trends({ series: [
      { kind: 'EventsNode', event: '$pageview', math: 'weekly_active' },
      { kind: 'EventsNode', event: '$pageview', math: 'monthly_active' },
    ] }));
    const active = (await run('active')).results;
    assert.deepEqual(active.map((x) => [x.action.math, x.data]), [
      ['weekly_active', [1, 1, 2, 3, 3, 3, 3]],
      ['monthly_active', [1, 1, 2, 3, 3, 3, 3]],
    ]);
    await make('active-by-browser', trends({
      series: [{ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }],
      breakdownFilter: { breakdown: '$browser' },
    }));
    // Chrome: u3 27, 31; u1 30, 31. Firefox: u2 31. Safari: u1 3 Apr. none: u3 28.
    assert.deepEqual((await run('active-by-browser')).results.map((x) => [x.breakdown_value, x.data]), [
      ['Chrome', [1, 1, 2, 2, 2, 2, 2]], // by count: 12, 7, 4, 1
      [null, [1, 1, 1, 1, 1, 1, 1]],
      ['Firefox', [0, 0, 0, 1, 1, 1, 1]],
      ['Safari', [0, 0, 0, 0, 0, 0, 1]],
    ]);

    await make('spend-by-browser', trends({
      series: [{ kind: 'EventsNode', event: null, math: 'sum', math_property: 'price' }],
      breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
    }));
    let r = await run('spend-by-browser');
    assert.deepEqual(r.results.map((x) => [x.breakdown_value, x.label, x.count, x.data]), [
      ['Chrome', 'Chrome', 36, [0, 0, 10, 26, 0, 0, 0]],
      ['Firefox', 'Firefox', 12, [0, 0, 0, 5, 7, 0, 0]],
      ['Safari', 'Safari', 3, [0, 0, 0, 0, 0, 0, 3]],
      [null, 'null', 2, [2, 0, 0, 0, 0, 0, 0]],
    ]);
    assert.equal(r.hasMore, false);
    assert.equal(r.results[0].action.id, null);
    assert.equal(r.results[0].action.name, 'All events');

    await make('top-two-browsers', trends({
      series: [{ kind: 'EventsNode', event: null, math: 'sum', math_property: 'price' }],
      breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 },
    }));
    r = await run('top-two-browsers');
    assert.deepEqual(r.results.map((x) => [x.breakdown_value, x.count, x.data]), [
      ['Chrome', 36, [0, 0, 10, 26, 0, 0, 0]],
      ['Firefox', 12, [0, 0, 0, 5, 7, 0, 0]],
      ['Other', 5, [2, 0, 0, 0, 0, 0, 3]],
    ]);
    assert.equal(r.hasMore, true);

    // a breakdown variable filters to its value; date_to narrows the range
    r = await run('spend-by-browser', { variables: { $browser: 'Chrome', date_to: '2024-03-31' } });
    assert.deepEqual(r.results.map((x) => [x.breakdown_value, x.data]), [['Chrome', [0, 0, 10, 26]]]);
    r = await s.call('POST', `${E}spend-by-browser/run`, { variables: { $os: 'Mac', a: 1 } });
    assert.equal(r.status, 400);
    assert.equal(r.json.detail, 'Unknown variable(s): $os, a');

    // the OpenAPI document lists the insight's variables
    const doc = (await s.call('GET', `${E}spend-by-browser/openapi.json`)).json;
    await SwaggerParser.validate(structuredClone(doc));
    assert.deepEqual(Object.keys(doc.components.schemas.Variables.properties), ['$browser', 'date_from', 'date_to']);
    assert.equal(doc.components.schemas.EndpointRunRequest.required, undefined);
  });

  test('median and p90 of a property, interpolated between the nearest values', async () => {
    await make('price-quantiles', trends({ series: [
      { kind: 'EventsNode', event: '$pageview', math: 'median', math_property: 'price' },
      { kind: 'EventsNode', event: '$pageview', math: 'p90', math_property: 'price' },
    ] }));
    const r = (await run('price-quantiles')).results;
    // 31 Mar (Berlin) has pageviews priced 20, 6 and 5: sorted 5, 6, 20;
    // median at position 1 = 6; p90 at 0.9 * 2 = 1.8: 6 + (20 - 6) * 0.8
    assert.deepEqual(r.map((x) => [x.action.math, x.action.math_property, x.data, x.count]), [
      ['median', 'price', [2, 0, 10, 6, 0, 0, 3], 21],
      ['p90', 'price', [2, 0, 10, 17.200000000000003, 0, 0, 3], 32.2],
    ]);
  });

  test('weeks from Sunday, clipped to the range; hours of the 23-hour day', async () => {
    await make('weekly', trends({ interval: 'week', series: [{ kind: 'EventsNode', event: '$pageview' }] }));
    let [w] = (await run('weekly')).results;
    assert.deepEqual(w.days, ['2024-03-24', '2024-03-31']);
    assert.deepEqual(w.labels, ['28\u201330 Mar', '31-Mar \u2013 3-Apr']);
    assert.deepEqual(w.data, [2, 4]);

    await make('hourly', trends({ interval: 'hour', dateRange: { date_from: '2024-03-31', date_to: '2024-03-31' }, series: [{ kind: 'EventsNode', event: '$pageview' }] }));
    [w] = (await run('hourly')).results;
    assert.equal(w.data.length, 23); // 02:00 never happened
    assert.deepEqual(w.days.slice(0, 3), ['2024-03-31 00:00:00', '2024-03-31 01:00:00', '2024-03-31 03:00:00']);
    assert.deepEqual(w.labels.slice(0, 3), ['31-Mar 00:00', '31-Mar 01:00', '31-Mar 03:00']);
    const hits = w.data.flatMap((v, i) => (v ? [[w.days[i], v]] : []));
    assert.deepEqual(hits, [['2024-03-31 00:00:00', 1], ['2024-03-31 12:00:00', 1], ['2024-03-31 23:00:00', 1]]);
  });

  test('retention, recurring and first time, by day across the clock change', async () => {
    const retention = (retentionType) => ({
      kind: 'RetentionQuery',
      dateRange: { date_to: '2024-04-03' },
      retentionFilter: { retentionType, totalIntervals: 7, period: 'Day', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } },
    });
    await make('recurring', retention('retention_recurring'));
    let r = await run('recurring');
    // pageview days in Berlin: u3 28 and 31 Mar; u1 30, 31 Mar and 3 Apr; u2 31 Mar
    assert.deepEqual(r.results.map((c) => c.values.map((v) => v.count)), [
      [1, 0, 0, 1, 0, 0, 0],
      [0, 0, 0, 0, 0, 0],
      [1, 1, 0, 0, 1],
      [3, 0, 0, 1],
      [0, 0, 0],
      [0, 0],
      [1],
    ]);
    assert.deepEqual(r.results.map((c) => c.label), ['Day 0', 'Day 1', 'Day 2', 'Day 3', 'Day 4', 'Day 5', 'Day 6']);
    assert.equal(r.results[0].date, '2024-03-28T00:00:00+01:00');
    assert.equal(r.results[3].date, '2024-03-31T00:00:00+01:00');
    assert.equal(r.results[4].date, '2024-04-01T00:00:00+02:00');

    // first time: u3's first pageview (27 Mar) is before the range, so u3 is in no cohort
    await make('first-time', retention('retention_first_time'));
    r = await run('first-time');
    assert.deepEqual(r.results.map((c) => c.values.map((v) => v.count)), [
      [0, 0, 0, 0, 0, 0, 0],
      [0, 0, 0, 0, 0, 0],
      [1, 1, 0, 0, 1],
      [1, 0, 0, 0],
      [0, 0, 0],
      [0, 0],
      [0],
    ]);
    // by $browser: each value's retention over its own events, ranked by
    // cohort size (Chrome 3, then the ties by value); u3's Chrome pageview of
    // 27 Mar is before the range, u1's of 4 Apr after it
    await make('ret-browser', { ...retention('retention_recurring'), breakdownFilter: { breakdown: '$browser' } });
    r = await run('ret-browser');
    const tri = (res, b) => res.filter((c) => c.breakdown_value === b).map((c) => c.values.map((v) => v.count));
    assert.deepEqual([...new Set(r.results.map((c) => c.breakdown_value))], ['Chrome', null, 'Firefox', 'Safari']);
    assert.equal(r.results.length, 28);
    assert.deepEqual(tri(r.results, 'Chrome'), [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0], [0, 0], [0]]);
    assert.deepEqual(tri(r.results, null)[0], [1, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(tri(r.results, 'Firefox')[3], [1, 0, 0, 0]);
    assert.deepEqual(tri(r.results, 'Safari')[6], [1]);
    assert.equal(r.hasMore, false);
    // the variable: that value's triangle only, the same numbers
    const chrome = await run('ret-browser', { variables: { $browser: 'Chrome' } });
    assert.deepEqual(chrome.results, r.results.filter((c) => c.breakdown_value === 'Chrome'));
    await make('ret-top', { ...retention('retention_first_time'), breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } });
    r = await run('ret-top');
    // first time per value: every value has one person, so the tie goes by
    // value and null ('') comes first; the rest are past the limit
    assert.deepEqual(tri(r.results, null), [[1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0], [0, 0], [0]]);
    assert.equal(r.results.length, 7);
    assert.equal(r.hasMore, true);
    // u3's first Chrome pageview (27 Mar) is before the range: u1 alone, 30 Mar and back on 31 Mar
    r = await run('ret-top', { variables: { $browser: 'Chrome' } });
    assert.deepEqual(tri(r.results, 'Chrome'), [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0], [0, 0], [0]]);
    assert.equal(r.hasMore, false);

    // date_to as a variable moves the cohorts
    r = await run('recurring', { variables: { date_to: '2024-03-31' } });
    assert.equal(r.results.length, 7);
    assert.equal(r.results[6].date, '2024-03-31T00:00:00+01:00');
    assert.deepEqual(r.results[6].values, [{ count: 3 }]);
  });

  test('materialized insights answer as the queries do, for every breakdown value', async () => {
    const status = async (name) => (await s.call('GET', `${E}${name}/materialization_status`)).json;
    const both = async (name, variables) => {
      const mat = await s.call('POST', `${E}${name}/run`, { variables });
      const direct = await s.call('POST', `${E}${name}/run`, { variables, refresh: 'direct' });
      assert.equal(mat.status, 200, JSON.stringify(mat.json));
      assert.equal(direct.status, 200, JSON.stringify(direct.json));
      assert.equal(mat.json.endpoint_materialized, true, `${name} ${JSON.stringify(variables)}`);
      assert.equal(direct.json.endpoint_materialized, undefined);
      assert.deepEqual(mat.json.results, direct.json.results, `${name} ${JSON.stringify(variables)}`);
      return mat.json.results;
    };
    const retention = {
      kind: 'RetentionQuery',
      dateRange: { date_to: '2024-04-03' },
      retentionFilter: { retentionType: 'retention_recurring', totalIntervals: 7, period: 'Day', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } },
    };
    const made = [
      ['mat-spend', trends({ series: [{ kind: 'EventsNode', event: null, math: 'sum', math_property: 'price' }, { kind: 'EventsNode', event: '$pageview', math: 'median', math_property: 'price' }], breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } })],
      ['mat-active', trends({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }], breakdownFilter: { breakdown: '$browser' } })],
      ['mat-all', trends({ dateRange: { date_from: 'all', date_to: '2024-04-03' }, series: [{ kind: 'EventsNode', event: '$pageview' }] })],
      ['mat-retention', retention],
      ['mat-ret-browser', { ...retention, breakdownFilter: { breakdown: '$browser' } }],
      ['mat-two', trends({ series: [{ kind: 'EventsNode', event: null }], breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }, { property: 'price', type: 'event' }] } })],
    ];
    for (const [name, query] of made) {
      const r = await s.call('POST', E, { name, query, is_materialized: true, sync_frequency: '1hour' });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    for (const [name] of made)
      await within(20000, `${name} built`, async () => (await status(name)).status === 'Completed');

    // every breakdown value, a value with no events, and no value (null)
    for (const name of ['mat-spend', 'mat-active']) {
      for (const $browser of ['Chrome', 'Firefox', 'Safari', 'Opera', null]) await both(name, { $browser });
    }
    assert.deepEqual((await both('mat-spend', { $browser: 'Chrome' })).map((x) => [x.breakdown_value, x.data]), [
      ['Chrome', [0, 0, 10, 26, 0, 0, 0]],
      ['Chrome', [0, 0, 10, 13, 0, 0, 0]], // median of 20 and 6 on 31 Mar
    ]);
    assert.deepEqual((await both('mat-active', { $browser: 'Chrome' }))[0].data, [1, 1, 2, 2, 2, 2, 2]);
    for (const $browser of ['Chrome', 'Firefox', 'Safari', 'Opera', null]) await both('mat-ret-browser', { $browser });
    assert.deepEqual((await both('mat-ret-browser', { $browser: 'Chrome' }))[2].values, [{ count: 1 }, { count: 1 }, { count: 0 }, { count: 0 }, { count: 0 }]);
    // two breakdowns: both values select one key
    for (const [$browser, price] of [['Chrome', 20], ['Chrome', 6], ['Firefox', 7], [null, 2], ['Chrome', 7]]) await both('mat-two', { $browser, price });
    assert.deepEqual((await both('mat-two', { $browser: 'Firefox', price: 7 })).map((x) => [x.breakdown_value, x.data]), [[['Firefox', '7'], [0, 0, 0, 0, 1, 0, 0]]]);
    const r0 = await s.call('POST', `${E}mat-two/run`, { variables: { $browser: 'Chrome' } });
    assert.equal(r0.status, 400, JSON.stringify(r0.json));
    assert.equal(r0.json.detail, "Required variable 'price' not provided");
    assert.deepEqual((await both('mat-all', undefined))[0].data, [1, 1, 0, 1, 3, 0, 0, 1]);
    const cohorts = await both('mat-retention', undefined);
    assert.deepEqual(cohorts[3].values.map((v) => v.count), [3, 0, 0, 1]);

    // the rules of a materialized insight
    let r = await s.call('POST', `${E}mat-spend/run`, {});
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.detail, "Required variable '$browser' not provided");
    r = await s.call('POST', `${E}mat-spend/run`, { variables: { $browser: 'Chrome', date_to: '2024-03-31' } });
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.match(r.json.detail, /^Date variables \(date_to\) cannot be used with a materialized endpoint/);
    r = await s.call('POST', `${E}mat-retention/run`, { variables: { date_to: '2024-03-31' } });
    assert.equal(r.status, 400, JSON.stringify(r.json));
    // the OpenAPI document says so: the breakdown only, required
    const doc = (await s.call('GET', `${E}mat-spend/openapi.json`)).json;
    await SwaggerParser.validate(structuredClone(doc));
    assert.deepEqual(Object.keys(doc.components.schemas.Variables.properties), ['$browser']);
    assert.deepEqual(doc.components.schemas.Variables.required, ['$browser']);
    assert.deepEqual(doc.components.schemas.EndpointRunRequest.required, ['variables']);
  });

  test('filters, and what an insight query refuses', async () => {
    await make('firefox-or-safari', trends({
      series: [{ kind: 'EventsNode', event: '$pageview', properties: [{ key: '$browser', value: ['Firefox', 'Safari'], operator: 'exact', type: 'event' }] }],
      properties: [{ key: 'price', value: 4, operator: 'gt' }],
    }));
    assert.deepEqual((await run('firefox-or-safari')).results[0].data, [0, 0, 0, 1, 0, 0, 0]);
    for (const [query, detail] of [
      [trends({ series: [] }), /series/],
      [trends({ series: [{ kind: 'EventsNode', event: 'x', math: 'weird' }] }), /math 'weird'/],
      [trends({ series: [{ kind: 'EventsNode', event: 'x', math: ['total'] }] }), /math '\?' is not supported/],
      [trends({ series: [{ kind: 'EventsNode', event: 'x', math: 'sum' }] }), /math_property/],
      [trends({ interval: 'decade', series: [{ kind: 'EventsNode', event: 'x' }] }), /interval/],
      [trends({ interval: 'week', series: [{ kind: 'EventsNode', event: 'x', math: 'weekly_active' }] }), /day interval/],
      [trends({ dateRange: { date_from: 'yesterday-ish' }, series: [{ kind: 'EventsNode', event: 'x' }] }), /date_from/],
      [trends({ series: [{ kind: 'EventsNode', event: 'x', properties: [{ key: 'a', value: 'b', operator: 'regex' }] }] }), /regex/],
    ]) {
      const r = await s.call('POST', E, { name: `bad-${Math.random().toString(36).slice(2, 8)}`, query });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.match(r.json.detail, detail);
    }
  });
});
