// tests/bench/page_profile.mjs: where the matrix page's main thread goes while
// a matrix runs (issue 20 item 0: the long tasks that delay the live chart).
// On a sim of its own (prefix tbpp, block 241), a matrix of two TCP runs of S
// seconds (default 15) is opened on its page; Chromium's CPU profiler (CDP
// Profiler) samples the page for the first run; printed: the long tasks and
// the functions with the most self time (url:line), and the total time in
// each script.  Root (the sim).  Nothing here is a timed assertion.
//   TB_BINARY_DIR=build/bench node tests/bench/page_profile.mjs [--duration S]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  Testbedd, eventually, launchChromium, removeDir, sleep, sourceDir, tempDir,
} from '../browser/lib/testbed.mjs';

const args = process.argv.slice(2);
const duration = Number(args.includes('--duration') ? args[args.indexOf('--duration') + 1] : 15);
const SIM = path.join(sourceDir, 'deploy', 'sim', 'sim');
const dir = tempDir('tb-page-profile-');
let simUp = false;
let tbd = null;
let browser = null;
try {
  const simDir = path.join(dir, 'sim');
  execFileSync(SIM, ['up', '--prefix', 'tbpp', '--block', '241', '--dir', simDir], { encoding: 'utf8' });
  simUp = true;
  mkdirSync(path.join(dir, 'tb'), { mode: 0o700 });
  tbd = new Testbedd(path.join(dir, 'tb'), readFileSync(path.join(simDir, 'inventory.yaml'), 'utf8'));
  await tbd.start();
  for (const name of ['left', 'right']) {
    await eventually(async () => (await tbd.get(`/api/v1/hosts/${name}`)).host.state.reachability === 'up', 30_000, `${name} down`);
  }
  browser = await launchChromium(path.join(dir, 'chromium'));
  const page = browser.pages()[0] ?? await browser.newPage();
  await page.goto(`${tbd.base}/`);
  await page.getByLabel('API token').fill(tbd.adminToken);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
  const { matrix } = await tbd.post('/api/v1/matrices', {
    name: 'profile', pairs: [{ client: 'left', server: 'right' }], protocols: ['tcp'], directions: ['forward'],
    duration_s: duration, repeats: 2, concurrency: 'none',
  });
  await page.goto(`${tbd.base}/#/matrices/${matrix.id}`);
  await page.evaluate(() => {
    window.__long = [];
    window.__loaf = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
      .observe({ type: 'longtask', buffered: true });
    // long animation frames, with what ran in them and how long the rendering took
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) {
        window.__loaf.push({
          dur: e.duration, render: e.startTime + e.duration - e.renderStart,
          layout: e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0,
          scripts: e.scripts.map((x) => `${x.invoker} ${x.sourceFunctionName} ${x.sourceURL.split('/').pop()} ${x.duration.toFixed(0)}`),
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await sleep(duration * 1000);
  const { profile } = await cdp.send('Profiler.stop');
  const long = await page.evaluate(() => window.__long);
  const loaf = await page.evaluate(() => window.__loaf);
  console.log(`long animation frames: ${loaf.length}`);
  for (const f of loaf.filter((x) => x.dur > 80)) {
    console.log(`  ${f.dur.toFixed(0)} ms (rendering ${f.render.toFixed(0)}, style+layout ${f.layout.toFixed(0)}): ${f.scripts.join('; ')}`);
  }
  console.log(`long tasks: ${long.length}, over 100 ms: ${long.filter((d) => d > 100).length}, longest ${Math.max(0, ...long).toFixed(0)} ms`);
  // self time per node from the samples
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i + 1] ?? 0)));
  const fn = new Map();
  const file = new Map();
  for (const [id, us] of self) {
    const c = byId.get(id).callFrame;
    const key = `${c.functionName || '(anon)'} ${c.url.split('/').pop()}:${c.lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    const f = c.url.split('/').pop() || c.functionName;
    file.set(f, (file.get(f) ?? 0) + us);
  }
  const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `  ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`).join('\n');
  console.log(`self time by script (of ${duration} s):\n${top(file, 12)}`);
  console.log(`self time by function:\n${top(fn, 25)}`);
} finally {
  if (browser) await browser.close().catch(() => {});
  if (tbd) await tbd.stop();
  if (simUp) execFileSync(SIM, ['down', '--prefix', 'tbpp', '--dir', path.join(dir, 'sim')], { stdio: 'ignore' });
  removeDir(dir);
}
