// login.mjs - paste an API token, get a session cookie.
//
// The token is read from the input, sent once in POST /api/v1/session and
// then dropped: the input is cleared and nothing keeps it.

import { api } from './api.mjs';
import { h, replace } from './dom.mjs';

export function renderLogin(main, { onLogin, notice }) {
  let timer = null;
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', required: true, autocomplete: 'off',
    autocapitalize: 'off', spellcheck: 'false', class: 'mono', 'aria-describedby': 'token-help',
  });
  // "Remember this device": a 30-day session (the server sets the cookie's
  // Max-Age); unticked, the session lasts 12 h.
  const remember = h('input', { id: 'remember', name: 'remember', type: 'checkbox' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Log in');
  const error = h('p', { id: 'login-error', class: 'alert', role: 'alert', hidden: true });
  const form = h('form', { class: 'login-form', novalidate: true },
    h('label', { for: 'token' }, 'API token'),
    input,
    h('p', { id: 'token-help', class: 'help' },
      'The first admin token is in ', h('code', {}, 'STATE_DIR/admin.token'),
      '; an admin makes more with ', h('code', {}, 'tbctl token create NAME --role viewer'), '.'),
    h('label', { class: 'check', for: 'remember' }, remember,
      ' Remember this device for 30 days'),
    button,
    error);

  function showError(text) {
    error.textContent = text;
    error.hidden = false;
    input.setAttribute('aria-invalid', 'true');
  }

  function waitOut(seconds) {
    clearInterval(timer);
    let left = seconds;
    button.disabled = true;
    const tick = () => {
      if (left <= 0) {
        clearInterval(timer);
        button.disabled = false;
        showError('Too many failed logins from this address. You can try again now.');
        return;
      }
      showError(`Too many failed logins from this address: wait ${left} s before trying again.`);
      left -= 1;
    };
    tick();
    timer = setInterval(tick, 1000);
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (!token) {
      showError('Paste an API token first.');
      input.focus();
      return;
    }
    button.disabled = true;
    error.hidden = true;
    try {
      const reply = await api('POST', 'session', { token, remember: remember.checked },
        { quiet401: true });
      input.value = '';
      onLogin(reply.session);
    } catch (err) {
      button.disabled = false;
      if (err.status === 429) {
        waitOut(err.retryAfter ?? 60);
      } else if (err.status === 401) {
        showError(`That token was refused: ${err.message}`);
      } else {
        showError(err.message);
      }
      input.select();
      input.focus();
    }
  });

  replace(main,
    h('section', { class: 'login', 'aria-labelledby': 'login-title' },
      h('h1', { id: 'login-title' }, 'Log in to testbedd'),
      notice ? h('p', { class: 'notice', role: 'status' }, notice) : null,
      form));
  input.focus();
  return () => clearInterval(timer);
}
