// api.mjs - the REST API (/api/v1) over the session cookie.
//
// The cookie (HttpOnly) is the browser's business; the CSRF token that every
// mutating request must carry lives in sessionStorage (this tab only, gone
// when the tab closes).  A token is never stored anywhere: login.mjs keeps it
// in memory only for the one POST /api/v1/session.

const CSRF_KEY = 'testbedd.csrf';
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const listeners = new Set();

export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    const e = body?.error ?? {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || (status === 0 ? 'network' : 'http_' + status);
    this.field = e.field ?? '';
    this.retryAfter = retryAfter;
  }
}

export const csrf = {
  get: () => sessionStorage.getItem(CSRF_KEY),
  set: (value) => sessionStorage.setItem(CSRF_KEY, value),
  clear: () => sessionStorage.removeItem(CSRF_KEY),
};

/** fn(err) is called when a request gets 401: the session is gone. */
export function onUnauthorized(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * api('GET', 'hosts') -> the parsed JSON reply (null for 204).
 * Throws ApiError (status 0 when testbedd could not be reached).
 * options.quiet401: do not tell the onUnauthorized listeners (login, whoami).
 */
export async function api(method, path, body, options = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (MUTATING.has(method)) {
    const token = csrf.get();
    if (token) headers['X-CSRF-Token'] = token;
  }
  let res;
  try {
    res = await fetch(`api/v1/${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (err) {
    throw new ApiError(0, { error: { code: 'network', message: `testbedd did not answer (${err.message})` } });
  }
  let data = null;
  const text = res.status === 204 ? '' : await res.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const retry = Number.parseInt(res.headers.get('Retry-After') ?? '', 10);
    const err = new ApiError(res.status, data, Number.isFinite(retry) ? retry : undefined);
    if (res.status === 401 && !options.quiet401) for (const fn of listeners) fn(err);
    throw err;
  }
  return data;
}
