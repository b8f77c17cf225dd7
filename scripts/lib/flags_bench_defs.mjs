// flags_bench_defs.mjs N - prints a definitions envelope with N flags for
// scripts/bench flags: half plain rollouts, a quarter with person-property
// conditions, a quarter multivariate with payloads. Deterministic.
const n = Number(process.argv[2] || 50);
const flags = [];
for (let i = 0; i < n; i++) {
  const kind = i % 4;
  const f = { id: i + 1, team_id: 1, key: `flag-${i}`, active: true, deleted: false, version: 1, filters: {} };
  if (kind === 0 || kind === 1) {
    f.filters.groups = [{ properties: [], rollout_percentage: (i * 7) % 100 }];
  } else if (kind === 2) {
    f.filters.groups = [{ properties: [
      { key: 'plan', type: 'person', value: ['pro', 'enterprise'], operator: 'exact' },
      { key: 'email', type: 'person', value: 'example.com', operator: 'icontains' },
    ], rollout_percentage: 80 }];
  } else {
    f.filters.groups = [{ properties: [], rollout_percentage: 100 }];
    f.filters.multivariate = { variants: [
      { key: 'control', rollout_percentage: 34 }, { key: 'a', rollout_percentage: 33 }, { key: 'b', rollout_percentage: 33 }] };
    f.filters.payloads = { control: '{"x":0}', a: '{"x":1}', b: '{"x":2}' };
  }
  flags.push(f);
}
process.stdout.write(JSON.stringify({ flags, group_type_mapping: {}, cohorts: {} }));
