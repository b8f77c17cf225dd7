// api_visible.mjs API_URL FLAGS_URL KEY PROJECT_ID TOKEN [N] [FLAG_KEY] - how long a flag
// change takes from the api's answer to the flags service serving it.
//
// N times: PATCH one flag's rollout between 0 % and 100 % over the api, then
// ask POST /flags?v=2 back to back (a new request as soon as the last one
// answered) until the flag's value follows. Prints one JSON line with p50,
// p99 and max in milliseconds, counted from the PATCH's answer (the commit)
// to the first /flags answer showing the change.
const [api, flags, key, project, token, nArg, flagKeyArg] = process.argv.slice(2);
const flagKey = flagKeyArg || 'visible-probe'; /* one per run: keys are unique in a project */
const n = Number(nArg || 200);
const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

async function flagValue() {
  const r = await fetch(`${flags}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token, distinct_id: 'probe' }) });
  const j = await r.json();
  return j.flags?.[flagKey]?.enabled;
}

const made = await fetch(`${api}/api/projects/${project}/feature_flags/`, {
  method: 'POST', headers: auth,
  body: JSON.stringify({ key: flagKey, filters: { groups: [{ properties: [], rollout_percentage: 0 }] } }),
});
const flag = await made.json();
if (made.status !== 201) throw new Error(`create: ${made.status} ${JSON.stringify(flag)}`);
while ((await flagValue()) !== false) await new Promise((r) => setTimeout(r, 10));

const times = [];
for (let i = 0; i < n; i++) {
  const on = i % 2 === 0;
  const r = await fetch(`${api}/api/projects/${project}/feature_flags/${flag.id}/`, {
    method: 'PATCH', headers: auth,
    body: JSON.stringify({ filters: { groups: [{ properties: [], rollout_percentage: on ? 100 : 0 }] } }),
  });
  if (r.status !== 200) throw new Error(`patch: ${r.status} ${await r.text()}`);
  const t0 = performance.now();
  await r.arrayBuffer();
  for (;;) {
    if ((await flagValue()) === on) break;
    if (performance.now() - t0 > 5000) throw new Error('not visible within 5 s');
  }
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
console.log(JSON.stringify({ n, p50: at(0.5).toFixed(2), p99: at(0.99).toFixed(2), max: times[times.length - 1].toFixed(2) }));
