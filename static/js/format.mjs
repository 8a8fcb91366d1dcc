// format.mjs - how the matrix pages show values: bitrates, states, the
// pair a run measures, a spec as JSON that people can edit, and the texts
// of refusals.

import { h, replace } from './dom.mjs';

const BITRATE_UNITS = [['Tbit/s', 1e12], ['Gbit/s', 1e9], ['Mbit/s', 1e6], ['kbit/s', 1e3]];

/** 9410000000 -> "9.41 Gbit/s" (SI, three significant digits); "—" for no value. */
export function bitrate(bps) {
  if (typeof bps !== 'number' || !Number.isFinite(bps)) return '—';
  for (const [unit, f] of BITRATE_UNITS) if (Math.abs(bps) >= f) return `${significant(bps / f)} ${unit}`;
  return `${Math.round(bps)} bit/s`;
}

/** A bitrate as a node whose title holds the exact value. */
export function bitrateNode(bps) {
  return h('span', { class: 'num', title: typeof bps === 'number' ? `${Math.round(bps)} bit/s` : null }, bitrate(bps));
}

function significant(x) {
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** 0.42 -> "0.42 %"; "—" for no value. */
export function percent(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  return `${v < 10 ? v.toFixed(2) : v.toFixed(1)} %`;
}

export function count(v) {
  return typeof v === 'number' && Number.isFinite(v) ? String(Math.round(v)) : '—';
}

/** The state of a matrix or a run as a pill (the colours are app.css's .pill-*). */
export function statePill(state) {
  return h('span', { class: `pill pill-${state ?? 'unknown'}` }, state ?? '?');
}

/** "left → right", with the OS each answered as when known: "left@ubuntu → right@freebsd". */
export function pairText(r) {
  const side = (name, os) => (os ? `${name}@${os}` : name);
  return `${side(r.client, r.client_os)} → ${side(r.server, r.server_os)}`;
}

/** "left → right tcp forward" */
/**
 * One value of a tunable set (matrix params' tunables.values[i]) as text: an
 * MTU, an offload (TSO, LRO) or the interrupts' CPUs are the link
 * interface's on both ends ("MTU 1400", "IRQs on CPUs 2-3"); a sysctl is
 * named per OS ("net.ipv4.tcp_congestion_control = reno, net.inet.tcp.cc.algorithm = newreno").
 */
export function tunableText(t) {
  const what = t.kind === 'mtu' ? 'MTU' : t.kind === 'irq' ? 'IRQs on CPUs'
    : t.kind === 'offload' ? String(t.linux ?? t.freebsd).toUpperCase() : null;
  const os = (fam) => (what ? `${what} ${t.value[fam]} (${fam})` : `${t[fam]} = ${t.value[fam]}`);
  return what && t.value.linux === t.value.freebsd ? `${what} ${t.value.linux}`
    : ['linux', 'freebsd'].filter((fam) => what || t[fam]).map(os).join(', ');
}

/**
 * A run's or cell's parameter as "key=value": a tunable set as its values
 * (tunableText), any other object as JSON, never "[object Object]".
 */
export function paramText(key, value) {
  if (key === 'tunables' && Array.isArray(value?.values)) return `tunables=${value.values.map(tunableText).join('; ')}`;
  return `${key}=${value !== null && typeof value === 'object' ? JSON.stringify(value) : value}`;
}

export function runTitle(r) {
  return `${r.client} → ${r.server} ${r.protocol} ${r.direction}`;
}

export const MATRIX_ENDED = new Set(['succeeded', 'failed', 'canceled', 'interrupted']);
export const RUN_ENDED = new Set(['ok', 'failed', 'canceled', 'interrupted']);

/**
 * A spec as JSON with one top-level key a line and everything below it on
 * that line (the layout of deploy/examples/baseline.json).
 */
export function specText(spec) {
  const keys = Object.keys(spec);
  return `{\n${keys.map((k, i) => `  ${JSON.stringify(k)}: ${compact(spec[k])}${i + 1 < keys.length ? ',' : ''}`).join('\n')}\n}\n`;
}

function compact(v) {
  if (Array.isArray(v)) return `[${v.map(compact).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${compact(x)}`).join(', ')}}`;
  }
  return JSON.stringify(v);
}

/** "Not started: <why>" for an ApiError (a missing CSRF token says what to do). */
export function errorText(err, what) {
  if (err.code === 'csrf_required') return 'This tab has no CSRF token for your session: log out and log in again to make changes.';
  return `${what}: ${err.message}`;
}

/**
 * A page's alert for refusals: el, a hidden <p role=alert>; show(err, what)
 * says errorText(err, what) in it, show(null) hides it again.
 */
export function errorAlert() {
  const el = h('p', { class: 'alert', role: 'alert', hidden: true });
  const show = (err, what) => {
    el.hidden = err === null;
    el.textContent = err === null ? '' : errorText(err, what);
  };
  return { el, show };
}

/**
 * A page for admins only: true after main says so to anyone else
 * ("<subject> for admins; you are viewer."), false for an admin.
 */
export function refusedToNonAdmin(main, ctx, title, subject) {
  if (ctx.isAdmin()) return false;
  replace(main, h('h1', {}, title), h('p', { class: 'alert' }, `${subject} for admins; you are ${ctx.session?.role}.`));
  return true;
}

/**
 * A page of matrix id that could not load: content hidden, status (a <p>)
 * an alert saying text and linking back to the matrix.
 */
export function matrixPageFailed(status, content, text, id) {
  content.hidden = true;
  status.hidden = false;
  status.className = 'alert';
  replace(status, text, h('a', { href: `#/matrices/${id}` }, `back to matrix #${id}`), '.');
}

/** The title of a button a viewer sees disabled. */
export function operatorOnly(ctx, what) {
  return `${what} needs the operator role; you are ${ctx.session?.role ?? 'not logged in'}`;
}
