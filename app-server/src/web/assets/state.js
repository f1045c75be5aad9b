// What the page knows: threads (with their turns and items, keyed by id so a resume after a
// reconnect replaces rather than duplicates), and the approvals waiting across threads.
// Pure data; views.js draws it.

/** The tail of a command's output kept in memory; the rest is counted, not kept. */
export const OUTPUT_TAIL_CHARS = 256 * 1024;

// The fields deltas append to. An item's `textRevision` changes when one of them changes other
// than by growing at its end (replaced by a completed item, or cut to its tail), so a view
// that draws only what was appended knows when to draw the item afresh.
const STREAMED_FIELDS = ['text', 'summaryText', 'aggregatedOutput', 'output'];

export class Store {
  constructor() {
    this.threads = new Map();
    this.approvals = [];
    this.listeners = new Set();
  }

  subscribe(listener) {
    this.listeners.add(listener);
  }

  changed(threadId, itemId) {
    for (const listener of this.listeners) listener(threadId, itemId);
  }

  thread(id) {
    let thread = this.threads.get(id);
    if (!thread) {
      thread = {
        id,
        parentId: null,
        nickname: null,
        // Its task path in the tree (`/root/explore`), for a sub-agent.
        agentPath: null,
        name: null,
        preview: '',
        cwd: '',
        model: null,
        wireStatus: { type: 'notLoaded' },
        createdAt: 0,
        turns: [],
        items: new Map(),
        plans: new Map(),
        tokenHistory: [],
        tokens: 0,
        contextWindow: null,
        subscribed: false,
        // How the index says its last turn ended (`troupe/thread/lastTurns`), for a thread
        // whose turns the page does not hold.
        lastTurn: null,
        // The process that holds it open when that is not this server ({pid, program}).
        heldBy: null,
        updatedAt: 0,
        // The last time anything happened to it (ms): its file's last write, or an event.
        lastActiveAt: 0,
        activity: '',
        turnStartedAt: null,
        toolTimes: new Map(),
        version: 0,
      };
      this.threads.set(id, thread);
    }
    return thread;
  }

  /** A `Thread` object from the wire (thread/list, thread/start, thread/resume). */
  mergeThread(wire, { withTurns = false } = {}) {
    const thread = this.thread(wire.id);
    thread.parentId = wire.parentThreadId ?? thread.parentId;
    thread.nickname = wire.agentNickname ?? thread.nickname;
    thread.agentPath = wire.source?.subAgent?.thread_spawn?.agent_path ?? thread.agentPath;
    thread.name = wire.name ?? thread.name;
    thread.preview = wire.preview || thread.preview;
    thread.cwd = wire.cwd || thread.cwd;
    thread.model = wire.model ?? thread.model;
    thread.createdAt = wire.createdAt || thread.createdAt;
    thread.updatedAt = wire.updatedAt || thread.updatedAt;
    thread.lastActiveAt = Math.max(thread.lastActiveAt, (thread.updatedAt || thread.createdAt) * 1000);
    if (wire.status) thread.wireStatus = wire.status;
    if (withTurns && Array.isArray(wire.turns)) {
      // The server's view replaces ours wholesale: nothing seen before a drop is repeated.
      thread.turns = [];
      thread.items = new Map();
      for (const turn of wire.turns) {
        const record = this.turn(thread, turn.id);
        record.status = turn.status;
        record.error = turn.error ?? null;
        record.startedAt = turn.startedAt ? turn.startedAt * 1000 : null;
        for (const item of turn.items ?? []) this.putItem(thread, record, item);
      }
      const open = thread.turns.at(-1);
      thread.turnStartedAt = open?.status === 'inProgress' ? open.startedAt ?? Date.now() : null;
    }
    thread.version += 1;
    this.changed(thread.id);
    return thread;
  }

  turn(thread, turnId) {
    let turn = thread.turns.find((t) => t.id === turnId);
    if (!turn) {
      turn = { id: turnId, status: 'inProgress', error: null, itemIds: [], startedAt: null };
      thread.turns.push(turn);
    }
    return turn;
  }

  putItem(thread, turn, item) {
    const known = thread.items.get(item.id);
    if (known) {
      // A completed item replaces the started one, keeping streamed text it lacks.
      const merged = { ...known, ...item, turnId: turn.id };
      if (item.type === 'commandExecution' && item.aggregatedOutput == null) {
        merged.aggregatedOutput = known.aggregatedOutput;
      }
      if (STREAMED_FIELDS.some((field) => merged[field] !== known[field])) {
        merged.textRevision = (known.textRevision ?? 0) + 1;
      }
      thread.items.set(item.id, merged);
      return merged;
    }
    // A thread is titled by its first prompt as soon as it is sent, not when the server's
    // list next says so.
    if (item.type === 'userMessage' && !thread.preview) {
      thread.preview = (item.content ?? []).filter((part) => part.type === 'text').map((part) => part.text).join('\n');
    }
    const record = { ...item, turnId: turn.id, droppedChars: 0, textRevision: 0 };
    thread.items.set(item.id, record);
    turn.itemIds.push(item.id);
    return record;
  }

  /** Applies one notification; returns the thread it touched (now active). */
  apply(message) {
    const thread = this.applyOne(message);
    if (thread && message.method !== 'serverRequest/resolved') {
      thread.lastActiveAt = Math.max(thread.lastActiveAt, message.emittedAtMs ?? Date.now());
    }
    return thread;
  }

  applyOne(message) {
    const p = message.params ?? {};
    const at = message.emittedAtMs ?? Date.now();
    switch (message.method) {
      case 'thread/started':
        return this.mergeThread(p.thread);
      case 'thread/status/changed': {
        const thread = this.thread(p.threadId);
        thread.wireStatus = p.status;
        return this.touch(thread);
      }
      // The server follows a thread another process runs: read-only on this page.
      case 'troupe/thread/held': {
        const thread = this.thread(p.threadId);
        thread.heldBy = p.heldBy;
        return this.touch(thread);
      }
      case 'turn/started': {
        const thread = this.thread(p.threadId);
        const turn = this.turn(thread, p.turn.id);
        turn.status = 'inProgress';
        turn.startedAt = at;
        thread.turnStartedAt = at;
        thread.activity = 'thinking';
        return this.touch(thread);
      }
      case 'turn/completed': {
        const thread = this.thread(p.threadId);
        const turn = this.turn(thread, p.turn.id);
        turn.status = p.turn.status;
        turn.error = p.turn.error ?? null;
        thread.turnStartedAt = null;
        thread.activity = p.turn.status === 'failed' ? p.turn.error?.message ?? 'failed' : '';
        return this.touch(thread);
      }
      case 'item/started':
      case 'item/completed': {
        const thread = this.thread(p.threadId);
        const turn = this.turn(thread, p.turnId);
        const item = this.putItem(thread, turn, p.item);
        const times = thread.toolTimes.get(item.id) ?? { start: at, end: null };
        if (message.method === 'item/completed') times.end = at;
        thread.toolTimes.set(item.id, times);
        thread.activity = message.method === 'item/started' ? activityOf(item) : thread.activity;
        return this.touch(thread, item.id);
      }
      case 'item/agentMessage/delta':
        return this.appendText(p, 'agentMessage', 'text', p.delta);
      case 'item/reasoning/summaryTextDelta':
        return this.appendText(p, 'reasoning', 'summaryText', p.delta);
      case 'item/commandExecution/outputDelta':
        return this.appendText(p, 'commandExecution', 'aggregatedOutput', p.delta);
      case 'item/fileChange/outputDelta':
        return this.appendText(p, 'fileChange', 'output', p.delta);
      case 'turn/plan/updated': {
        const thread = this.thread(p.threadId);
        thread.plans.set(p.turnId, { explanation: p.explanation ?? null, plan: p.plan ?? [] });
        return this.touch(thread);
      }
      case 'turn/diff/updated':
        return this.thread(p.threadId);
      case 'thread/tokenUsage/updated': {
        const thread = this.thread(p.threadId);
        const usage = p.tokenUsage;
        thread.tokens = usage.total?.totalTokens ?? thread.tokens;
        thread.contextWindow = usage.modelContextWindow ?? thread.contextWindow;
        // One entry a turn: the thread's total at its end, what the turn itself used, and
        // the context its last request carried.
        const last = thread.tokenHistory.at(-1);
        const same = last && last.turnId === p.turnId;
        const before = same ? last.total - last.used : last?.total ?? 0;
        const entry = {
          turnId: p.turnId,
          total: thread.tokens,
          used: Math.max(thread.tokens - before, 0),
          context: usage.last?.totalTokens ?? 0,
        };
        if (same) thread.tokenHistory[thread.tokenHistory.length - 1] = entry;
        else thread.tokenHistory.push(entry);
        return this.touch(thread);
      }
      case 'serverRequest/resolved':
        this.resolveApproval(p.requestId);
        return this.thread(p.threadId);
      case 'error': {
        const thread = p.threadId ? this.thread(p.threadId) : null;
        if (thread) {
          thread.activity = `error: ${p.error?.message ?? 'unknown'}`;
          this.touch(thread);
        }
        return thread;
      }
      case 'troupe/lagged':
        return this.thread(p.threadId);
      default:
        return null;
    }
  }

  appendText(p, type, field, delta) {
    const thread = this.thread(p.threadId);
    const turn = this.turn(thread, p.turnId);
    let item = thread.items.get(p.itemId);
    if (!item) item = this.putItem(thread, turn, { id: p.itemId, type });
    let text = (item[field] ?? '') + delta;
    if (text.length > OUTPUT_TAIL_CHARS) {
      item.droppedChars = (item.droppedChars ?? 0) + text.length - OUTPUT_TAIL_CHARS;
      text = text.slice(text.length - OUTPUT_TAIL_CHARS);
      item.textRevision = (item.textRevision ?? 0) + 1;
    }
    item[field] = text;
    return this.touch(thread, item.id);
  }

  touch(thread, itemId) {
    thread.version += 1;
    this.changed(thread.id, itemId);
    return thread;
  }

  addApproval(request) {
    if (this.approvals.some((a) => a.id === request.id)) return;
    this.approvals.push({ id: request.id, method: request.method, params: request.params ?? {} });
    this.changed(request.params?.threadId);
  }

  resolveApproval(requestId) {
    const before = this.approvals.length;
    this.approvals = this.approvals.filter((a) => a.id !== requestId);
    if (this.approvals.length !== before) this.changed(null);
  }

  /** The thread's status as the page shows it. */
  static statusOf(thread) {
    const wire = thread.wireStatus ?? { type: 'notLoaded' };
    if (wire.type === 'active') {
      return (wire.activeFlags ?? []).includes('waitingOnApproval') ? 'approval' : 'running';
    }
    if (wire.type === 'systemError') return 'failed';
    // Held by another process and read, not followed: the server's answer is newer than any
    // read of its turns. Followed, its turns are live.
    const polled = thread.heldBy && !thread.subscribed;
    const last = polled ? thread.lastTurn : thread.turns.at(-1)?.status ?? thread.lastTurn;
    if (last === 'failed') return 'failed';
    if (last === 'completed') return 'done';
    if (last === 'interrupted' || last === 'incomplete') return 'interrupted';
    // Running in another process: nothing live reaches this page, but it is not idle.
    if (last === 'running' && wire.type === 'notLoaded') return 'running';
    return 'idle';
  }

  /** Roots first (newest first), each followed by its sub-agents, as [thread, depth]. */
  tree(filter) {
    const all = [...this.threads.values()];
    const children = new Map();
    for (const thread of all) {
      const parent = thread.parentId && this.threads.has(thread.parentId) ? thread.parentId : null;
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(thread);
    }
    for (const list of children.values()) list.sort((a, b) => b.createdAt - a.createdAt);
    const rows = [];
    const visit = (thread, depth) => {
      rows.push([thread, depth]);
      for (const child of children.get(thread.id) ?? []) visit(child, depth + 1);
    };
    for (const root of children.get(null) ?? []) visit(root, 0);
    if (!filter) return rows;
    // A match keeps its ancestors visible so the tree still reads.
    const keep = new Set();
    for (const [thread] of rows) {
      if (!filter(thread)) continue;
      for (let t = thread; t && !keep.has(t.id); t = this.threads.get(t.parentId)) keep.add(t.id);
    }
    return rows.filter(([thread]) => keep.has(thread.id));
  }
}

const COLLAB_ACTIVITY = {
  spawnAgent: 'spawning an agent',
  wait: 'waiting for its agents',
  sendMessage: 'messaging an agent',
  sendInput: 'messaging an agent',
  followupTask: 'giving an agent a follow-up task',
  resumeAgent: 'resuming an agent',
  interruptAgent: 'interrupting an agent',
  closeAgent: 'closing an agent',
  listAgents: 'listing its agents',
};

function activityOf(item) {
  switch (item.type) {
    case 'commandExecution':
      return `running ${commandText(item.command)}`;
    case 'fileChange':
      return `editing ${(item.changes ?? []).map((c) => c.path).join(', ') || 'files'}`;
    case 'agentMessage':
      return 'writing';
    case 'userMessage':
      return 'thinking';
    case 'reasoning':
      return 'thinking';
    case 'collabAgentToolCall':
      return COLLAB_ACTIVITY[item.tool] ?? 'working with its agents';
    case 'dynamicToolCall':
    case 'mcpToolCall':
      return `tool ${item.tool ?? ''}`;
    default:
      return item.type ?? '';
  }
}

export function commandText(command) {
  if (Array.isArray(command)) return command.join(' ');
  return String(command ?? '');
}
