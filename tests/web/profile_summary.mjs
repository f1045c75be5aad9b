// Summarises what page_test.mjs recorded with TROUPE_WEB_PROFILE=DIR:
//   node profile_summary.mjs DIR/twenty_streams [TOP]
// prints the JS functions with the most self time (NAME.cpuprofile) and the renderer main
// thread's trace events with the most self time (NAME.trace.json: script, style, layout,
// paint), each with its share of the recorded time.

import { readFileSync } from 'node:fs';

const [base, topArg] = process.argv.slice(2);
if (!base) {
  console.error('usage: node profile_summary.mjs DIR/NAME [TOP]');
  process.exit(2);
}
const top = Number(topArg ?? 25);

function cpuProfile(path) {
  const profile = JSON.parse(readFileSync(path, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const file = url ? url.replace(/^.*\//, '') : '';
    const key = `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    total += us;
  }
  console.log(`CPU profile ${path}: ${(total / 1000).toFixed(0)} ms sampled`);
  print(byFunction, total);
}

function trace(path) {
  const raw = JSON.parse(readFileSync(path, 'utf8'));
  const events = Array.isArray(raw) ? raw : raw.traceEvents;
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) {
    console.log(`trace ${path}: no renderer main thread`);
    return;
  }
  const spans = [];
  const open = new Map();
  for (const e of events) {
    if (e.pid !== main.pid || e.tid !== main.tid) continue;
    if (e.ph === 'X' && e.dur !== undefined) spans.push({ name: e.name, start: e.ts, end: e.ts + e.dur });
    else if (e.ph === 'B') open.set(e.name, [...(open.get(e.name) ?? []), e.ts]);
    else if (e.ph === 'E' && open.get(e.name)?.length) spans.push({ name: e.name, start: open.get(e.name).pop(), end: e.ts });
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  // Self time: a span's length less the spans nested inside it.
  const selfUs = new Map();
  const stack = [];
  let busy = 0;
  const close = (span) => selfUs.set(span.name, (selfUs.get(span.name) ?? 0) + span.self);
  for (const span of spans) {
    while (stack.length && stack.at(-1).end <= span.start) close(stack.pop());
    span.self = span.end - span.start;
    const parent = stack.at(-1);
    if (parent) parent.self -= Math.min(span.end, parent.end) - span.start;
    else busy += span.end - span.start;
    stack.push(span);
  }
  while (stack.length) close(stack.pop());
  const first = spans[0]?.start ?? 0;
  const last = Math.max(...spans.map((s) => s.end), first);
  console.log(`trace ${path}: main thread busy ${(busy / 1000).toFixed(0)} ms of ${((last - first) / 1000).toFixed(0)} ms`);
  print(selfUs, busy);
  tasks(events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined));
}

// The main thread's tasks, wall time against the thread's own CPU time (`tdur`): on a loaded
// machine a long wall time with little CPU is the thread waiting for a core, not the page.
function tasks(events) {
  events.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const top = [];
  let end = 0;
  for (const e of events) {
    if (e.ts >= end) {
      top.push(e);
      end = e.ts + e.dur;
    }
  }
  const ms = (us) => (us / 1000).toFixed(1);
  const sum = (list, f) => list.reduce((n, e) => n + (f(e) ?? 0), 0);
  const cpu = top.map((e) => e.tdur ?? 0).sort((a, b) => a - b);
  const at = (q) => ms(cpu[Math.min(cpu.length - 1, Math.floor(q * cpu.length))] ?? 0);
  const long = top.filter((e) => e.dur > 16_700);
  console.log(`  tasks: ${top.length}, wall ${ms(sum(top, (e) => e.dur))} ms, cpu ${ms(sum(top, (e) => e.tdur))} ms; cpu per task p50 ${at(0.5)} p99 ${at(0.99)} max ${at(1)} ms`);
  console.log(`  tasks over 16.7 ms wall: ${long.length}, their cpu: ${long.map((e) => ms(e.tdur ?? 0)).join(', ') || '-'} ms`);
}

function print(map, total) {
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${(us / 1000).toFixed(1).padStart(8)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
}

cpuProfile(`${base}.cpuprofile`);
trace(`${base}.trace.json`);
