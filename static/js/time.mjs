// time.mjs - "3 min", "2 h 5 min", "4 days": how long since an RFC 3339 time.

export function parseTime(value) {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/** A duration in milliseconds as people say it: "12 s", "3 min", "2 h 5 min", "4 days". */
export function duration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const hours = Math.floor(min / 60);
  if (hours < 48) return min % 60 ? `${hours} h ${min % 60} min` : `${hours} h`;
  return `${Math.floor(hours / 24)} days`;
}

/** "3 min" since value (null when value is not a time). */
export function since(value, now = Date.now()) {
  const t = parseTime(value);
  return t === null ? null : duration(now - t);
}

/** "2026-12-02 16:20:00 UTC" */
export function absolute(value) {
  const t = parseTime(value);
  if (t === null) return '';
  return new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
}
