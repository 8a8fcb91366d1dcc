// dom.mjs - build DOM nodes without innerHTML: every value from the API is
// text, never markup (the CSP forbids inline scripts and styles anyway).

/**
 * h('p', {class: 'x', dataset: {host: 'left'}, onclick: fn}, 'text', child, [more])
 * Attributes with null, undefined or false are left out; true sets an empty one.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace every child of el with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Say something to screen readers (a polite live region). */
export function announce(text) {
  const el = document.getElementById('announcer');
  if (!el) return;
  el.textContent = '';
  // A new text node in a separate task is announced even when it repeats.
  setTimeout(() => { el.textContent = text; }, 50);
}
