// sw.js - testbedd's service worker: the app shell offline, nothing else.
//
// It caches the shell only: the pages, styles, scripts, icons and manifest
// served from the static directory (same origin, GET, no credentials asked
// for).  It never caches or answers for the API (/api/..., /metrics): those
// replies carry hosts, tokens' names and the audit, and must be live; they
// go straight to the network, untouched.  The shell is network first (an
// update shows at once when testbedd answers) and falls back to the cached
// copy when it does not (or answers 5xx), so an installed app opens offline
// and says so.
// Installing caches the page's modules too: js/app.mjs and every module it
// imports, statically, found by reading them (no list here to keep up), so
// the installed app opens offline (at #/status) even when no page was loaded
// under the worker's control yet.
// A new version of this file replaces the old cache (CACHE's name).

const CACHE = 'testbedd-shell-v1';
const PRECACHE = ['./', 'index.html', 'app.css', 'js/boot.js', 'manifest.webmanifest', 'icons/icon.svg',
  'icons/icon-192.png', 'icons/icon-512.png'];
// `import ... from './x.mjs'`, `export ... from './x.mjs'`, `import './x.mjs'` (relative, static)
const IMPORT = /^\s*(?:import|export)\s(?:[^'"]*?\sfrom\s)?'(\.{1,2}\/[\w./-]+\.mjs)'/gm;

/** Module url and what it imports, each once (a module that fails is left for the network to bring). */
async function addModules(cache, url, seen = new Set()) {
  if (seen.has(url)) return;
  seen.add(url);
  const res = await fetch(url);
  if (!res.ok) return;
  await cache.put(url, res.clone());
  const deps = [...(await res.text()).matchAll(IMPORT)].map((m) => new URL(m[1], url).href);
  await Promise.all(deps.map((dep) => addModules(cache, dep, seen)));
}

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE)
    .then((c) => c.addAll(PRECACHE).then(() => addModules(c, new URL('js/app.mjs', self.registration.scope).href)))
    .then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n !== CACHE).map((n) => caches.delete(n))))
    .then(() => self.clients.claim()));
});

/** Is this request part of the shell (cacheable)? */
function isShell(request) {
  if (request.method !== 'GET') return false;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return false;
  const scope = new URL(self.registration.scope);
  if (!url.pathname.startsWith(scope.pathname)) return false;
  const rest = url.pathname.slice(scope.pathname.length);
  return !(rest.startsWith('api/') || rest === 'api' || rest === 'metrics' || request.headers.has('Authorization'));
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (!isShell(request)) return; // the API: straight to the network, never cached
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const res = await fetch(request);
      if (res.ok && res.type === 'basic') await cache.put(request, res.clone());
      if (res.status < 500) return res;
      // a 5xx (testbedd or a proxy in trouble): the cached copy if there is one
      return (await cache.match(request, { ignoreSearch: true })) ?? res;
    } catch (err) {
      const hit = await cache.match(request, { ignoreSearch: true });
      if (hit) return hit;
      if (request.mode === 'navigate') {
        const page = await cache.match('index.html');
        if (page) return page;
      }
      throw err;
    }
  })());
});
