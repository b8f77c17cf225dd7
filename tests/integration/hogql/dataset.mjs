// dataset.mjs - the differential corpus's dataset (corpus.mjs re-exports it).

// The dataset: 120 events of 10 people over 10 days, with the property
// shapes a query meets (strings, numbers, booleans, missing keys, JSON
// nulls, a property that is sometimes a number and sometimes a string).
export function dataset() {
  const base = Date.parse('2024-03-01T00:00:00Z');
  const events = ['$pageview', 'signup', 'purchase', '$autocapture'];
  const browsers = ['Chrome', 'Firefox', 'Safari', null, undefined];
  const out = [];
  for (let i = 0; i < 120; i++) {
    const properties = { n: i, price: (i % 17) * 1.5, plan: i % 4 === 0 ? 'pro' : i % 4 === 1 ? 'free' : undefined };
    const b = browsers[i % 5];
    if (b !== undefined) properties.$browser = b;
    if (i % 6 === 0) properties.flag = i % 12 === 0;
    if (i % 7 === 0) properties.mixed = i % 14 === 0 ? 'x7' : i;
    if (i % 9 === 0) properties.label = `It's "${i}"`;
    out.push({
      uuid: `0190b6e4-${String(1000 + i).padStart(4, '0')}-7000-8000-${String(i).padStart(12, '0')}`,
      distinctId: `user-${i % 10}`,
      event: events[i % 4],
      // spread over 10 days and every hour, seconds included
      timestamp: new Date(base + i * (2 * 3600 + 17 * 60 + 13) * 1000),
      properties,
    });
  }
  return out;
}
