// netperf's request/response test (the tool "netperf-rr", issue 20 item 6) on
// a run's page, in Debian's Chromium (headless, playwright-core) against the
// real testbedd and the simulated testbed (deploy/sim, prefix tbrr, block 186).
//
// netperf is not packaged in Debian 12, so nothing real can run it here: the
// test puts a stand-in (data/netperf-standin.py, said so there) as `netperf`
// and `netserver` on left and right (a tmpfs on /usr/local/bin in their mount
// namespaces, gone with the sim).  It exchanges real requests and responses
// over the data plane and prints netperf's omni line.  Everything else is
// testbedd's own: the tool's detection (`netperf -V`), the command lines
// (`-t TCP_RR ... -- -o RR_SELECTORS -r 64,64`), the listen check, the
// parser, the stored summary.client.rr and the page's "transactions" line,
// which must show the stored figures.  A matrix with netperf-rr and reverse
// is refused, naming tool.  A screenshot goes to
// $TB_BINARY_DIR/screenshots/run-netperf-rr.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bed, eventually, login, shoot } from './lib/testbed.mjs';

const PREFIX = 'tbrr';
const BLOCK = '186';
const STANDIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'data', 'netperf-standin.py');
const SPEC = {
  name: 'rr',
  pairs: [{ client: 'left', server: 'right' }],
  duration_s: 2,
  tool: 'netperf-rr',
  iperf: { length: 64 },
};
const bed = new Bed('run-netperf-rr');
const pageErrors = bed.errors;
let tbd;
let page;

/** The stand-in as netperf and netserver in host's mount namespace (its sshd's). */
function installStandin(host) {
  const line = readFileSync(path.join(bed.simDir, 'pids'), 'utf8').split('\n')
    .find((l) => l.split(' ')[2] === `sshd-${host}-ubuntu`);
  assert.ok(line, `no sshd-${host}-ubuntu in the sim's pids`);
  const pid = line.split(' ')[0];
  execFileSync('nsenter', ['-t', pid, '-m', '--', 'sh', '-ec',
    'mount -t tmpfs -o size=1m,mode=0755 tbnetperf /usr/local/bin; '
    + 'for n in netperf netserver; do cp "$1" /usr/local/bin/$n; chmod 0755 /usr/local/bin/$n; done', 'sh', STANDIN]);
}

before(async () => {
  tbd = await bed.startTestbedd(bed.upSim(PREFIX, BLOCK));
  await bed.hostsUp();
  installStandin('left');
  installStandin('right');
  page = await bed.openPage();
  await page.goto(`${tbd.base}/`);
  await login(page, tbd.adminToken);
});

after(() => bed.close());

test('a netperf-rr run stores its transactions and latency, and its page shows them', { timeout: 150_000 }, async () => {
  const bad = await tbd.call('POST', '/api/v1/matrices/plan', { ...SPEC, directions: ['forward', 'reverse'] });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.field, 'tool');
  assert.match(bad.json.error.message, /no reverse/);

  const { matrix } = await tbd.post('/api/v1/matrices', SPEC);
  let m;
  await eventually(async () => {
    ({ matrix: m } = await tbd.get(`/api/v1/matrices/${matrix.id}`));
    return ['succeeded', 'failed'].includes(m.state);
  }, 90_000, `matrix ${matrix.id} did not end`);
  const { run } = await tbd.get(`/api/v1/runs/${m.runs[0].id}`);
  assert.equal(m.state, 'succeeded', `${run.error_class}: ${run.error_message}`);
  assert.equal(run.tool, 'netperf-rr');
  assert.match(run.client_command, /netperf -H 198\.19\.20\.2 -p \d+ -t TCP_RR -l 2 .* -o THROUGHPUT,.*P99_LATENCY.* -r 64,64/);
  const rr = run.summary.client.rr;
  assert.ok(rr.transactions_per_s > 100, `transactions/s ${rr.transactions_per_s}`);
  assert.ok(rr.p50_latency_us > 0 && rr.p50_latency_us <= rr.p99_latency_us, JSON.stringify(rr));
  assert.equal(rr.request_bytes, 64);

  await page.goto(`${tbd.base}/#/runs/${run.id}`);
  await page.locator('.run-page .rr').waitFor();
  const text = (await page.locator('.run-page .rr').textContent()).trim();
  assert.ok(text.startsWith(`${rr.transactions_per_s.toFixed(1)} /s; latency mean ${rr.mean_latency_us.toFixed(0)} µs, p50 ${rr.p50_latency_us.toFixed(0)} µs`), text);
  assert.match(text, /p99 \d+ µs$/);
  await shoot(page, 'run-netperf-rr');
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource|net::ERR_|EventSource/.test(e)), []);
});
