// boot.js - loads a page's ES modules and survives a module that fails.
//
// A classic (non-module) script, so it runs even when the module graph does
// not: one module of the graph that fails to load (Chromium aborts it with
// ERR_NETWORK_CHANGED when a phone changes networks; testbedd or a proxy
// answers 5xx) would otherwise leave the page blank for good.  The CSP allows
// scripts from 'self' only, so this is a file, not inline.
//
// <script src="js/boot.js" data-module="app.mjs" defer></script> imports
// js/app.mjs.  On failure it reloads the page after 1, 2, 4 s (a document's
// failed module fetches stay failed: only a new document fetches them
// again), counting the attempts in sessionStorage; after the last one it
// shows "Could not load testbedd's page: <reason>" with a Retry button.

(function boot() {
  'use strict';
  var DELAYS = [1000, 2000, 4000];
  var script = document.currentScript;
  var name = script.dataset.module;
  var key = 'testbedd.boot.' + name;

  function attempts() {
    try { return Number(sessionStorage.getItem(key)) || 0; } catch (e) { return DELAYS.length; }
  }

  function setAttempts(n) {
    try {
      if (n) sessionStorage.setItem(key, String(n));
      else sessionStorage.removeItem(key);
    } catch (e) { /* no storage: no automatic retries */ }
  }

  function slot() {
    var el = document.getElementById('loading');
    if (el) return el;
    el = document.createElement('p');
    el.id = 'loading';
    (document.getElementById('main') || document.body).prepend(el);
    return el;
  }

  function reload() {
    location.reload();
  }

  function fail(reason) {
    var n = attempts();
    var el = slot();
    if (n < DELAYS.length) {
      setAttempts(n + 1);
      el.textContent = 'Loading… (again in ' + DELAYS[n] / 1000 + ' s: ' + reason + ')';
      setTimeout(reload, DELAYS[n]);
      return;
    }
    setAttempts(0);
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'primary';
    button.textContent = 'Retry';
    button.addEventListener('click', reload);
    el.className = 'alert boot-failed';
    el.setAttribute('role', 'alert');
    el.textContent = "Could not load testbedd's page: " + reason + ' ';
    el.append(button);
  }

  var url = new URL(name, script.src).href;
  import(url).then(function () { setAttempts(0); }, function (err) {
    console.warn('testbedd: ' + name + ' did not load:', err);
    fail(err && err.message ? err.message : String(err));
  });
}());
