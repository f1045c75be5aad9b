// Items of a transcript as DOM nodes. Every model, command and file text goes through
// textContent (or the markdown renderer, which uses it too): nothing here parses markup.

import { MarkdownStream, PlainTextStream, stripTerminalCodes } from './markdown.js';
import { commandText } from './state.js';
import { collabLabel, commandStatusLabel, itemKindLabel, shortId } from './labels.js';

/** Characters of a command's output drawn; the rest sits behind "show all". */
export const OUTPUT_SHOWN_CHARS = 16 * 1024;

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

// Names a sub-agent by its thread id (nickname and path when known); set by the views.
let nameAgent = (threadId) => `agent ${shortId(threadId)}`;

export function setAgentNamer(namer) {
  nameAgent = namer;
}

// A streamed item's node (agent message, reasoning summary) and what its text has drawn: the
// next delta draws only what it appended (see `updateItem`).
const streams = new WeakMap();

/** A node for one item (replaced whole when the item changes, unless `updateItem` can). */
export function renderItem(item) {
  const box = el('div', `item item-${item.type}`);
  box.dataset.itemId = item.id;
  switch (item.type) {
    case 'userMessage':
      box.append(el('div', 'who', 'you'), el('div', 'user-text', userText(item)));
      break;
    case 'agentMessage': {
      const markdown = new MarkdownStream(box);
      markdown.update(item.text ?? '');
      streams.set(box, { stream: markdown, revision: item.textRevision, field: 'text' });
      break;
    }
    case 'reasoning': {
      const text = el('div', 'reasoning-text');
      const plain = new PlainTextStream(text);
      plain.update(item.summaryText ?? (item.summary ?? []).join('\n'));
      if (item.summaryText !== undefined) streams.set(box, { stream: plain, revision: item.textRevision, field: 'summaryText' });
      box.append(el('div', 'who', 'thinking'), text);
      break;
    }
    case 'commandExecution':
      box.append(renderCommand(item));
      break;
    case 'fileChange':
      box.append(renderFileChange(item));
      break;
    case 'collabAgentToolCall':
      box.append(el('div', `collab collab-${item.status ?? 'inProgress'}`, collabLabel(item, nameAgent)));
      if (item.prompt) box.append(el('div', 'tool-args', stripTerminalCodes(item.prompt)));
      break;
    case 'subAgentActivity':
      // A sub-agent's report entering its parent: the runtime's, never the user's.
      box.append(el('div', 'who', 'agent'), el('div', 'agent-report', stripTerminalCodes(agentActivityLine(item))));
      break;
    default: {
      box.append(el('div', 'who', itemKindLabel(item)));
      const detail = item.arguments ?? item.text ?? item.output ?? null;
      if (detail !== null) {
        const text = typeof detail === 'string' ? detail : JSON.stringify(detail, null, 1);
        box.append(el('pre', 'tool-args', stripTerminalCodes(text).slice(0, OUTPUT_SHOWN_CHARS)));
      }
    }
  }
  return box;
}

/**
 * Brings an item's node up to date in place when only its streamed text grew (an agent
 * message or a reasoning summary: only the appended lines are drawn); false when it must be
 * drawn afresh.
 */
export function updateItem(node, item) {
  const drawn = streams.get(node);
  if (!drawn || drawn.revision !== item.textRevision || typeof item[drawn.field] !== 'string') return false;
  drawn.stream.update(item[drawn.field]);
  return true;
}

/** `Ada (/root/a) finished: <first line of its answer>`. */
export function agentActivityLine(item) {
  const who = item.agentNickname && item.agentPath
    ? `${item.agentNickname} (${item.agentPath})`
    : item.agentNickname ?? item.agentPath ?? `agent ${shortId(item.agentThreadId)}`;
  const verb = { failed: 'failed', interrupted: 'was interrupted', closed: 'was closed' }[item.status]
    ?? (item.kind === 'started' ? 'started' : item.kind === 'interrupted' ? 'was interrupted' : 'finished');
  const first = (item.message ?? '').split('\n').find((line) => line.trim() !== '');
  return first ? `${who} ${verb}: ${first.trim()}` : `${who} ${verb}`;
}

function userText(item) {
  return (item.content ?? [])
    .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('\n');
}

function renderCommand(item) {
  const cell = el('div', 'command');
  const head = el('div', 'command-head');
  const status = item.status ?? 'inProgress';
  head.append(
    el('span', 'prompt', '$ '),
    el('code', 'command-line', stripTerminalCodes(commandText(item.command))),
    el('span', `badge badge-${status}`, commandStatusLabel(item)),
  );
  cell.append(head);
  if (item.cwd) cell.append(el('div', 'muted', item.cwd));
  const raw = item.aggregatedOutput ?? '';
  const { text: output, unread } = outputTail(raw);
  if (output || item.droppedChars) {
    const pre = el('pre', 'output');
    const hidden = unread + output.length - OUTPUT_SHOWN_CHARS;
    if (hidden > 0 || item.droppedChars) {
      const note = el('button', 'more', `${(Math.max(hidden, 0) + (item.droppedChars ?? 0)).toLocaleString()} earlier characters hidden`);
      if (hidden > 0) {
        note.addEventListener('click', () => {
          pre.textContent = stripTerminalCodes(raw);
          if (item.droppedChars) pre.prepend(el('div', 'muted', `(${item.droppedChars} characters not kept)`));
        });
      }
      cell.append(note);
    }
    pre.textContent = output.length > OUTPUT_SHOWN_CHARS ? output.slice(output.length - OUTPUT_SHOWN_CHARS) : output;
    cell.append(pre);
  }
  return cell;
}

/**
 * The end of a command's output without terminal codes, cleaned from a window a little
 * larger than what is shown (the output kept can be 256 KiB and is redrawn while it streams),
 * starting at a line so no escape sequence is cut; `unread` counts the raw characters before.
 */
function outputTail(raw) {
  const window = OUTPUT_SHOWN_CHARS * 2;
  if (raw.length <= window) return { text: stripTerminalCodes(raw), unread: 0 };
  let from = raw.length - window;
  const line = raw.indexOf('\n', from);
  if (line !== -1 && line < raw.length - OUTPUT_SHOWN_CHARS) from = line + 1;
  return { text: stripTerminalCodes(raw.slice(from)), unread: from };
}

function renderFileChange(item) {
  const box = el('div', 'file-change');
  const changes = item.changes ?? [];
  box.append(el('div', 'who', `edit (${item.status ?? 'inProgress'})`));
  for (const change of changes) {
    const file = el('details', 'file');
    file.open = changes.length <= 3;
    const kind = change.kind?.type ?? change.kind ?? 'update';
    const moved = change.kind?.move_path ? ` → ${change.kind.move_path}` : '';
    const summary = el('summary');
    summary.append(el('span', `badge badge-${kind}`, kind), ` ${change.path}${moved}`);
    file.append(summary, renderDiff(change.diff ?? ''));
    box.append(file);
  }
  if (item.output) box.append(el('pre', 'output', stripTerminalCodes(item.output)));
  return box;
}

/** A unified diff, one line per row, coloured by its first character. */
export function renderDiff(diff) {
  const pre = el('pre', 'diff');
  const lines = stripTerminalCodes(diff).split('\n');
  const shown = lines.slice(0, 2000);
  for (const line of shown) {
    const kind = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'ctx';
    pre.append(el('span', `diff-${kind}`, `${line}\n`));
  }
  if (lines.length > shown.length) pre.append(el('span', 'muted', `… ${lines.length - shown.length} more lines`));
  return pre;
}

/** A plan checklist (`turn/plan/updated`). */
export function renderPlan(plan) {
  const box = el('div', 'item plan');
  box.append(el('div', 'who', 'plan'));
  if (plan.explanation) box.append(el('div', 'muted', stripTerminalCodes(plan.explanation)));
  const list = el('ul', 'checklist');
  for (const step of plan.plan) {
    const li = el('li', `step step-${step.status}`);
    const box2 = el('input');
    box2.type = 'checkbox';
    box2.disabled = true;
    box2.checked = step.status === 'completed';
    li.append(box2, ` ${stripTerminalCodes(step.step)}`);
    list.append(li);
  }
  box.append(list);
  return box;
}

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/**
 * A chart with its legend as page text above it (SVG text scales with the drawing and was
 * too small to read at the chart's size).
 */
function chartBox(kind, chart) {
  const box = el('figure', `chart-box ${kind}`);
  box.append(el('figcaption', 'legend'), chart);
  return box;
}

/** Tokens per turn as bars, and the thread's running total as a line (inline SVG). */
export function renderTokenChart(thread) {
  const history = thread.tokenHistory;
  const width = 320;
  const height = 90;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', preserveAspectRatio: 'none' });
  const title = svg('title', {});
  title.textContent = `tokens per turn for ${shortId(thread.id)}`;
  chart.append(title);
  const box = chartBox('token-chart', chart);
  if (history.length === 0) return box;
  const maxTotal = Math.max(...history.map((h) => h.total), 1);
  const maxTurn = Math.max(...history.map((h) => h.used), 1);
  // At most 24 px a turn, so one turn is a bar and not a block.
  const step = Math.min(width / history.length, 24);
  const points = [];
  history.forEach((h, i) => {
    const barHeight = (h.used / maxTurn) * (height - 12);
    const bar = svg('rect', {
      x: i * step + 1,
      y: height - barHeight,
      width: Math.max(step - 2, 1),
      height: barHeight,
      class: 'bar',
    });
    const tip = svg('title', {});
    tip.textContent = `turn ${i + 1}: ${h.used.toLocaleString()} tokens, ${h.total.toLocaleString()} in all`;
    bar.append(tip);
    chart.append(bar);
    points.push(`${i * step + step / 2},${height - (h.total / maxTotal) * (height - 12)}`);
  });
  chart.append(svg('polyline', { points: points.join(' '), class: 'line', fill: 'none' }));
  box.querySelector('.legend').textContent = `${thread.tokens.toLocaleString()} tokens · bars: per turn · line: total`;
  return box;
}

/**
 * The context window in use at the end of each turn (the last request's tokens), against
 * the model's window: bars as a share of it, the window as the top line. Without a known
 * window the bars scale to the largest turn and the chart says so.
 */
export function renderContextChart(thread) {
  const history = thread.tokenHistory;
  const width = 320;
  const height = 90;
  const top = 12;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', preserveAspectRatio: 'none' });
  const title = svg('title', {});
  title.textContent = `context window use per turn for ${shortId(thread.id)}`;
  chart.append(title);
  const box = chartBox('context-chart', chart);
  if (history.length === 0) return box;
  const window = thread.contextWindow;
  const scale = window ?? Math.max(...history.map((h) => h.context), 1);
  chart.append(svg('line', { x1: 0, x2: width, y1: top, y2: top, class: 'window' }));
  const step = Math.min(width / history.length, 24);
  history.forEach((h, i) => {
    const share = Math.min(h.context / scale, 1);
    const barHeight = share * (height - top);
    const full = window && h.context / window >= 0.9;
    const bar = svg('rect', {
      x: i * step + 1,
      y: height - barHeight,
      width: Math.max(step - 2, 1),
      height: barHeight,
      class: full ? 'bar bar-full' : 'bar',
    });
    bar.dataset.context = String(h.context);
    const tip = svg('title', {});
    tip.textContent = window
      ? `turn ${i + 1}: ${h.context.toLocaleString()} of ${window.toLocaleString()} tokens (${Math.round((h.context / window) * 100)}%)`
      : `turn ${i + 1}: ${h.context.toLocaleString()} tokens`;
    bar.append(tip);
    chart.append(bar);
  });
  const last = history.at(-1);
  box.querySelector('.legend').textContent = window
    ? `context: ${last.context.toLocaleString()} of ${window.toLocaleString()} (${Math.round((last.context / window) * 100)}%) · line: window`
    : `context: ${last.context.toLocaleString()} tokens · window unknown`;
  return box;
}

/** The tool calls of a turn on a time axis. */
export function renderTimeline(thread, turn) {
  const tools = turn.itemIds
    .map((id) => thread.items.get(id))
    .filter((item) => item && !['userMessage', 'agentMessage', 'reasoning', 'subAgentActivity'].includes(item.type))
    .map((item) => ({ item, times: thread.toolTimes.get(item.id) }))
    .filter((t) => t.times);
  const box = el('div', 'timeline');
  if (tools.length === 0) return box;
  const start = Math.min(...tools.map((t) => t.times.start));
  const end = Math.max(...tools.map((t) => t.times.end ?? Date.now()), start + 1);
  for (const { item, times } of tools) {
    const row = el('div', 'timeline-row');
    const label = item.type === 'commandExecution' ? commandText(item.command) : item.tool ?? item.type;
    const bar = el('div', 'timeline-bar');
    bar.style.marginLeft = `${((times.start - start) / (end - start)) * 100}%`;
    bar.style.width = `${Math.max((((times.end ?? Date.now()) - times.start) / (end - start)) * 100, 1)}%`;
    row.append(el('span', 'timeline-label', stripTerminalCodes(label).slice(0, 60)), bar);
    row.title = `${label}: ${(((times.end ?? Date.now()) - times.start) / 1000).toFixed(1)} s`;
    box.append(row);
  }
  return box;
}
