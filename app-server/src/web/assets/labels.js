// How the page names things: threads by their title (never a raw id when something better is
// known), agents by nickname and path, ids by their telling end, paths with home as `~`, times
// as "5 min ago", and transcript items in plain words rather than API names.

import { stripTerminalCodes } from './markdown.js';

/**
 * An id short enough to read that still tells siblings apart: UUIDv7 ids made together share
 * their leading time bits, so the distinguishing end is kept (`…8c9d0e1f`).
 */
export function shortId(id) {
  const text = String(id ?? '');
  const hex = text.replaceAll('-', '');
  return hex.length > 8 ? `…${hex.slice(-8)}` : text;
}

/** The first line of a text, trimmed to `max` characters. */
export function firstLine(text, max = 80) {
  const line = stripTerminalCodes(String(text ?? '')).split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `Ada (/root/t1)`, or whichever of the two is known; null for a thread that is no agent. */
export function agentName(thread) {
  if (!thread?.nickname && !thread?.agentPath) return null;
  if (thread.nickname && thread.agentPath) return `${thread.nickname} (${thread.agentPath})`;
  return thread.nickname ?? thread.agentPath;
}

/**
 * A thread's title: its name, a sub-agent's nickname and path, else its first prompt; only a
 * thread with none of these is named by its short id.
 */
export function threadTitle(thread) {
  if (!thread) return '';
  const name = firstLine(thread.name);
  if (name) return name;
  const agent = agentName(thread);
  if (agent) return agent;
  const prompt = firstLine(thread.preview);
  return prompt || `thread ${shortId(thread.id)}`;
}

/** The home directory the server runs under, as far as the page can tell. */
export function homeOf(codexHome) {
  const match = String(codexHome ?? '').match(/^(.+)\/\.(troupe|codex)\/?$/);
  return match ? match[1] : null;
}

/**
 * A cwd for a narrow column: home as `~` (the server's home when known, else a `/home/NAME`,
 * `/Users/NAME` or `/root` prefix), and a long path cut to its last three parts.
 */
export function shortPath(path, home) {
  let text = String(path ?? '');
  if (!text) return '';
  const prefix = home && (text === home || text.startsWith(`${home}/`))
    ? home
    : text.match(/^(\/home\/[^/]+|\/Users\/[^/]+|\/root)(?=\/|$)/)?.[1];
  if (prefix) text = `~${text.slice(prefix.length)}`;
  const parts = text.split('/');
  if (parts.length > 4) text = `…/${parts.slice(-3).join('/')}`;
  return text;
}

/** `just now`, `42 s ago`, `5 min ago`, `3 h ago`, `2 d ago`. */
export function ago(ms, now = Date.now()) {
  if (!ms) return '';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/**
 * A collaboration call in words: `Spawned Ada (/root/t1)`, `Waiting for Ada (/root/t1), Bo
 * (/root/t2)`. `nameOf(threadId)` names a receiver (its nickname and path when the page
 * knows the thread, its short id otherwise).
 */
export function collabLabel(item, nameOf) {
  const names = (item.receiverThreadIds ?? []).map(nameOf).join(', ');
  const running = item.status === 'inProgress';
  const failed = item.status === 'failed' || item.status === 'declined';
  const them = names || 'an agent';
  const text = {
    spawnAgent: running ? 'Spawning an agent' : failed ? 'Could not spawn an agent' : `Spawned ${them}`,
    wait: running ? `Waiting for ${names || 'agents'}` : `Waited for ${names || 'agents'}`,
    sendMessage: `${failed ? 'Could not send' : 'Sent'} a message to ${them}`,
    sendInput: `${failed ? 'Could not send' : 'Sent'} a message to ${them}`,
    followupTask: `${failed ? 'Could not give' : 'Gave'} ${them} a follow-up task`,
    resumeAgent: `${failed ? 'Could not resume' : 'Resumed'} ${them}`,
    interruptAgent: `${failed ? 'Could not interrupt' : 'Interrupted'} ${them}`,
    closeAgent: `${failed ? 'Could not close' : 'Closed'} ${them}`,
    listAgents: 'Listed the agents',
  }[item.tool];
  return text ?? `${item.tool ?? 'agent call'}${names ? ` ${names}` : ''}${failed ? ' (failed)' : ''}`;
}

/** What an item other than a message, command, edit or agent call is, in words. */
export function itemKindLabel(item) {
  const tool = item.tool ? ` ${item.tool}` : '';
  switch (item.type) {
    case 'mcpToolCall':
      return `Tool${tool}${item.server ? ` (${item.server})` : ''}`;
    case 'dynamicToolCall':
      return `Tool${tool}`;
    case 'webSearch':
      return 'Web search';
    case 'imageView':
      return 'Viewed an image';
    case 'contextCompaction':
      return 'Context compacted';
    case 'enteredReviewMode':
      return 'Review started';
    case 'exitedReviewMode':
      return 'Review finished';
    case 'hookPrompt':
      return 'Hook';
    default:
      return `${String(item.type ?? 'item').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}${tool}`;
  }
}

/** A command's status in the words the TUI uses. */
export function commandStatusLabel(item) {
  const exit = item.exitCode === undefined || item.exitCode === null ? '' : ` exit ${item.exitCode}`;
  switch (item.status) {
    case 'declined':
      return 'denied';
    case 'inProgress':
    case undefined:
      return 'running';
    case 'completed':
      return `done${exit}`;
    default:
      return `${item.status}${exit}`;
  }
}
