// pwa.mjs - the installable app: registers the service worker (sw.js: the
// shell cached for offline use, never an API reply) and tells the page when
// it runs offline.  A service worker needs a secure context: https (testbedd's
// own TLS or a proxy's), or http on localhost; on a plain-http LAN address
// the browser refuses it and the app cannot install (README, "Installable
// app").  Nothing here is required for the pages to work.

export const offline = {
  since: null, // Date the page went offline, or null
};

function note() {
  offline.since = navigator.onLine ? null : (offline.since ?? new Date());
  document.documentElement.dataset.offline = offline.since ? 'true' : 'false';
}

if ('serviceWorker' in navigator && window.isSecureContext) {
  navigator.serviceWorker.register('sw.js').catch((err) => {
    console.warn('testbedd: the service worker did not register:', err.message);
  });
}
window.addEventListener('online', note);
window.addEventListener('offline', note);
note();
