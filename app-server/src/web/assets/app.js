// The supervisor page: wires the app-server client (rpc.js) to the store (state.js) and the
// views (views.js), and turns the composer, buttons and keys into JSON-RPC calls.

import { Rpc } from './rpc.js';
import { Store } from './state.js';
import { ApprovalQueue, ThreadList, Transcript, setIf } from './views.js';
import { setAgentNamer } from './render.js';
import { agentName, homeOf, shortId, threadTitle } from './labels.js';

const LIST_POLL_MS = 3000;
const $ = (id) => document.getElementById(id);

function takeToken() {
  const match = location.hash.match(/(?:^#|&)token=([^&]*)/);
  if (match) {
    const token = decodeURIComponent(match[1]);
    // Kept for a reload of this tab only, and taken out of the address bar and history.
    sessionStorage.setItem('troupe-token', token);
    history.replaceState(null, '', location.pathname);
    return token;
  }
  return sessionStorage.getItem('troupe-token');
}

const store = new Store();
let rpc = null;
let dirty = { list: true, transcript: true, approvals: true };
let frameQueued = false;

const list = new ThreadList($('threads'), store, { onSelect: (id) => select(id) });
const transcript = new Transcript($('transcript'), store);
const approvals = new ApprovalQueue($('approvals'), store, {
  onDecide: (request, decision) => decide(request, decision),
  onOpen: (id) => select(id),
});

// A collaboration call names its agents by what the page knows of their threads.
setAgentNamer((id) => {
  const thread = store.threads.get(id);
  return agentName(thread) ?? (thread?.preview ? threadTitle(thread) : `agent ${shortId(id)}`);
});

function redraw() {
  if (frameQueued) return;
  frameQueued = true;
  requestAnimationFrame(() => {
    frameQueued = false;
    if (dirty.list) list.draw();
    if (dirty.transcript) transcript.draw();
    if (dirty.approvals) approvals.draw();
    updateComposer();
    dirty = { list: false, transcript: false, approvals: false };
  });
}

// What a thread's row shows; a streamed delta that changes none of it redraws no list.
function rowKey(thread) {
  return thread ? `${Store.statusOf(thread)}|${thread.activity}|${thread.tokens}|${thread.turnStartedAt}|${thread.preview}|${thread.parentId}|${thread.nickname}|${thread.heldBy?.pid}` : '';
}

store.subscribe((threadId, itemId) => {
  const thread = threadId ? store.threads.get(threadId) : null;
  const key = rowKey(thread);
  if (!thread || !itemId || thread.rowKey !== key) {
    if (thread) thread.rowKey = key;
    dirty.list = true;
  }
  // The queue redraws only while it holds something (or to empty itself): a stream of
  // deltas with no question open does not rebuild it every frame.
  if (store.approvals.length > 0 || approvals.shown) dirty.approvals = true;
  if (threadId === transcript.threadId) {
    transcript.itemChanged(threadId, itemId);
    dirty.transcript = true;
  }
  // A sub-agent of the open thread got its name: its parent's agent calls name it now.
  const label = thread ? `${thread.nickname}|${thread.agentPath}|${thread.preview}` : '';
  if (thread && thread.parentId && thread.parentId === transcript.threadId && thread.labelKey !== label) {
    thread.labelKey = label;
    transcript.full = true;
    dirty.transcript = true;
  }
  redraw();
});

function notice(text, kind = 'info') {
  const box = $('notice');
  box.textContent = text;
  box.dataset.kind = kind;
  box.hidden = !text;
}

function setConnection(state, detail) {
  const badge = $('connection');
  badge.dataset.state = state;
  badge.textContent = state;
  if (state === 'refused') {
    notice('The server refused this page: the token is missing or wrong, or this origin is not allowed. Open the URL `troupe web` printed.', 'error');
  } else if (state === 'failed') {
    notice(`Connection failed: ${detail ?? ''}`, 'error');
  } else if (state === 'open') {
    notice('');
    list.home = homeOf(rpc?.server?.codexHome);
    transcript.home = list.home;
    onConnected();
  } else if (state === 'reconnecting') {
    // Open questions come again with thread/resume; drop the stale copies.
    store.approvals = [];
    dirty.approvals = true;
    redraw();
  }
}

async function onConnected() {
  // After a drop: every thread we followed is resumed; its turns replace what we had.
  const followed = [...store.threads.values()].filter((t) => t.subscribed);
  await Promise.all(followed.map((t) => resume(t.id)));
  await refreshList();
}

async function resume(threadId) {
  try {
    const result = await rpc.call('thread/resume', { threadId });
    // A running sub-agent too: the server watches it through its parent's session.
    const thread = store.mergeThread(result.thread, { withTurns: true });
    thread.subscribed = true;
    thread.model = result.model ?? thread.model;
    if (threadId === transcript.threadId) transcript.full = true;
    dirty.transcript = true;
    redraw();
  } catch (err) {
    const thread = store.thread(threadId);
    thread.subscribed = false;
    // Another process holds it: shown read-only from its rollout, refreshed at each poll.
    if (thread.heldBy || /open in another Troupe process/.test(err.message)) {
      await readHeld(threadId);
      return;
    }
    notice(`Cannot open thread ${shortId(threadId)}: ${err.message}`, 'error');
  }
}

async function readHeld(threadId) {
  try {
    const result = await rpc.call('thread/read', { threadId, includeTurns: true });
    store.mergeThread(result.thread, { withTurns: true });
    if (threadId === transcript.threadId) transcript.full = true;
    dirty.transcript = true;
    redraw();
  } catch (err) {
    notice(`Cannot read thread ${shortId(threadId)}: ${err.message}`, 'error');
  }
}

// How the threads nobody follows ended, asked again when one changed on disk, and at every
// poll for those another process holds (whether a turn runs there changes without a write
// this server's index sees).
async function refreshLastTurns() {
  const stale = [...store.threads.values()].filter((t) => !t.subscribed && (t.lastTurnAt !== t.updatedAt || t.heldBy));
  if (stale.length === 0) return;
  const asked = new Map(stale.slice(0, 200).map((t) => [t.id, t.updatedAt]));
  let result;
  try {
    result = await rpc.call('troupe/thread/lastTurns', { threadIds: [...asked.keys()] });
  } catch {
    return;
  }
  for (const { threadId, status, heldBy } of result.data ?? []) {
    const thread = store.threads.get(threadId);
    if (!thread) continue;
    thread.lastTurn = status;
    thread.heldBy = heldBy ?? null;
    thread.lastTurnAt = asked.get(threadId);
    store.touch(thread);
    if (thread.heldBy && threadId === transcript.threadId) readHeld(threadId);
  }
}

async function refreshList() {
  if (!rpc) return;
  let result;
  try {
    result = await rpc.call('thread/list', { limit: 100 });
  } catch {
    return;
  }
  const merged = (result.data ?? []).map((wire) => [store.mergeThread(wire), wire]);
  for (const [thread, wire] of merged) {
    // Follow live what the user cannot see otherwise: sub-agents of followed threads and
    // threads another client runs.
    const parent = thread.parentId && store.threads.get(thread.parentId);
    if (!thread.subscribed && (parent?.subscribed || wire.status?.type === 'active')) follow(thread.id);
    // A running sub-agent's approval requests come through the root of its tree: follow it.
    if (wire.status?.type === 'active') followAncestors(thread);
  }
  await refreshLastTurns();
}

function follow(threadId) {
  const thread = store.thread(threadId);
  if (thread.subscribed) return;
  thread.subscribed = true;
  resume(threadId);
}

function followAncestors(thread) {
  const seen = new Set();
  for (let t = store.threads.get(thread.parentId); t && !seen.has(t.id); t = store.threads.get(t.parentId)) {
    seen.add(t.id);
    follow(t.id);
  }
}

// A followed thread spawned sub-agents: follow them at once, live, not at the next poll.
function followSpawned(message) {
  const item = message.params?.item;
  if (message.method !== 'item/completed' || item?.type !== 'collabAgentToolCall') return;
  for (const id of item.receiverThreadIds ?? []) {
    const child = store.thread(id);
    child.parentId = child.parentId ?? message.params.threadId;
    if (!child.subscribed) {
      child.subscribed = true;
      resume(id);
    }
  }
}

function select(threadId) {
  list.selected = threadId;
  transcript.show(threadId);
  const thread = store.threads.get(threadId);
  if (thread && !thread.subscribed) {
    thread.subscribed = true;
    resume(threadId);
  }
  dirty.list = true;
  dirty.transcript = true;
  document.body.classList.add('showing-transcript');
  redraw();
}

function decide(request, decision) {
  if (rpc.answer(request.id, { decision })) {
    // Other clients learn through serverRequest/resolved; we drop ours now.
    store.resolveApproval(request.id);
  }
}

function selectedThread() {
  return transcript.threadId ? store.threads.get(transcript.threadId) : null;
}

// Runs every frame something changed: it writes only what differs, since setting even the
// same textContent replaces the text node and costs the frame a layout.
function updateComposer() {
  const thread = selectedThread();
  // A thread another process holds starts its turns there. Followed (the server tails it and
  // passes steering, interrupts and answers to the holder), its running turn can be steered
  // and interrupted here; only read from its rollout, it is read-only.
  const held = thread?.heldBy;
  const followed = Boolean(held) && thread.subscribed;
  const running = Boolean(thread) && (!held || followed) && ['running', 'approval'].includes(Store.statusOf(thread));
  setIf($('send'), 'textContent', !thread ? 'Start thread' : running ? 'Steer' : 'Send');
  setIf($('send'), 'disabled', Boolean(held) && !running);
  setIf($('interrupt'), 'disabled', !running);
  setIf($('new-thread-options'), 'hidden', Boolean(thread));
  const holder = held ? `${threadTitle(thread)} is open in another process (pid ${held.pid})` : '';
  setIf($('composer-target'), 'textContent', !thread ? 'new thread'
    : followed ? `${holder}: steer or interrupt its turn here; new turns start there`
      : held ? `${holder}: read-only here`
        : `to ${threadTitle(thread)}`);
}

async function send(event) {
  event.preventDefault();
  const prompt = $('prompt').value.trim();
  if (!prompt || !rpc) return;
  const input = [{ type: 'text', text: prompt, text_elements: [] }];
  const thread = selectedThread();
  try {
    if (!thread) {
      const params = {};
      for (const [field, key] of [['cwd', 'cwd'], ['model', 'model'], ['sandbox', 'sandbox'], ['approval', 'approvalPolicy']]) {
        const value = $(field).value.trim();
        if (value) params[key] = value;
      }
      const started = await rpc.call('thread/start', params);
      const created = store.mergeThread(started.thread, { withTurns: true });
      created.subscribed = true;
      created.model = started.model ?? created.model;
      // Titled by its prompt from now on, not by its id until the turn ends.
      created.preview = created.preview || prompt;
      store.touch(created);
      select(created.id);
      await rpc.call('turn/start', { threadId: created.id, input });
    } else if (['running', 'approval'].includes(Store.statusOf(thread))) {
      await rpc.call('turn/steer', { threadId: thread.id, expectedTurnId: thread.turns.at(-1)?.id, input });
    } else {
      await rpc.call('turn/start', { threadId: thread.id, input });
    }
    $('prompt').value = '';
  } catch (err) {
    notice(err.message, 'error');
  }
}

async function interrupt() {
  const thread = selectedThread();
  const turn = thread?.turns.at(-1);
  if (!turn) return;
  try {
    await rpc.call('turn/interrupt', { threadId: thread.id, turnId: turn.id });
  } catch (err) {
    notice(err.message, 'error');
  }
}

function typing(target) {
  return ['INPUT', 'TEXTAREA', 'SELECT'].includes(target?.tagName);
}

document.addEventListener('keydown', (event) => {
  if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
  const first = store.approvals[0];
  if (!first) return;
  const decision = { y: 'accept', a: 'acceptForSession', n: 'decline', Escape: 'cancel' }[event.key];
  if (decision) {
    event.preventDefault();
    decide(first, decision);
  }
});

$('composer').addEventListener('submit', send);
$('prompt').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) send(event);
});
$('interrupt').addEventListener('click', interrupt);
$('new-thread').addEventListener('click', () => {
  list.selected = null;
  transcript.show(null);
  document.body.classList.remove('showing-transcript');
  dirty = { list: true, transcript: true, approvals: true };
  redraw();
});
$('back').addEventListener('click', () => document.body.classList.remove('showing-transcript'));
$('filter').addEventListener('input', (event) => {
  list.query = event.target.value;
  dirty.list = true;
  redraw();
});
$('status-filter').addEventListener('change', (event) => {
  list.statusFilter = event.target.value;
  dirty.list = true;
  redraw();
});

const token = takeToken();
if (!token) {
  setConnection('refused');
} else {
  rpc = new Rpc({
    url: `ws://${location.host}/`,
    token,
    onNotification: (message) => {
      store.apply(message);
      followSpawned(message);
      // Dropped from a thread for being slow: catch up from the server's view of it.
      if (message.method === 'troupe/lagged') resume(message.params.threadId);
    },
    onRequest: (request) => {
      if (request.method.endsWith('/requestApproval')) {
        store.addApproval(request);
        // A sub-agent the page has not listed yet: learn its name and place in the tree.
        if (!store.threads.has(request.params?.threadId)) refreshList();
      }
      else rpc.socket?.send(JSON.stringify({ id: request.id, error: { code: -32601, message: `the page does not handle ${request.method}` } }));
    },
    onState: setConnection,
  });
  rpc.connect();
  setInterval(refreshList, LIST_POLL_MS);
}
// Elapsed times move even when nothing else does.
setInterval(() => {
  dirty.list = true;
  redraw();
}, 1000);
redraw();

// For the browser tests and the curious: the page's state and a way to drop the socket.
window.troupePage = { store, dropConnection: () => rpc?.dropForTest() };
