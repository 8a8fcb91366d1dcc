// app.mjs - the web shell: session, top bar, live indicator, hash routes.
//
// Routes: #/login, #/status (status.mjs: the installed app opens there), #/hosts, #/matrices[/new|/ID|/ID/cells/N/history], #/runs/ID, #/os/ID (more pages - actions,
// console - add a line to `routes` and a link to the nav in index.html).  A
// page's render(main, ctx, rest) gets what follows its name ("new", "12").

import { api, csrf, onUnauthorized } from './api.mjs';
import { renderAdmin } from './admin.mjs';
import { renderDevices } from './devices.mjs';
import './pwa.mjs';
import { replace } from './dom.mjs';
import { LiveStream } from './live.mjs';
import { renderLogin } from './login.mjs';
import { renderHosts } from './hosts.mjs';
import { renderInventory } from './inventory.mjs';
import { renderMatrices } from './matrices.mjs';
import { renderNotifications } from './notifications.mjs';
import { renderOsView } from './osview.mjs';
import { renderRun } from './run.mjs';
import { forgetStatus, offlineSession, renderStatus } from './status.mjs';

const routes = {
  // the console is a page of its own (console.html: xterm.js needs inline styles there only)
  console: { title: 'Console', nav: 'hosts', render: (main, c, rest) => { location.replace(`console.html#${rest}`); } },
  status: { title: 'Status', render: renderStatus },
  hosts: { title: 'Hosts', render: renderHosts },
  matrices: { title: 'Matrices', render: renderMatrices },
  notifications: { title: 'Notifications', render: renderNotifications },
  inventory: { title: 'Inventory', render: renderInventory },
  runs: { title: 'Run', render: renderRun, nav: 'matrices' },
  os: { title: 'OS side by side', render: renderOsView, nav: 'matrices' },
  admin: { title: 'Admin', render: renderAdmin },
  devices: { title: 'Your devices', render: renderDevices },
};
const DEFAULT_ROUTE = 'hosts';

const LIVE_TEXT = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  stopped: 'offline',
};

const ctx = {
  session: null,   // {name, role}
  live: null,      // LiveStream while logged in
  main: null,
  pageCleanup: null,
  isAdmin: () => ctx.session?.role === 'admin',
  canOperate: () => ctx.session?.role === 'operator' || ctx.session?.role === 'admin',
};

function route() {
  const m = /^#\/([a-z-]+)/.exec(location.hash);
  return m ? m[1] : '';
}

/** What follows the route's name: "12" for #/matrices/12. */
function routeRest() {
  const m = /^#\/[a-z-]+\/([^?#]*)/.exec(location.hash);
  return m ? decodeURIComponent(m[1]) : '';
}

function setTopBar() {
  const logged = ctx.session !== null;
  document.getElementById('nav').hidden = !logged;
  document.getElementById('session').hidden = !logged;
  if (logged) {
    replace(document.getElementById('who'),
      ctx.session.name, ' ', Object.assign(document.createElement('span'), {
        className: `role role-${ctx.session.role}`, textContent: ctx.session.role,
      }));
    document.getElementById('who').setAttribute('aria-label',
      `Logged in as ${ctx.session.name}, role ${ctx.session.role}: your devices`);
  }
  const current = routes[route()]?.nav ?? (route() || DEFAULT_ROUTE);
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.route === current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function showLive(state) {
  const el = document.getElementById('live');
  el.dataset.state = state;
  el.textContent = LIVE_TEXT[state] ?? state;
}

function startLive() {
  if (ctx.live) return;
  ctx.live = new LiveStream(['host.state', 'host.bmc', 'action.state', 'action.step', 'matrix.state',
    'reservation.granted', 'reservation.queued', 'reservation.released', 'reservation.broken', 'reservation.expired']);
  // #live is a status region: screen readers hear "reconnecting…" and "live".
  ctx.live.addEventListener('state', (e) => showLive(e.detail));
  showLive('connecting');
  ctx.live.start();
}

function stopLive() {
  ctx.live?.stop();
  ctx.live = null;
}

function cleanupPage() {
  const fn = ctx.pageCleanup;
  ctx.pageCleanup = null;
  if (fn) fn();
}

async function render(focus) {
  cleanupPage();
  const main = ctx.main;
  if (ctx.session === null) {
    setTopBar();
    document.title = 'Log in · testbedd';
    ctx.pageCleanup = renderLogin(main, { onLogin: loggedIn, notice: ctx.loginNotice });
    ctx.loginNotice = null;
    return;
  }
  let name = route();
  if (!routes[name]) {
    name = DEFAULT_ROUTE;
    history.replaceState(null, '', `#/${name}`);
  }
  setTopBar();
  document.title = `${routes[name].title} · testbedd`;
  ctx.pageCleanup = routes[name].render(main, ctx, routeRest());
  if (focus) main.focus({ preventScroll: true });
}

function loggedIn(session) {
  ctx.session = { name: session.name, role: session.role };
  csrf.set(session.csrf_token);
  startLive();
  if (route() === 'login' || !routes[route()]) history.replaceState(null, '', `#/${DEFAULT_ROUTE}`);
  render(true);
}

function loggedOut(notice) {
  stopLive();
  csrf.clear();
  forgetStatus();
  ctx.session = null;
  ctx.loginNotice = notice ?? null;
  history.replaceState(null, '', '#/login');
  render(true);
}

/**
 * DELETE path with button disabled meanwhile, then the login page saying
 * notice.  session (this one): logged out even when that fails (the session
 * may be gone already, expired or revoked: the cookie is useless either
 * way).  sessions (every session of this token, a remembered phone's too;
 * the token stays valid): only when it worked or the session is gone (401),
 * else the other devices' sessions live on and the page stays.
 */
async function endSessions(button, path, notice) {
  button.disabled = true;
  try {
    await api('DELETE', path, undefined, { quiet401: true });
  } catch (err) {
    console.warn(`testbedd: DELETE ${path}:`, err.message);
    if (path === 'sessions' && err.status !== 401) return;
  } finally {
    button.disabled = false;
  }
  loggedOut(notice);
}

async function boot() {
  ctx.main = document.getElementById('main');
  document.getElementById('logout').addEventListener('click',
    (e) => endSessions(e.currentTarget, 'session', 'You are logged out.'));
  document.getElementById('logout-all').addEventListener('click',
    (e) => endSessions(e.currentTarget, 'sessions', 'You are logged out on every device.'));
  window.addEventListener('hashchange', () => render(true));
  onUnauthorized((err) => {
    if (ctx.session !== null) loggedOut(`${err.message}`);
  });
  try {
    const me = await api('GET', 'whoami', undefined, { quiet401: true });
    ctx.session = { name: me.token.name, role: me.token.role };
    if (me.via !== 'cookie') csrf.clear();
    startLive();
  } catch (err) {
    ctx.session = null;
    if (err.status !== 401) ctx.loginNotice = err.message;
    // offline: the status page shows what it last read (the installed app opens there)
    if (err.status === 0 && route() === 'status' && (ctx.session = offlineSession()) !== null) startLive();
  }
  render(false);
}

boot();
