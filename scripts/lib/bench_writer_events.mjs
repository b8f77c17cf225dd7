// bench_writer_events.mjs - the CapturedEvent messages the writer benches
// put on the queue (bench_writer.mjs, bench_writer_scale.mjs): 1,000 users,
// ~20 properties each, 1 in 20 an $identify with $set; about 1 kB each.
import { randomUUID } from 'node:crypto';

export const TOKEN = 'phc_bench_writer';

export function message(i, t0) {
  const uuid = randomUUID();
  const user = `user-${i % 1000}`;
  const identify = i % 20 === 0;
  const event = identify ? '$identify' : i % 3 ? '$pageview' : 'button clicked';
  const ts = new Date(t0 + i).toISOString();
  const properties = {
    $lib: 'web', $lib_version: '1.449.2', $browser: 'Firefox', $browser_version: 133, $os: 'Linux',
    $device_type: 'Desktop', $current_url: `https://shop.example.com/p/${i % 97}`, $pathname: `/p/${i % 97}`,
    $host: 'shop.example.com', $referrer: '$direct', $referring_domain: '$direct', $screen_height: 1080,
    $screen_width: 1920, $viewport_height: 960, $viewport_width: 1800, $session_id: randomUUID(),
    $window_id: randomUUID(), $insert_id: Math.random().toString(36).slice(2), price: i % 100, sku: `sku-${i % 500}`,
  };
  if (identify) properties.$set = { email: `${user}@example.com`, plan: i % 40 ? 'free' : 'pro' };
  const data = { uuid, event, properties, timestamp: ts };
  return JSON.stringify({
    uuid, distinct_id: user, ip: '10.1.2.3', data: JSON.stringify(data), now: ts.replace('Z', '000Z'),
    token: TOKEN, event, timestamp: ts,
  });
}
