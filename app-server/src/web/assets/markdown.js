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
  const lines = stripTerminalCodes(text).split('\n');
  let i = 0;
  let list = null;
  let paragraph = null;
  const flush = () => {
    list = null;
    paragraph = null;
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1;
      const pre = el('pre', 'code-block');
      const code = el('code', null, body.join('\n'));
      if (fence[2]) code.dataset.lang = fence[2];
      pre.append(code);
      out.append(pre);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    const item = line.match(/^\s*(?:[-*+]|(\d+)[.)])\s+(?:\[([ xX])\]\s+)?(.*)$/);
    if (heading) {
      flush();
      const level = Math.min(heading[1].length + 2, 6);
      const h = el(`h${level}`);
      renderInline(heading[2], h);
      out.append(h);
    } else if (item) {
      paragraph = null;
      const ordered = item[1] !== undefined;
      if (!list || list.ordered !== ordered) {
        list = { ordered, node: el(ordered ? 'ol' : 'ul') };
        out.append(list.node);
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
      list.node.append(li);
    } else if (/^\s*>\s?/.test(line)) {
      flush();
      const quote = el('blockquote');
      renderInline(line.replace(/^\s*>\s?/, ''), quote);
      out.append(quote);
    } else if (line.trim() === '') {
      flush();
    } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.append(el('hr'));
    } else {
      list = null;
      if (!paragraph) {
        paragraph = el('p');
        out.append(paragraph);
      } else {
        paragraph.append(el('br'));
      }
      renderInline(line, paragraph);
    }
    i += 1;
  }
  return out;
}
