// intervalseries.mjs - what a run's interval chart plots, whoever draws it:
// ECharts on the run page (charts.mjs) or the live plot of a matrix page
// (liveplot.mjs, in a worker).  Pure: no DOM, so a worker may import it.
//
// Two panels: bitrate (sender and receiver side; each stream too when there
// are several), and for TCP the sender's retransmits, cwnd and RTT, for UDP
// the receiver's jitter and loss.  A series is
//   {name, kind: 'line' | 'bar', axis, thin, points: [[x, y, omitted]]}
// with x the interval's end (s since the test started) and y null where the
// interval lacks the value.

export const GBIT = 1e9;

/**
 * The series of both panels from a run's intervals, by side, each in order
 * ({client: [...], server: [...]}): {rate, detail, axes}, axes the detail
 * panel's y axes ({name, position, offset}).
 */
export function intervalSeries(protocol, bySide) {
  const rate = [];
  const detail = [];
  for (const side of ['client', 'server']) {
    const ivs = bySide[side] ?? [];
    if (ivs.length === 0) continue;
    const role = ivs[0].sum?.sender ? 'sender' : 'receiver';
    const label = `${role} (${side})`;
    rate.push(series(label, ivs.map((iv) => [iv.end, rateOf(iv.sum), iv.omitted])));
    const nstreams = ivs[0].streams?.length ?? 0;
    for (let k = 0; nstreams > 1 && k < nstreams; k++) {
      rate.push(series(`${label} stream ${k + 1}`, ivs.map((iv) => [iv.end, rateOf(iv.streams?.[k])]), { thin: true }));
    }
    if (protocol === 'tcp' && role === 'sender') {
      detail.push(series(`retransmits (${side})`, ivs.map((iv) => [iv.end, iv.sum?.retransmits ?? null]), { kind: 'bar' }));
      detail.push(series(`cwnd KiB (${side})`, ivs.map((iv) => [iv.end, scaled(sumOf(iv.streams, 'snd_cwnd'), 1024)]), { axis: 1 }));
      if (ivs.some((iv) => iv.streams?.some((st) => st.rtt_us != null))) {
        detail.push(series(`RTT ms (${side})`, ivs.map((iv) => [iv.end, scaled(meanOf(iv.streams, 'rtt_us'), 1000)]), { axis: 2 }));
      }
    }
    if (protocol === 'udp' && role === 'receiver') {
      detail.push(series(`jitter ms (${side})`, ivs.map((iv) => [iv.end, iv.sum?.jitter_ms ?? null])));
      detail.push(series(`loss % (${side})`, ivs.map((iv) => [iv.end, iv.sum?.lost_percent ?? null]), { kind: 'bar', axis: 1 }));
    }
  }
  const axes = protocol === 'udp'
    ? [{ name: 'ms' }, { name: '%', position: 'right' }]
    : [{ name: 'retr' }, { name: 'KiB', position: 'right' }, { name: 'ms', position: 'right', offset: 48 }];
  return { rate, detail, axes };
}

/** The detail panel's title, and what it says while it has nothing (iperf3 before 3.17: the client's intervals come at its end). */
export function detailTitle(protocol) {
  return protocol === 'udp' ? 'jitter and loss' : 'retransmits, cwnd, RTT';
}

export function detailNone(protocol) {
  return `None yet: they come with the ${protocol === 'udp' ? 'receiver' : 'sender'}'s intervals.`;
}

function series(name, points, { kind = 'line', axis = 0, thin = false } = {}) {
  return { name, kind, axis, thin, points };
}

function rateOf(x) {
  return typeof x?.bits_per_second === 'number' ? x.bits_per_second / GBIT : null;
}

function scaled(v, by) {
  return v === null ? null : v / by;
}

function sumOf(streams, key) {
  const v = (streams ?? []).map((st) => st[key]).filter((x) => typeof x === 'number');
  return v.length ? v.reduce((a, b) => a + b, 0) : null;
}

function meanOf(streams, key) {
  const v = (streams ?? []).map((st) => st[key]).filter((x) => typeof x === 'number');
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}
