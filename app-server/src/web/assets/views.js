// The page's three panes: the thread tree, the selected thread's transcript, and the
// approvals queue. Each redraws at most once per animation frame, and only what changed.

import { Store, commandText } from './state.js';
import { el, renderContextChart, renderItem, renderPlan, renderTimeline, renderTokenChart, updateItem } from './render.js';
import { stripTerminalCodes } from './markdown.js';
import { agentName, ago, firstLine, shortId, shortPath, threadTitle } from './labels.js';

/** Items drawn at the end of a transcript; earlier ones wait behind a button. */
export const TRANSCRIPT_TAIL_ITEMS = 200;

const STATUS_LABEL = {
  running: 'running',
  approval: 'waiting for approval',
  idle: 'idle',
  failed: 'failed',
  done: 'done',
  interrupted: 'interrupted',
};

const TURN_LABEL = { inProgress: 'running', completed: 'done' };

export function elapsed(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${s % 60}s` : `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

export class ThreadList {
  constructor(root, store, { onSelect }) {
    this.root = root;
    this.store = store;
    this.onSelect = onSelect;
    this.selected = null;
    this.query = '';
    this.statusFilter = '';
  }

  filter() {
    const q = this.query.toLowerCase();
    const status = this.statusFilter;
    if (!q && !status) return null;
    return (t) =>
      (!status || Store.statusOf(t) === status) &&
      (!q || [t.id, t.name, t.preview, t.nickname, t.activity].some((f) => (f ?? '').toLowerCase().includes(q)));
  }

  draw() {
    const rows = this.store.tree(this.filter());
    if (!this.list) {
      this.list = el('ul', 'thread-tree');
      this.rows = new Map();
      this.root.replaceChildren(this.list);
    }
    // Rows are kept and only their changed cells rewritten: the list is redrawn every second
    // (elapsed times) and whenever a row's status, activity or tokens change.
    const shown = new Set();
    const order = [];
    for (const [thread, depth] of rows) {
      let row = this.rows.get(thread.id);
      if (!row) {
        row = this.makeRow(thread.id);
        this.rows.set(thread.id, row);
      }
      this.fillRow(row, thread, depth);
      shown.add(thread.id);
      order.push(row.li);
    }
    for (const id of this.rows.keys()) if (!shown.has(id)) this.rows.delete(id);
    if (rows.length === 0) order.push(this.empty ?? (this.empty = el('li', 'empty', 'no threads')));
    const children = this.list.children;
    if (children.length !== order.length || order.some((li, i) => children[i] !== li)) {
      this.list.replaceChildren(...order);
    }
  }

  makeRow(threadId) {
    const li = el('li');
    li.dataset.threadId = threadId;
    li.tabIndex = 0;
    const row = {
      li,
      dot: el('span'),
      title: el('span', 'thread-title'),
      status: el('span', 'status-label'),
      elapsed: el('span', 'elapsed'),
      tokens: el('span', 'tokens'),
      activity: el('div', 'activity'),
      cwd: el('span', 'thread-cwd'),
      when: el('span', 'thread-when'),
      held: el('div', 'thread-held'),
    };
    const head = el('div', 'thread-head');
    head.append(row.dot, row.title);
    const meta = el('div', 'thread-meta');
    meta.append(row.status, row.elapsed, row.tokens);
    const place = el('div', 'thread-meta thread-place');
    place.append(row.cwd, row.when);
    li.append(head, meta, place, row.held, row.activity);
    li.addEventListener('click', () => this.onSelect(threadId));
    li.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.onSelect(threadId);
    });
    return row;
  }

  fillRow(row, thread, depth) {
    const status = Store.statusOf(thread);
    const title = threadTitle(thread);
    // A sub-agent's row says its task beneath its name, unless something runs.
    const task = agentName(thread) ? firstLine(thread.preview, 100) : '';
    const activity = thread.activity && status !== 'done' && status !== 'idle' ? stripTerminalCodes(thread.activity).slice(0, 100) : '';
    setIf(row.li, 'className', `thread-row status-${status}${thread.id === this.selected ? ' selected' : ''}`);
    if (row.li.dataset.status !== status) row.li.dataset.status = status;
    setIf(row.li.style, 'paddingLeft', `${(0.5 + depth * 1.2).toFixed(1)}rem`);
    setIf(row.dot, 'className', `dot dot-${status}`);
    setIf(row.title, 'textContent', stripTerminalCodes(title).slice(0, 80));
    setIf(row.status, 'textContent', STATUS_LABEL[status]);
    setIf(row.elapsed, 'textContent', thread.turnStartedAt ? elapsed(Date.now() - thread.turnStartedAt) : '');
    setIf(row.tokens, 'textContent', thread.tokens ? `${thread.tokens.toLocaleString()} tok` : '');
    setIf(row.activity, 'textContent', activity || task);
    setIf(row.activity, 'hidden', !(activity || task));
    if (row.li.dataset.subAgent !== String(Boolean(thread.parentId))) row.li.dataset.subAgent = String(Boolean(thread.parentId));
    setIf(row.cwd, 'textContent', shortPath(thread.cwd, this.home));
    setIf(row.cwd, 'title', thread.cwd ?? '');
    setIf(row.when, 'textContent', ago(thread.lastActiveAt));
    setIf(row.held, 'textContent', heldText(thread, this.store.threads.get(thread.parentId)));
    setIf(row.held, 'hidden', !row.held.textContent);
  }
}

/** Who else holds the thread; a sub-agent held where its parent is says only the pid (the
 *  parent's row names the program: a tree of eight would repeat it eight times). */
function heldText(thread, parent) {
  const by = thread.heldBy;
  if (!by) return '';
  if (parent?.heldBy?.pid === by.pid) return `open in another process: pid ${by.pid}, with its parent`;
  return `open in another process: pid ${by.pid}${by.program ? ` (${by.program})` : ''}`;
}

/** Writes a property only when it changes: an unchanged write still costs style and layout. */
export function setIf(target, property, value) {
  if (target[property] !== value) target[property] = value;
}

export class Transcript {
  constructor(root, store) {
    this.root = root;
    this.store = store;
    this.threadId = null;
    this.nodes = new Map();
    this.dirtyItems = new Set();
    this.newItems = new Set();
    // The drawn turns: turnId → { section, timeline }, where new items of a turn are inserted.
    this.sections = new Map();
    this.full = true;
    this.showAll = false;
    // Whether the view follows the end of the transcript: known from scroll events, so a draw
    // never reads layout it has just invalidated to decide it.
    this.following = true;
    root.addEventListener('scroll', () => {
      this.following = this.atBottom();
    }, { passive: true });
  }

  show(threadId) {
    this.threadId = threadId;
    this.showAll = false;
    this.full = true;
    this.following = true;
  }

  itemChanged(threadId, itemId) {
    if (threadId !== this.threadId) return;
    if (itemId && this.nodes.has(itemId)) this.dirtyItems.add(itemId);
    else if (itemId) this.newItems.add(itemId);
    else this.full = true;
  }

  draw() {
    const thread = this.threadId && this.store.threads.get(this.threadId);
    if (!thread) {
      this.root.replaceChildren(el('div', 'empty', 'Select a thread, or start one below.'));
      this.nodes.clear();
      this.sections.clear();
      this.newItems.clear();
      return;
    }
    if (!this.full && this.insertNewItems(thread)) {
      for (const id of this.dirtyItems) {
        const item = thread.items.get(id);
        const old = this.nodes.get(id);
        if (item && old && !updateItem(old, item)) {
          const fresh = renderItem(item);
          old.replaceWith(fresh);
          this.nodes.set(id, fresh);
        }
      }
      this.dirtyItems.clear();
      this.stickToBottom();
      return;
    }
    this.full = false;
    this.dirtyItems.clear();
    this.newItems.clear();
    this.nodes.clear();
    this.sections.clear();
    const body = el('div', 'transcript-body');
    const header = el('div', 'transcript-header');
    header.append(
      el('h2', null, threadTitle(thread)),
      el('div', 'muted', [`thread ${shortId(thread.id)}`, shortPath(thread.cwd, this.home), thread.model].filter(Boolean).join(' · ')),
    );
    if (thread.tokenHistory.length > 0) {
      const charts = el('div', 'charts');
      charts.append(renderTokenChart(thread), renderContextChart(thread));
      header.append(charts);
    }
    body.append(header);
    const total = thread.turns.reduce((n, t) => n + t.itemIds.length, 0);
    let skip = this.showAll ? 0 : Math.max(0, total - TRANSCRIPT_TAIL_ITEMS);
    if (skip > 0) {
      const more = el('button', 'more show-earlier', `${skip.toLocaleString()} earlier items hidden: show all`);
      more.addEventListener('click', () => {
        this.showAll = true;
        this.full = true;
        this.draw();
      });
      body.append(more);
    }
    for (const turn of thread.turns) {
      if (skip >= turn.itemIds.length) {
        skip -= turn.itemIds.length;
        continue;
      }
      const section = el('section', `turn turn-${turn.status}`);
      section.dataset.turnId = turn.id;
      section.append(el('div', 'turn-label', `turn ${thread.turns.indexOf(turn) + 1} · ${TURN_LABEL[turn.status] ?? turn.status}`));
      for (const id of turn.itemIds.slice(skip)) {
        const item = thread.items.get(id);
        if (!item) continue;
        const node = renderItem(item);
        this.nodes.set(id, node);
        section.append(node);
      }
      skip = 0;
      const plan = thread.plans.get(turn.id);
      if (plan) section.append(renderPlan(plan));
      if (turn.error) section.append(el('div', 'turn-error', stripTerminalCodes(turn.error.message ?? 'failed')));
      const timeline = timelineBox(thread, turn);
      if (timeline) section.append(timeline);
      this.sections.set(turn.id, { section, timeline });
      body.append(section);
    }
    this.root.replaceChildren(body);
    this.stickToBottom();
  }

  /**
   * Puts items that appeared since the last frame into their drawn turn, after the item
   * before them, rather than drawing the transcript again (up to 200 items) for each one; the
   * next whole draw trims the tail again. False when one's turn is not drawn.
   */
  insertNewItems(thread) {
    for (const id of this.newItems) {
      const item = thread.items.get(id);
      const turn = item && thread.turns.find((t) => t.id === item.turnId);
      const drawn = turn && this.sections.get(turn.id);
      if (!drawn) return false;
      if (this.nodes.has(id)) continue;
      const node = renderItem(item);
      let before = null;
      for (let i = turn.itemIds.indexOf(id) - 1; i >= 0 && !before; i -= 1) before = this.nodes.get(turn.itemIds[i]) ?? null;
      if (before) before.after(node);
      else drawn.section.querySelector(':scope > .turn-label').after(node);
      this.nodes.set(id, node);
      // A new tool call belongs on the turn's timeline; an open timeline stays open.
      const timeline = timelineBox(thread, turn);
      if (timeline && drawn.timeline) {
        timeline.open = drawn.timeline.open;
        drawn.timeline.replaceWith(timeline);
      } else if (timeline) {
        drawn.section.append(timeline);
      }
      drawn.timeline = timeline ?? drawn.timeline;
    }
    this.newItems.clear();
    return true;
  }

  atBottom() {
    return this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < 80;
  }

  /** Keeps the end in view while following it: one layout, after all of the frame's writes. */
  stickToBottom() {
    if (this.following) this.root.scrollTop = this.root.scrollHeight;
  }
}

/** A turn's tool calls on a time axis, folded; null when it made none. */
function timelineBox(thread, turn) {
  const timeline = renderTimeline(thread, turn);
  if (timeline.childElementCount === 0) return null;
  const details = el('details', 'timeline-box');
  details.append(el('summary', null, 'tool timeline'), timeline);
  return details;
}

/**
 * Who asks: a sub-agent by its nickname and path, any other thread by its title, each with
 * the short id that tells it from its siblings.
 */
export function askerName(thread, threadId) {
  const id = shortId(threadId);
  const agent = agentName(thread);
  if (agent) return `agent ${agent} · thread ${id}`;
  const title = thread && threadTitle(thread);
  return title && !title.startsWith('thread ') ? `${title} · thread ${id}` : `thread ${id}`;
}

export class ApprovalQueue {
  constructor(root, store, { onDecide, onOpen }) {
    this.root = root;
    this.store = store;
    this.onDecide = onDecide;
    this.onOpen = onOpen;
  }

  draw() {
    const approvals = this.store.approvals;
    this.root.hidden = approvals.length === 0;
    this.shown = approvals.length > 0;
    const list = el('div', 'approvals-list');
    list.append(el('h2', null, `Approvals (${approvals.length})`));
    approvals.forEach((request, index) => {
      const p = request.params;
      const thread = this.store.threads.get(p.threadId);
      const card = el('div', `approval${index === 0 ? ' first' : ''}`);
      card.dataset.requestId = String(request.id);
      card.dataset.threadId = String(p.threadId ?? '');
      const what = request.method === 'item/fileChange/requestApproval'
        ? `edit files${p.grantRoot ? ` under ${p.grantRoot}` : ''}`
        : commandText(p.command);
      const from = el('button', 'link approval-from', askerName(thread, p.threadId));
      from.type = 'button';
      from.title = 'open this thread';
      from.addEventListener('click', () => this.onOpen(p.threadId));
      card.append(from, el('code', 'approval-what', stripTerminalCodes(what)));
      if (p.reason) card.append(el('div', 'muted', stripTerminalCodes(p.reason)));
      if (p.cwd) card.append(el('div', 'muted', `in ${p.cwd}`));
      const buttons = el('div', 'buttons');
      for (const [decision, label, key] of [
        ['accept', 'Approve once', 'y'],
        ['acceptForSession', 'For session', 'a'],
        ['decline', 'Deny', 'n'],
        ['cancel', 'Abort turn', 'Esc'],
      ]) {
        const button = el('button', `decide decide-${decision}`, label);
        if (index === 0) button.append(el('kbd', null, key));
        button.addEventListener('click', () => this.onDecide(request, decision));
        buttons.append(button);
      }
      card.append(buttons);
      list.append(card);
    });
    this.root.replaceChildren(list);
  }
}
