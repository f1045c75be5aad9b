// A small, safe markdown renderer: it builds DOM nodes and sets only textContent and a few
// vetted attributes, so model text can never become markup. No raw HTML is recognised
// (`<script>` stays the literal text "<script>"); links keep only http(s) targets.

/** Removes ANSI escape sequences and control characters other than newline and tab. */
export function stripTerminalCodes(text) {
  return text
    // CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and two-character escapes.
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?/g, '')
    .replace(/\x1b[@-Z\\-_]/g, '')
    .replace(/[\x00-\x08\x0b-\x1f\x7f\u009b]/g, '');
}

/** An http(s) URL as a string, or null for any other scheme (javascript:, data:, …). */
export function safeHref(raw) {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Inline spans: `code`, **strong**, *em* / _em_, [text](url), bare https URLs.
const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\b_([^_]+)_\b|\[([^\]]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

export function renderInline(text, parent) {
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) parent.append(text.slice(last, match.index));
    last = match.index + match[0].length;
    if (match[1]) {
      parent.append(el('code', null, match[2]));
    } else if (match[3] !== undefined) {
      renderInline(match[3], parent.appendChild(el('strong')));
    } else if (match[4] !== undefined || match[5] !== undefined) {
      renderInline(match[4] ?? match[5], parent.appendChild(el('em')));
    } else if (match[6] !== undefined) {
      parent.append(link(match[6], match[7]));
    } else {
      parent.append(link(match[8], match[8]));
    }
  }
  if (last < text.length) parent.append(text.slice(last));
}

function link(label, target) {
  const href = safeHref(target);
  if (!href) {
    // Not a web link: shown as the text it was, never followed.
    return document.createTextNode(`[${label}](${target})`);
  }
  const a = el('a', null, label);
  a.href = href;
  a.rel = 'noopener noreferrer';
  a.target = '_blank';
  return a;
}

/** Renders markdown `text` into a new DocumentFragment. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  new MarkdownStream(out).update(text);
  return out;
}

// What a line is, in the order the renderer tests it (a fence is tested first, and inside a
// fence only its closing marker counts).
const FENCE = /^\s*(```+|~~~+)\s*([\w+-]*)/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const LIST_ITEM = /^\s*(?:[-*+]|(\d+)[.)])\s+(?:\[([ xX])\]\s+)?(.*)$/;
const QUOTE = /^\s*>\s?/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
// An OSC sequence (ESC ] …) with no terminator yet: it goes on into the next line.
const OPEN_OSC = /\x1b\][^\x07\x1b]*$/;

/**
 * One line without terminal codes. An OSC sequence left open at the end of a line goes on
 * into the next ones up to its terminator: `state.inOsc` carries that from line to line.
 */
function cleanLine(raw, state) {
  let line = raw;
  if (state.inOsc) {
    const stop = line.search(/[\x07\x1b]/);
    if (stop === -1) return '';
    line = line.slice(line[stop] === '\x07' ? stop + 1 : line[stop + 1] === '\\' ? stop + 2 : stop);
    state.inOsc = false;
  }
  state.inOsc = OPEN_OSC.test(line);
  return stripTerminalCodes(line);
}

/**
 * Plain text (a reasoning summary) drawn as it streams in, like `MarkdownStream`: finished
 * lines are appended once, the unfinished last one is drawn again on each update.
 */
export class PlainTextStream {
  constructor(node) {
    this.node = node;
    this.consumed = 0;
    this.inOsc = false;
    this.provisional = null;
  }

  update(text) {
    this.provisional?.remove();
    this.provisional = null;
    let finished = '';
    let end = text.indexOf('\n', this.consumed);
    while (end !== -1) {
      finished += `${cleanLine(text.slice(this.consumed, end), this)}\n`;
      this.consumed = end + 1;
      end = text.indexOf('\n', this.consumed);
    }
    if (finished) this.node.append(finished);
    const inOsc = this.inOsc;
    const last = cleanLine(text.slice(this.consumed), this);
    this.inOsc = inOsc;
    if (last) {
      this.provisional = document.createTextNode(last);
      this.node.append(this.provisional);
    }
  }
}

/**
 * Markdown rendered as it streams in. Lines are rendered one at a time and a finished line's
 * nodes never change (what a line becomes depends only on the lines before it), so `update`
 * with a longer text renders only the new lines; the unfinished last line is drawn
 * provisionally and redrawn on the next update. The work per update is the new text plus that
 * last line, not the whole message. `update` must be given the same text, grown at its end.
 */
export class MarkdownStream {
  constructor(parent) {
    this.out = parent;
    this.consumed = 0;
    this.list = null;
    this.paragraph = null;
    this.fence = null;
    this.inOsc = false;
    // Nodes drawn for the unfinished last line, taken away before the next update.
    this.provisional = null;
  }

  update(text) {
    if (this.provisional) {
      for (const node of this.provisional) node.remove();
      this.provisional = null;
    }
    let end = text.indexOf('\n', this.consumed);
    while (end !== -1) {
      this.line(text.slice(this.consumed, end));
      this.consumed = end + 1;
      end = text.indexOf('\n', this.consumed);
    }
    // The last line as it stands, drawn with the state of the lines before it, which is put
    // back afterwards: the next update draws it again from there.
    const saved = [this.list, this.paragraph, this.fence && { ...this.fence }, this.inOsc];
    this.provisional = [];
    this.line(text.slice(this.consumed));
    [this.list, this.paragraph, this.fence, this.inOsc] = saved;
  }

  put(parent, node) {
    if (this.provisional) {
      if (node.nodeType === Node.DOCUMENT_FRAGMENT_NODE) this.provisional.push(...node.childNodes);
      else this.provisional.push(node);
    }
    parent.append(node);
  }

  inline(text, parent) {
    const nodes = document.createDocumentFragment();
    renderInline(text, nodes);
    this.put(parent, nodes);
  }

  flush() {
    this.list = null;
    this.paragraph = null;
  }

  line(raw) {
    const line = cleanLine(raw, this);
    if (this.fence) {
      if (line.trim().startsWith(this.fence.marker)) {
        this.fence = null;
      } else {
        this.put(this.fence.code, document.createTextNode(this.fence.lines > 0 ? `\n${line}` : line));
        this.fence.lines += 1;
      }
      return;
    }
    const fence = line.match(FENCE);
    if (fence) {
      this.flush();
      const pre = el('pre', 'code-block');
      const code = el('code');
      if (fence[2]) code.dataset.lang = fence[2];
      pre.append(code);
      this.put(this.out, pre);
      this.fence = { marker: fence[1], code, lines: 0 };
      return;
    }
    const heading = line.match(HEADING);
    const item = line.match(LIST_ITEM);
    if (heading) {
      this.flush();
      const h = el(`h${Math.min(heading[1].length + 2, 6)}`);
      renderInline(heading[2], h);
      this.put(this.out, h);
    } else if (item) {
      this.paragraph = null;
      const ordered = item[1] !== undefined;
      if (!this.list || this.list.ordered !== ordered) {
        this.list = { ordered, node: el(ordered ? 'ol' : 'ul') };
        this.put(this.out, this.list.node);
      }
      const li = el('li');
      if (item[2] !== undefined) {
        li.className = 'task';
        const box = el('input');
        box.type = 'checkbox';
        box.disabled = true;
        box.checked = item[2] !== ' ';
        li.append(box, ' ');
      }
      renderInline(item[3], li);
      this.put(this.list.node, li);
    } else if (QUOTE.test(line)) {
      this.flush();
      const quote = el('blockquote');
      renderInline(line.replace(QUOTE, ''), quote);
      this.put(this.out, quote);
    } else if (line.trim() === '') {
      this.flush();
    } else if (RULE.test(line)) {
      this.flush();
      this.put(this.out, el('hr'));
    } else {
      this.list = null;
      if (!this.paragraph) {
        this.paragraph = el('p');
        this.put(this.out, this.paragraph);
      } else {
        this.put(this.paragraph, el('br'));
      }
      this.inline(line, this.paragraph);
    }
  }
}
