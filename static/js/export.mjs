// export.mjs - downloads of what a page shows: CSV and JSON of a table, and
// the file itself (charts.mjs uses it for PNG and SVG).  Everything is made
// in the browser from data the page already has; nothing is fetched again.
//
// A table is exported from its rows (objects): exportBar(name, () => rows,
// columns) gives "CSV · JSON" buttons.  columns: [{key, label}] (CSV order;
// a key may be a function of the row), default every key of the first row.
// For a table drawn by another module, rowsOfTable(table) reads its cells'
// text (headers as keys).

import { h } from './dom.mjs';

/** Save content (a string or a Blob) as file name with MIME type. */
export function download(name, content, type) {
  const blob = content instanceof Blob ? content : new Blob([content], { type });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** One CSV field (RFC 4180: quoted when it holds a comma, quote or line break). */
function field(v) {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** rows as CSV text with a header line (CRLF line ends, as RFC 4180). */
export function toCSV(rows, columns) {
  const cols = columns ?? Object.keys(rows[0] ?? {}).map((key) => ({ key, label: key }));
  const value = (row, c) => (typeof c.key === 'function' ? c.key(row) : row[c.key]);
  return [cols.map((c) => field(c.label ?? c.key)).join(','),
    ...rows.map((row) => cols.map((c) => field(value(row, c))).join(','))].join('\r\n') + '\r\n';
}

/** The rows of a drawn table: one object per body row, keyed by the header's text. */
export function rowsOfTable(table) {
  const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
  return [...table.querySelectorAll('tbody > tr')].map((tr) => Object.fromEntries(
    [...tr.children].map((td, i) => [heads[i] ?? `column ${i + 1}`, td.textContent.trim()])));
}

/**
 * "Download CSV · JSON" for a table: rows() gives its rows when asked; name
 * is the file's stem (or a function giving it when asked).
 */
export function exportBar(name, rows, columns) {
  const stem = () => (typeof name === 'function' ? name() : name);
  const label0 = typeof name === 'function' ? 'the table' : name;
  const button = (label, fn) => h('button', {
    type: 'button', class: `link export-${label.toLowerCase()}`, onclick: fn,
    'aria-label': `Download ${label0} as ${label}`,
  }, label);
  return h('span', { class: 'downloads export-bar' }, 'Download ',
    button('CSV', () => download(`${stem()}.csv`, toCSV(rows(), columns), 'text/csv;charset=utf-8')), ' · ',
    button('JSON', () => download(`${stem()}.json`, `${JSON.stringify(rows(), null, 2)}\n`, 'application/json')));
}
