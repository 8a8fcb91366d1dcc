// testbed.mjs - what the browser tests run against: the real testbedd, a real
// sshd on 127.0.0.1 and Debian's Chromium driven by playwright-core.
//
// Every process started here is remembered by its pid and ended by that pid
// (with the pids of its own children, found in /proc: sshd's per-connection
// processes call setsid(), so a process group would miss them).
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import {
  mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, rmSync, openSync, closeSync,
  readdirSync, unlinkSync, copyFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const sourceDir = process.env.TB_SOURCE_DIR ?? path.resolve(here, '..', '..', '..');
export const binaryDir = process.env.TB_BINARY_DIR;
export const CHROMIUM = process.env.TB_CHROMIUM ?? '/usr/bin/chromium';
// --host-resolver-rules: every name but localhost fails inside Chromium without
// a DNS query (the flags above still let it look up update.googleapis.com and
// accounts.google.com through the machine's resolver); the pages are served on
// 127.0.0.1, which is kept too.  deploy/check watches the uplink for such leaks.
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1'];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * GET base/api/v1/events with headers (a token's or a session's), read in
 * the background once its first event came: es.text is what arrived,
 * es.ended turns true when the server ends it, es.done resolves then,
 * es.abort() drops it.  What names it in a failure.
 */
export async function eventStream(base, headers, what = 'the stream') {
  const ctl = new AbortController();
  const res = await fetch(`${base}/api/v1/events`, {
    headers: { Accept: 'text/event-stream', ...headers }, signal: ctl.signal,
  });
  assert.equal(res.status, 200, `${what}: status ${res.status}`);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const es = { text: '', ended: false, abort: () => ctl.abort() };
  es.done = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true }));
      if (done) { es.ended = true; return; }
      es.text += dec.decode(value, { stream: true });
    }
  })();
  await eventually(() => es.text.includes('event: stream'), 20_000, `${what} did not start`);
  return es;
}

/** Poll fn until it returns a truthy value; fail with what() after ms. */
export async function eventually(fn, ms, what) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      const why = typeof what === 'function' ? await what(last) : what;
      throw new Error(`${why} (waited ${ms} ms; last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await sleep(100);
  }
}

export async function need(name) {
  try {
    return await import(name);
  } catch (err) {
    throw new Error(`cannot load ${name} (${err.code ?? err.message}); ` +
      `install the test dependencies with: npm ci --prefix ${path.join(sourceDir, 'tests')}`);
  }
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** The pids of every descendant of pid (children first found, then theirs). */
function descendants(pid) {
  const parent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch { /* gone meanwhile */ }
  }
  const out = [];
  const walk = (p) => {
    for (const [child, pp] of parent) if (pp === p) { out.push(child); walk(child); }
  };
  walk(pid);
  return out;
}

/** The state letter of pid from /proc/pid/stat (R, S, D, T, Z...), null when gone. */
function procState(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2];
  } catch {
    return null;
  }
}

/**
 * SIGSTOP pid and every descendant, round after round until no new one
 * appears: each is waited for until it is stopped (a fork under way ends
 * first, and its child shows in the next round).  sshd forks per
 * connection, and that child forks the session after auth: a child forked
 * after a single listing would live on, serving the connection it holds.
 * Returns the descendants (not pid).
 */
async function freezeTree(pid) {
  const stopped = new Set();
  const stop = async (p) => {
    stopped.add(p);
    try { process.kill(p, 'SIGSTOP'); } catch { return; }
    for (let i = 0; i < 100 && !['T', 't', 'Z', null].includes(procState(p)); i++) await sleep(2);
  };
  await stop(pid);
  for (let round = 0; round < 20; round++) {
    const fresh = descendants(pid).filter((k) => !stopped.has(k));
    if (fresh.length === 0) break;
    for (const k of fresh) await stop(k);
  }
  stopped.delete(pid);
  return [...stopped];
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** One child process with its exit remembered. */
class Proc {
  constructor(name, file, args, logPath) {
    const log = openSync(logPath, 'a');
    this.name = name;
    this.logPath = logPath;
    this.exit = null;
    this.child = spawn(file, args, { stdio: ['ignore', log, log] });
    closeSync(log);
    this.pid = this.child.pid;
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => { this.exit = signal ?? code; resolve(this.exit); });
    });
  }

  get running() { return this.exit === null; }

  log() {
    try { return readFileSync(this.logPath, 'utf8'); } catch { return ''; }
  }

  /**
   * SIGTERM (then SIGKILL after ms) to the process and every descendant, by
   * pid.  The whole tree is stopped (SIGSTOP) first, so that nothing forks a
   * child after the children were listed (freezeTree).
   */
  async stop(ms = 5000) {
    let kids = [];
    if (this.running) {
      kids = await freezeTree(this.pid);
      for (const k of kids) { try { process.kill(k, 'SIGTERM'); process.kill(k, 'SIGCONT'); } catch { /* gone */ } }
      this.child.kill('SIGTERM');
      this.child.kill('SIGCONT');
    }
    const timedOut = await Promise.race([this.exited.then(() => false), sleep(ms).then(() => true)]);
    if (timedOut && this.running) this.child.kill('SIGKILL');
    await this.exited;
    for (const k of kids) {
      for (let i = 0; i < 20 && alive(k); i++) await sleep(50);
      if (alive(k)) { try { process.kill(k, 'SIGKILL'); } catch { /* gone */ } }
    }
    return { timedOut };
  }
}

/** A real sshd on 127.0.0.1:port with its own host key; the client key is authorized for root. */
export class Sshd {
  constructor(dir, port) {
    this.dir = dir;
    this.port = port;
    this.proc = null;
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    const keygen = (file, comment) => execFileSync('ssh-keygen',
      ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file], { stdio: 'ignore', timeout: 10_000 });
    this.hostKey = path.join(dir, 'ssh_host_ed25519_key');
    this.clientKey = path.join(dir, 'id_ed25519');
    keygen(this.hostKey, 'tb-browser-host');
    keygen(this.clientKey, 'tb-browser-client');
    writeFileSync(path.join(dir, 'authorized_keys'), readFileSync(`${this.clientKey}.pub`), { mode: 0o600 });
    // "256 SHA256:... comment (ED25519)"
    this.fingerprint = execFileSync('ssh-keygen', ['-lf', `${this.hostKey}.pub`], { encoding: 'utf8' }).split(' ')[1];
    assert.match(this.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
    // The sessions' HOME is the test's own (as tests/support/sshd.c's): bash
    // run by sshd reads ~/.bashrc, and the control host's root may have one
    // that is slow or waits on a lock (pyenv init: up to 60 s a command).
    const home = path.join(dir, 'home');
    mkdirSync(home, { mode: 0o700 });
    this.config = path.join(dir, 'sshd_config');
    writeFileSync(this.config, [
      `ListenAddress 127.0.0.1:${port}`,
      `HostKey ${this.hostKey}`,
      'PidFile none',
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'LogLevel ERROR',
      `SetEnv HOME=${home}`,
      '',
    ].join('\n'));
  }

  async start() {
    assert.ok(!this.proc?.running, 'sshd runs already');
    this.proc = new Proc('sshd', '/usr/sbin/sshd', ['-D', '-e', '-f', this.config], path.join(this.dir, 'sshd.log'));
    await eventually(async () => {
      if (!this.proc.running) throw new Error(`sshd exited (${this.proc.exit}): ${this.proc.log()}`);
      return portOpen(this.port);
    }, 10_000, `sshd did not listen on 127.0.0.1:${this.port}`);
  }

  get running() { return Boolean(this.proc?.running); }

  async stop() {
    if (this.proc) await this.proc.stop();
  }
}

/** The real testbedd with a state dir that outlives restarts. */
export class Testbedd {
  /** extraArgs: more testbedd options (e.g. ['--bmc-interval', '5']). */
  constructor(dir, inventory, extraArgs = []) {
    assert.ok(binaryDir, 'TB_BINARY_DIR is not set (ctest sets it to the build directory)');
    this.exe = path.join(binaryDir, 'testbedd');
    assert.ok(existsSync(this.exe), `${this.exe} does not exist: build testbedd first`);
    this.dir = dir;
    this.inventory = path.join(dir, 'inventory.yaml');
    this.stateDir = path.join(dir, 'state');
    this.portFile = path.join(dir, 'port');
    writeFileSync(this.inventory, inventory);
    this.port = 0;
    this.proc = null;
    this.extraArgs = extraArgs;
  }

  get base() { return `http://127.0.0.1:${this.port}`; }

  /** Start (on the same port as before, if it ran before). */
  async start() {
    if (existsSync(this.portFile)) unlinkSync(this.portFile);
    this.proc = new Proc('testbedd', this.exe, ['--inventory', this.inventory, '--state-dir', this.stateDir,
      '--listen', '127.0.0.1', '--port', String(this.port), '--port-file', this.portFile,
      '--probe-interval', '1', '--static', path.join(sourceDir, 'static'), ...this.extraArgs], path.join(this.dir, 'testbedd.log'));
    await eventually(() => {
      if (!this.proc.running) throw new Error(`testbedd exited (${this.proc.exit})`);
      return existsSync(this.portFile) && readFileSync(this.portFile, 'utf8').trim();
    }, 15_000, () => `testbedd wrote no port file:\n${this.proc.log()}`);
    this.port = Number(readFileSync(this.portFile, 'utf8').trim());
    this.adminToken = readFileSync(path.join(this.stateDir, 'admin.token'), 'utf8').trim();
  }

  async stop() {
    if (!this.proc) return { timedOut: false };
    return this.proc.stop(10_000);
  }

  /** GET path with the admin token -> parsed JSON. */
  async get(urlPath) {
    const res = await fetch(`${this.base}${urlPath}`, { headers: { Authorization: `Bearer ${this.adminToken}` } });
    const text = await res.text();
    assert.equal(res.status, 200, `GET ${urlPath}: ${res.status} ${text}`);
    return JSON.parse(text);
  }

  /** POST path with the admin token and a JSON body -> parsed JSON. */
  async post(urlPath, body) {
    const res = await fetch(`${this.base}${urlPath}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${this.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.status >= 200 && res.status < 300, `POST ${urlPath}: ${res.status} ${text}`);
    return JSON.parse(text);
  }

  /** method urlPath with a JSON body (if any) as token (the admin's by default): {status, json} (json null if empty). */
  async call(method, urlPath, body, token = this.adminToken) {
    const res = await fetch(`${this.base}${urlPath}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  /**
   * Wait until matrix id has ended (at most ms), then check it succeeded:
   * one that failed, was canceled or interrupted fails the wait at once,
   * with its state and error.
   */
  async matrixSucceeded(id, ms = 90_000) {
    const ended = ['succeeded', 'failed', 'canceled', 'interrupted'];
    let m = null;
    await eventually(async () => {
      m = (await this.get(`/api/v1/matrices/${id}?runs=0`)).matrix;
      return ended.includes(m.state);
    }, ms, () => `matrix ${id} did not end (${m?.state})`);
    assert.equal(m.state, 'succeeded', `matrix ${id} ${m.state}: ${JSON.stringify(m.error)}`);
  }

  /** POST spec to /matrices and wait until the matrix has succeeded: its id. */
  async runMatrix(spec, ms = 90_000) {
    const { matrix } = await this.post('/api/v1/matrices', spec);
    await this.matrixSucceeded(matrix.id, ms);
    return matrix.id;
  }

  /**
   * The ids and types of the events the stream replays after `since`,
   * read until the stream has been quiet for quietMs.
   */
  replay(query, quietMs = 1500) {
    return new Promise((resolve, reject) => {
      const events = [];
      let timer;
      const req = http.get(`${this.base}/api/v1/events?${query}`,
        { headers: { Authorization: `Bearer ${this.adminToken}`, Accept: 'text/event-stream' } }, (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`GET /api/v1/events?${query}: ${res.statusCode}`));
            res.resume();
            return;
          }
          let buf = '';
          const done = () => { req.destroy(); resolve(events); };
          timer = setTimeout(done, quietMs);
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            buf += chunk;
            let i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              const ev = {};
              for (const line of block.split('\n')) {
                const m = /^(id|event): ?(.*)$/.exec(line);
                if (m) ev[m[1]] = m[2];
              }
              if (ev.id !== undefined) {
                events.push({ id: Number(ev.id), type: ev.event ?? 'message' });
                clearTimeout(timer);
                timer = setTimeout(done, quietMs);
              }
            }
          });
          res.on('end', () => { clearTimeout(timer); resolve(events); });
        });
      req.on('error', (err) => { clearTimeout(timer); if (err.code !== 'ECONNRESET') reject(err); });
    });
  }
}

export function tempDir(prefix) {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir) {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** Headless Chromium with a fresh profile in dir; options: more of launchPersistentContext's (e.g. offline). */
export async function launchChromium(dir, viewport = { width: 1280, height: 800 }, options = {}) {
  const { chromium } = await need('playwright-core');
  // After a failed navigation Chromium probes google.com through the system
  // resolver and 8.8.8.8 (its DNS probe, outside --host-resolver-rules) unless
  // the profile turns "alternate error pages" off.
  const prefs = path.join(dir, 'Default', 'Preferences');
  if (!existsSync(prefs)) {
    mkdirSync(path.dirname(prefs), { recursive: true });
    writeFileSync(prefs, JSON.stringify({ alternate_error_pages: { enabled: false } }));
  }
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    timeout: 60_000,
    ...options,
  });
  for (const page of context.pages()) reloadOnNetworkChange(page);
  context.on('page', reloadOnNetworkChange);
  return context;
}

/*
 * A sim host that boots (its veth's carrier comes up in this namespace) or
 * any other test's sim going up or down makes Chromium abort what it is
 * loading with ERR_NETWORK_CHANGED.  A module of the page that fails so
 * leaves the app's module graph unrun (a blank page, no login): seen in
 * test_power and test_matrix since the sim's boots print a console.  Only
 * the page's own files (document, scripts, styles) are loaded again, by a
 * reload; an API call that fails so is the test's to see.
 */
function reloadOnNetworkChange(page) {
  let reloads = 0;
  page.on('requestfailed', (req) => {
    if (req.failure()?.errorText !== 'net::ERR_NETWORK_CHANGED') return;
    if (!['document', 'script', 'stylesheet'].includes(req.resourceType()) || reloads >= 5) return;
    reloads += 1;
    console.error(`# ${req.url()}: ERR_NETWORK_CHANGED (a sim's link changed): reloading the page`);
    page.reload().catch(() => {});
  });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
const SIM = path.join(sourceDir, 'deploy', 'sim', 'sim');

/** deploy/sim/sim with args: its stdout (throws with stderr on failure). */
export function sim(...args) {
  return execFileSync(SIM, args, { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * An inventory of loopback machines that nothing answers (ssh with a key
 * file that is no key): the header, then machines, the YAML of the
 * `machines:` map as the test writes it (indented by two).
 */
export function deadInventory(dir, machines) {
  const keyPath = path.join(dir, 'ssh.key');
  writeFileSync(keyPath, 'not a key\n', { mode: 0o600 });
  return `version: 1
ssh:
  user: root
  key_file: ${keyPath}
  connect_timeout_s: 2
machines:
${machines}`;
}

/**
 * Log in on the login page page shows (or is about to show) with token:
 * waits for the form, ticks "Remember this device" if asked, and waits for
 * the Hosts page the app lands on.
 */
export async function login(page, token, { remember = false } = {}) {
  const input = page.getByLabel('API token');
  await input.waitFor();
  await input.fill(token);
  if (remember) await page.getByLabel('Remember this device for 30 days').check();
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.locator('h1', { hasText: 'Hosts' }).waitFor();
}

/** How many px the page is wider than its viewport (> 0: it scrolls sideways). */
export function sideways(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/** The screenshots directory, $TB_BINARY_DIR/screenshots (made if missing). */
export function shotsDir() {
  const shots = path.join(binaryDir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  return shots;
}

/**
 * Screenshots of page as it is, at the desktop size and on a PHONE, to
 * $TB_BINARY_DIR/screenshots/<base>-desktop.png and <base>-phone.png
 * (with dark: <base>-phone-dark.png too; with top: <base>-desktop-top.png
 * and <base>-phone-top.png of the viewport alone), and the check every page
 * makes: on the phone the page does not scroll sideways.  fullPage false (a
 * modal dialog): the viewport only, focus and scroll left as they are.
 * The page is back at size desktop afterwards.
 */
export async function shoot(page, base, { dark = false, top = false, fullPage = true, desktop = DESKTOP } = {}) {
  const shots = shotsDir();
  const file = (suffix) => path.join(shots, `${base}-${suffix}.png`);
  if (fullPage) {
    await page.evaluate(() => {
      document.activeElement?.blur();
      window.scrollTo(0, 0);
      for (const w of document.querySelectorAll('.table-wrap')) w.scrollLeft = 0;
    });
  }
  await page.screenshot({ path: file('desktop'), fullPage });
  if (top) await page.screenshot({ path: file('desktop-top') });
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(300); // the charts follow the new width (ResizeObserver)
  const overflow = await sideways(page);
  await page.screenshot({ path: file('phone'), fullPage });
  if (top) await page.screenshot({ path: file('phone-top') });
  if (dark) {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: file('phone-dark'), fullPage });
    await page.emulateMedia({ colorScheme: 'light' });
  }
  await page.setViewportSize(desktop);
  assert.ok(overflow <= 0, `${base}: the page is ${overflow} px wider than a ${PHONE.width} px phone`);
}

/**
 * What a browser test runs against, brought up step by step in before()
 * and taken down by close() in after(), whichever steps were reached: a
 * temporary dir, the sim (deploy/sim) if asked, testbedd, Chromium with one
 * page whose errors (uncaught exceptions, console errors) collect in
 * errors.  name names the temporary dir (tb-NAME-) and the copy of
 * testbedd's log close() keeps ($TB_BINARY_DIR/test_NAME.testbedd.log,
 * '-' in NAME as '_').
 */
export class Bed {
  constructor(name) {
    this.name = name;
    this.errors = [];
    this.dir = null;
    this.simPrefix = null;
    this.simDir = null;
    this.tbd = null;
    this.browser = null;
    this.page = null;
  }

  /** The temporary dir (made on first use). */
  get root() {
    if (!this.dir) this.dir = tempDir(`tb-${this.name}-`);
    return this.dir;
  }

  /**
   * deploy/sim/sim up --prefix prefix --block block (and args) in ROOT/sim
   * (this.simDir): the sim's inventory text.  `up` refuses, changing nothing, while a sim
   * of this prefix runs or left traces (then close() leaves that sim alone);
   * a failed `up` cleans up after itself.
   */
  upSim(prefix, block, args = []) {
    const simDir = path.join(this.root, 'sim');
    let out;
    try {
      out = sim('up', '--prefix', prefix, '--block', block, '--dir', simDir, ...args);
    } catch (err) {
      throw new Error(`deploy/sim/sim up --prefix ${prefix} --block ${block} failed: ${err.stderr || err.message}`);
    }
    this.simPrefix = prefix;
    this.simDir = simDir;
    assert.equal(out.trim().split('\n').pop(), simDir, `sim up printed ${out}`);
    return readFileSync(path.join(simDir, 'inventory.yaml'), 'utf8');
  }

  /** testbedd started on inventory (text) with extraArgs, in ROOT/tb. */
  async startTestbedd(inventory, extraArgs = []) {
    const tbDir = path.join(this.root, 'tb');
    mkdirSync(tbDir, { mode: 0o700 });
    this.tbd = new Testbedd(tbDir, inventory, extraArgs);
    await this.tbd.start();
    return this.tbd;
  }

  /** Wait until testbedd sees each of names reachable and running os. */
  async hostsUp(names = ['left', 'right'], os = 'ubuntu', ms = 30_000) {
    for (const name of names) {
      await eventually(async () => {
        const st = (await this.tbd.get(`/api/v1/hosts/${name}`)).host.state;
        return st.reachability === 'up' && st.os === os;
      }, ms, `${name} is not up as ${os} in testbedd`);
    }
  }

  /**
   * Chromium (profile ROOT/chromium) at viewport and its first page, whose
   * errors collect in this.errors; timeout, if given, is the page's default
   * for waits.
   */
  async openPage(viewport = DESKTOP, { timeout } = {}) {
    this.browser = await launchChromium(path.join(this.root, 'chromium'), viewport);
    const page = this.browser.pages()[0] ?? await this.browser.newPage();
    if (timeout) page.setDefaultTimeout(timeout);
    page.on('pageerror', (err) => this.errors.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      // another test's sim changing a link aborts loads (reloadOnNetworkChange
      // loads the page's files again; a failed API call shows on the page,
      // where the test looks): not the page's error
      if (msg.text().includes('net::ERR_NETWORK_CHANGED')) return;
      this.errors.push(`console: ${msg.text()}`);
    });
    this.page = page;
    return page;
  }

  /** Chromium closed, testbedd stopped (its log kept), the sim down, ROOT removed. */
  async close() {
    await this.browser?.close().catch(() => {});
    if (this.tbd) {
      await this.tbd.stop();
      // testbedd's log outlives the run, for a look at what it did
      try { copyFileSync(this.tbd.proc.logPath, path.join(binaryDir, `test_${this.name.replaceAll('-', '_')}.testbedd.log`)); } catch { /* none */ }
    }
    if (this.simPrefix) {
      try {
        sim('down', '--prefix', this.simPrefix);
      } catch (err) {
        console.error(`sim down --prefix ${this.simPrefix} failed: ${err.stderr ?? err.message}`);
      }
    }
    removeDir(this.dir);
  }
}
