// Browser test of the supervisor page: headless Debian chromium driven by playwright-core,
// against a real `troupe app-server --web` and the mock model that tests/troupe/web_page.rs
// starts. Usage: node page_test.mjs CONFIG_JSON. Prints `ok <case>` per case and a final
// `figures {...}` line; exits non-zero with `FAIL <case>: why` on the first failure.

import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const config = JSON.parse(process.argv[2]);
const { url, workdir, interruptMarker, screenshots, only, profileDir } = config;
const origin = new URL(url).origin;
const WAIT = 45_000;
const figures = {};

const profile = mkdtempSync(join(tmpdir(), 'troupe-web-chromium-'));
const browser = await chromium.launch({
  executablePath: config.chromium ?? '/usr/bin/chromium',
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
  // A fresh --user-data-dir: playwright refuses the flag here and makes a temporary profile
  // of its own for launch(); ours is where downloads and traces would go.
  downloadsPath: profile,
});

/** A fresh browser context with the canary and the CSP-violation listener installed. */
async function openPage(address = url, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  await context.addInitScript(() => {
    window.__canary = 'intact';
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  const started = Date.now();
  await page.goto(address);
  page.loadedAt = started;
  return page;
}

async function connected(page) {
  await page.locator('#connection[data-state=open]').waitFor({ timeout: WAIT });
}

async function startThread(page, prompt, { sandbox = 'danger-full-access', approval = 'never' } = {}) {
  await page.click('#new-thread');
  await page.fill('#prompt', prompt);
  await page.selectOption('#sandbox', sandbox);
  await page.selectOption('#approval', approval);
  await page.fill('#cwd', workdir);
  await page.click('#send');
  await page.locator('#transcript .item-userMessage', { hasText: prompt }).waitFor({ timeout: WAIT });
  return page.evaluate(() => document.querySelector('.thread-row.selected')?.dataset.threadId);
}

async function waitTurnStatus(page, status) {
  await page.locator(`#transcript section.turn-${status}`).last().waitFor({ timeout: WAIT });
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

async function shot(page, name) {
  if (screenshots) await page.screenshot({ path: join(screenshots, `${name}.png`) });
}

async function itemIds(page) {
  return page.evaluate(() => [...document.querySelectorAll('#transcript [data-item-id]')].map((n) => n.dataset.itemId));
}

/**
 * Records where the page's main thread spends its time (TROUPE_WEB_PROFILE=DIR): a V8 CPU
 * profile (`NAME.cpuprofile`, JS functions) and a Chromium trace (`NAME.trace.json`, with
 * style, layout and paint). `node profile_summary.mjs DIR/NAME` prints the top of both.
 */
async function startProfiling(page, name) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await browser.startTracing(page, { path: join(profileDir, `${name}.trace.json`), categories: ['devtools.timeline', 'v8.execute', 'blink', 'loading'] });
  return async () => {
    await browser.stopTracing();
    const { profile } = await cdp.send('Profiler.stop');
    writeFileSync(join(profileDir, `${name}.cpuprofile`), JSON.stringify(profile));
    await cdp.detach();
  };
}

const cases = {
  async two_threads_stream(page) {
    await connected(page);
    figures.load_to_connected_ms = Date.now() - page.loadedAt;
    await startThread(page, 'alpha-task: write slowly');
    await startThread(page, 'beta-task: write slowly');
    // Streaming: part of the answer is drawn while the turn still runs.
    await page.waitForFunction(() => {
      const text = document.querySelector('#transcript .item-agentMessage')?.textContent ?? '';
      return text.includes('beta') && !text.includes('BETA-END') && document.querySelector('#transcript section.turn-inProgress');
    }, null, { timeout: WAIT, polling: 20 });
    await page.locator('#transcript .item-agentMessage', { hasText: 'BETA-END' }).waitFor({ timeout: WAIT });
    const bold = await page.locator('#transcript .item-agentMessage strong').count();
    assert(bold > 0, 'markdown **bold** was not rendered as <strong>');
    // The context chart beside the token chart: the turn's context against the window.
    const context = page.locator('#transcript .context-chart .legend');
    await context.waitFor({ timeout: WAIT });
    const legend = await context.textContent();
    assert(/^context: [\d,]+ of 200,000 \(\d+%\)/.test(legend), `context chart legend: ${legend}`);
    assert(await page.locator('#transcript .context-chart .bar').count() === 1, 'one bar for the one turn');
    assert(await page.locator('#transcript .token-chart .bar').count() === 1, 'the token chart is there too');
    // Both threads are in the list; the first finished too.
    await page.locator('.thread-row', { hasText: 'alpha-task' }).click({ timeout: WAIT });
    await page.locator('#transcript .item-agentMessage', { hasText: 'ALPHA-END' }).waitFor({ timeout: WAIT });
    await page.locator('.thread-row[data-status=done]').nth(1).waitFor({ timeout: WAIT });
    await shot(page, 'threads');
  },

  async approve_from_one_of_two_browsers(page) {
    await connected(page);
    await startThread(page, 'approve-task: touch a file', { approval: 'untrusted' });
    const other = await openPage();
    await connected(other);
    await page.locator('.approval').waitFor({ timeout: WAIT });
    // The second browser follows the active thread and sees the same question.
    await other.locator('.approval').waitFor({ timeout: WAIT });
    await shot(page, 'approval');
    await page.keyboard.press('y');
    await page.locator('#transcript .item-agentMessage', { hasText: 'approve done' }).waitFor({ timeout: WAIT });
    // The other browser saw it answered.
    await other.locator('.approval').waitFor({ state: 'detached', timeout: WAIT });
    const ran = await page.locator('#transcript .item-commandExecution .badge-completed').count();
    assert(ran === 1, `the approved command did not complete (${ran})`);
    await other.context().close();
  },

  async deny(page) {
    await connected(page);
    await startThread(page, 'deny-task: touch a file', { approval: 'untrusted' });
    await page.locator('.approval .decide-decline').click({ timeout: WAIT });
    await page.locator('#transcript .item-agentMessage', { hasText: 'deny done' }).waitFor({ timeout: WAIT });
    assert(await page.locator('.approval').count() === 0, 'the denied request is still queued');
  },

  async steer(page) {
    await connected(page);
    await startThread(page, 'steer-task: run something slow');
    await page.locator('#transcript .item-commandExecution').waitFor({ timeout: WAIT });
    await page.locator('#send', { hasText: 'Steer' }).waitFor({ timeout: WAIT });
    await page.fill('#prompt', 'steer-extra: change of plan');
    await page.click('#send');
    await page.locator('#transcript .item-agentMessage', { hasText: 'steered reply' }).waitFor({ timeout: WAIT });
  },

  async interrupt(page) {
    await connected(page);
    await startThread(page, `interrupt-task: ${interruptMarker}`);
    await page.locator('#transcript .item-commandExecution').waitFor({ timeout: WAIT });
    await page.locator('#interrupt:enabled').click({ timeout: WAIT });
    await waitTurnStatus(page, 'interrupted');
  },

  async subagent_in_tree(page) {
    await connected(page);
    const parent = await startThread(page, 'spawn-task: delegate');
    const child = page.locator('.thread-row', { hasText: '(sub-agent)' });
    await child.waitFor({ timeout: WAIT });
    const parentOf = await page.evaluate(() => {
      const row = [...document.querySelectorAll('.thread-row')].find((r) => r.textContent.includes('(sub-agent)'));
      return window.troupePage.store.threads.get(row.dataset.threadId)?.parentId;
    });
    assert(parentOf === parent, `the sub-agent's parent is ${parentOf}, not ${parent}`);
    await child.click();
    // Live while it runs: its answer grows in the open transcript (nothing polls it; the
    // server watches the sub-agent through its parent's session).
    const partial = () => page.evaluate(() => {
      const text = document.querySelector('#transcript .item-agentMessage')?.textContent ?? '';
      const running = document.querySelector('#transcript section.turn-inProgress') !== null;
      return running && !text.includes('CHILD-END') ? text.length : -1;
    });
    await page.waitForFunction(() => {
      const text = document.querySelector('#transcript .item-agentMessage')?.textContent ?? '';
      return text.includes('child') && !text.includes('CHILD-END') && document.querySelector('#transcript section.turn-inProgress');
    }, null, { timeout: WAIT, polling: 20 });
    const first = await partial();
    await page.waitForFunction((first) => {
      const text = document.querySelector('#transcript .item-agentMessage')?.textContent ?? '';
      return text.length > first && !text.includes('CHILD-END') && document.querySelector('#transcript section.turn-inProgress');
    }, first, { timeout: WAIT, polling: 20 });
    assert(first > 0, 'the running sub-agent showed no partial answer');
    const childRow = await page.evaluate(() => document.querySelector('.thread-row.selected')?.dataset.status);
    assert(childRow === 'running', `the running sub-agent's row says ${childRow}`);
    await page.locator('#transcript .item-agentMessage', { hasText: 'CHILD-END' }).waitFor({ timeout: WAIT });
    await waitTurnStatus(page, 'completed');
    await page.locator('.thread-row', { hasText: 'spawn-task' }).click();
    await page.locator('#transcript .item-agentMessage', { hasText: 'parent done' }).waitFor({ timeout: WAIT });
    await shot(page, 'subagent');
  },

  async reconnect_without_duplicates(page) {
    await connected(page);
    await startThread(page, 'reconnect-task: first');
    await page.locator('#transcript .item-agentMessage', { hasText: 'first answer' }).waitFor({ timeout: WAIT });
    const before = await itemIds(page);
    await page.evaluate(() => window.troupePage.dropConnection());
    await page.locator('#connection[data-state=reconnecting]').waitFor({ timeout: WAIT });
    await connected(page);
    // Resumed: the same items, once each.
    await page.waitForTimeout(500);
    const after = await itemIds(page);
    assert(JSON.stringify(after) === JSON.stringify(before), `items changed across the reconnect: ${before} → ${after}`);
    // And live again: a new turn streams in.
    await page.fill('#prompt', 'second-after-reconnect');
    await page.click('#send');
    await page.locator('#transcript .item-agentMessage', { hasText: 'second answer' }).waitFor({ timeout: WAIT });
    const ids = await itemIds(page);
    assert(new Set(ids).size === ids.length, `duplicate items: ${ids}`);
    assert(await page.locator('#transcript .item-userMessage').count() === 2, 'user messages duplicated or lost');
  },

  async hostile_output_runs_nothing(page) {
    await connected(page);
    await startThread(page, 'hostile-task: print nasty things');
    await page.locator('#transcript .item-agentMessage', { hasText: 'HOSTILE-END' }).waitFor({ timeout: WAIT });
    await page.locator('#transcript .item-commandExecution .output').waitFor({ timeout: WAIT });
    await page.waitForTimeout(300);
    const report = await page.evaluate(() => {
      const t = document.querySelector('#transcript');
      return {
        canary: window.__canary,
        pwned: window.pwned ?? null,
        violations: window.__violations,
        scripts: t.querySelectorAll('script').length,
        images: t.querySelectorAll('img, iframe, object, embed, svg image').length,
        handlers: [...t.querySelectorAll('*')].filter((n) => [...n.attributes].some((a) => a.name.startsWith('on'))).length,
        hrefs: [...t.querySelectorAll('a')].map((a) => a.getAttribute('href')),
        text: t.textContent,
      };
    });
    assert(report.canary === 'intact' && report.pwned === null, `a script ran: ${JSON.stringify(report)}`);
    assert(report.violations.length === 0, `CSP violations: ${report.violations}`);
    assert(report.scripts === 0 && report.images === 0 && report.handlers === 0, `markup got in: ${JSON.stringify(report)}`);
    assert(report.hrefs.every((h) => /^https?:/.test(h)), `non-web links: ${report.hrefs}`);
    assert(report.hrefs.includes('https://example.com/safe'), `the safe link is missing: ${report.hrefs}`);
    assert(report.text.includes('<script>') && report.text.includes('onerror'), 'the hostile text is not shown as text');
    assert(!report.text.includes('\u001b'), 'ANSI escapes reached the page');
    assert(report.text.includes('ANSI-RED'), 'the text inside the ANSI colour is lost');
  },

  async big_transcript_and_output_stay_bounded(page) {
    await connected(page);
    const drawn = await page.evaluate(async () => {
      const { store } = window.troupePage;
      const threadId = '00000000-0000-0000-0000-00000000b16b';
      // Followed already, so opening it does not ask the server about a thread it never had.
      store.mergeThread({ id: threadId, preview: 'synthetic big thread', createdAt: 1, status: { type: 'idle' } }).subscribed = true;
      const turnId = 'turn-1';
      for (let i = 0; i < 5000; i += 1) {
        store.apply({ method: 'item/completed', params: { threadId, turnId, item: { id: `it-${i}`, type: 'agentMessage', text: `item ${i}` } } });
      }
      store.apply({ method: 'item/started', params: { threadId, turnId, item: { id: 'big-cmd', type: 'commandExecution', command: 'yes', status: 'inProgress' } } });
      const chunk = 'y\n'.repeat(512 * 1024);
      for (let i = 0; i < 10; i += 1) store.apply({ method: 'item/commandExecution/outputDelta', params: { threadId, turnId, itemId: 'big-cmd', delta: chunk } });
      const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      await frame();
      const started = performance.now();
      document.querySelector(`.thread-row[data-thread-id="${threadId}"]`)?.click();
      await frame();
      return {
        ms: performance.now() - started,
        items: document.querySelectorAll('#transcript [data-item-id]').length,
        output: document.querySelector('#transcript .output')?.textContent.length ?? 0,
        hiddenNote: document.querySelector('#transcript .show-earlier')?.textContent ?? '',
      };
    });
    figures.draw_5000_items_10mb_output_ms = Math.round(drawn.ms);
    assert(drawn.items <= 200, `${drawn.items} items drawn`);
    assert(drawn.output > 0 && drawn.output <= 16 * 1024, `${drawn.output} characters of output drawn`);
    assert(drawn.hiddenNote.includes('4,801'), `no hidden-items note: ${drawn.hiddenNote}`);
  },

  async phone_width(page) {
    await page.context().close();
    const phone = await openPage(url, { width: 390, height: 844 });
    await connected(phone);
    await phone.locator('.thread-row').first().waitFor({ timeout: WAIT });
    figures.load_to_thread_list_ms = Date.now() - phone.loadedAt;
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert(overflow <= 0, `the page is ${overflow}px wider than a phone`);
    await shot(phone, 'phone');
    await phone.locator('.thread-row').first().click();
    await phone.locator('#transcript .item-agentMessage').first().waitFor({ timeout: WAIT });
    await phone.context().close();
    return 'closed';
  },

  async unopened_threads_show_how_they_ended(page) {
    // A fresh page follows none of the threads the cases above ran: each shows how its last
    // turn ended (troupe/thread/lastTurns), not "idle".
    await connected(page);
    await page.locator('.thread-row[data-status=done]').first().waitFor({ timeout: WAIT });
    await page.locator('.thread-row[data-status=interrupted]').first().waitFor({ timeout: WAIT });
    const statuses = await page.evaluate(() => [...document.querySelectorAll('.thread-row')].map((r) => r.dataset.status));
    assert(!statuses.includes('idle'), `threads that ran turns show idle: ${statuses}`);
    const followed = await page.evaluate(() => [...window.troupePage.store.threads.values()].filter((t) => t.subscribed).length);
    assert(followed === 0, `${followed} threads were opened to learn their status`);
  },

  async wrong_or_missing_token_is_refused(page) {
    await page.context().close();
    for (const address of [`${origin}/#token=wrong-token-0123456789abcdef`, `${origin}/`]) {
      const refused = await openPage(address);
      await refused.locator('#connection[data-state=refused]').waitFor({ timeout: WAIT });
      const threads = await refused.evaluate(() => window.troupePage.store.threads.size);
      assert(threads === 0, `a refused page learned of ${threads} threads`);
      await refused.context().close();
    }
    return 'closed';
  },
};

// The streamed markdown is drawn line by line (markdown.js `MarkdownStream`): at every cut of
// these texts, and after all of them, it must be exactly what a whole render draws.
cases.markdown_streams_as_whole = async (page) => {
  await connected(page);
  const mismatch = await page.evaluate(async () => {
    const { MarkdownStream, renderMarkdown } = await import('/markdown.js');
    const texts = [
      'Intro **bold** and `code`\nsame paragraph\n\n- one\n- two [x](https://example.com/a)\n1. three\n\n> quote\n# Head\n---\nend',
      '```js\nlet a = 1;\n\nlet b = `x`;\n```\nafter *fence*\n~~~\nopen fence never closed\n- not a list',
      '- [ ] task\n- [x] done\n\ntext \x1b[31mred\x1b[0m and \x1b]0;title\x07 <script>x</script>\n\x1b]2;left open\nswallowed\x07shown\r\n***\n* * *\n',
      '',
      '\n\n\nlate start',
    ];
    const html = (fill) => {
      const box = document.createElement('div');
      fill(box);
      return box.innerHTML;
    };
    for (const text of texts) {
      for (const step of [1, 3, 7]) {
        const box = document.createElement('div');
        const stream = new MarkdownStream(box);
        for (let end = 0; end <= text.length + step; end += step) {
          const prefix = text.slice(0, end);
          stream.update(prefix);
          const whole = html((b) => b.append(renderMarkdown(prefix)));
          if (box.innerHTML !== whole) return { text, end, step, streamed: box.innerHTML, whole };
        }
      }
    }
    return null;
  });
  assert(mismatch === null, `streamed markdown differs from the whole render: ${JSON.stringify(mismatch)}`);
};

// While an answer streams the transcript keeps its end in view, and stops when the reader
// scrolls up (the page learns that from scroll events, not by reading layout as it draws).
cases.transcript_follows_its_end = async (page) => {
  await connected(page);
  const report = await page.evaluate(async () => {
    const { store } = window.troupePage;
    const threadId = '00000000-0000-0000-0000-0000000f0110';
    store.mergeThread({ id: threadId, preview: 'synthetic streaming thread', createdAt: 2, status: { type: 'idle' } }).subscribed = true;
    const turnId = 'turn-1';
    for (let i = 0; i < 60; i += 1) {
      store.apply({ method: 'item/completed', params: { threadId, turnId, item: { id: `it-${i}`, type: 'agentMessage', text: `item ${i}\n\nits second paragraph` } } });
    }
    store.apply({ method: 'item/started', params: { threadId, turnId, item: { id: 'live', type: 'agentMessage', text: '' } } });
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const pane = document.querySelector('#transcript');
    const gap = () => pane.scrollHeight - pane.scrollTop - pane.clientHeight;
    let line = 0;
    const stream = async (lines) => {
      for (let i = 0; i < lines; i += 1) {
        store.apply({ method: 'item/agentMessage/delta', params: { threadId, turnId, itemId: 'live', delta: `live line ${line} **bold`.slice(0, 12) } });
        store.apply({ method: 'item/agentMessage/delta', params: { threadId, turnId, itemId: 'live', delta: `${`live line ${line} **bold**`.slice(12)}\n` } });
        line += 1;
        await frame();
      }
    };
    await frame();
    document.querySelector(`.thread-row[data-thread-id="${threadId}"]`).click();
    await frame();
    const opened = gap();
    await stream(20);
    const streaming = gap();
    pane.scrollTop = 0;
    await frame();
    await stream(10);
    const live = document.querySelector('#transcript [data-item-id=live]');
    return {
      overflows: pane.scrollHeight > pane.clientHeight * 2,
      opened,
      streaming,
      scrolledUp: pane.scrollTop,
      lastLine: live.textContent.includes('live line 29 bold'),
      bold: live.querySelectorAll('strong').length,
      paragraphs: live.querySelectorAll('p').length,
    };
  });
  assert(report.overflows, `the synthetic transcript does not overflow: ${JSON.stringify(report)}`);
  assert(report.opened < 80 && report.streaming < 80, `the end is not in view while streaming: ${JSON.stringify(report)}`);
  assert(report.scrolledUp === 0, `the page scrolled away from where the reader went: ${JSON.stringify(report)}`);
  assert(report.lastLine && report.bold === 30 && report.paragraphs === 1, `the streamed answer is not whole: ${JSON.stringify(report)}`);
};

// The page alone, without the server: 20 threads each receive 100 deltas a second (2,000
// in all, each its own task and JSON text, as from the socket) while one of them is open.
// Recorded, not judged: the page's frames at a rate well above what the mock and a debug
// server deliver (twenty_streams_frames).
cases.synthetic_streams_frames = async (page) => {
  await connected(page);
  const ids = await page.evaluate(() => {
    const { store } = window.troupePage;
    const turnId = 'turn-1';
    const ids = Array.from({ length: 20 }, (_, i) => `00000000-0000-0000-0000-0000005e${String(i).padStart(4, '0')}`);
    ids.forEach((threadId, i) => {
      store.mergeThread({ id: threadId, preview: `synthetic stream ${i}`, createdAt: 10 + i, status: { type: 'active', activeFlags: [] } }).subscribed = true;
      store.apply({ method: 'turn/started', params: { threadId, turn: { id: turnId } } });
      store.apply({ method: 'item/started', params: { threadId, turnId, item: { id: `answer-${i}`, type: 'agentMessage', text: '' } } });
    });
    const words = ['word ', '**bold** ', '`code` ', 'and ', 'more\n', 'text ', '[link](https://example.com) ', '\n\n'];
    let n = 0;
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => store.apply(JSON.parse(event.data));
    window.__synthetic = setInterval(() => {
      for (const [i, threadId] of ids.entries()) {
        const delta = words[(n + i) % words.length];
        channel.port2.postMessage(JSON.stringify({ method: 'item/agentMessage/delta', params: { threadId, turnId, itemId: `answer-${i}`, delta } }));
      }
      n += 1;
    }, 10);
    return ids;
  });
  await page.locator(`.thread-row[data-thread-id="${ids[19]}"]`).click();
  const stopProfiling = profileDir ? await startProfiling(page, 'synthetic_streams') : null;
  figures.synthetic_streams_frames = await measureFrames(page, 5000);
  if (stopProfiling) await stopProfiling();
  const shown = await page.evaluate((id) => {
    clearInterval(window.__synthetic);
    return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
      const item = window.troupePage.store.threads.get(id).items.get('answer-19');
      const node = document.querySelector('#transcript [data-item-id=answer-19]');
      done({ stored: item.text.replace(/\*\*|`|\[|\]\([^)]*\)|\s/g, '').length, drawn: node.textContent.replace(/\s/g, '').length });
    })));
  }, ids[19]);
  assert(figures.synthetic_streams_frames.streamedChars > 0, `nothing streamed: ${JSON.stringify(figures.synthetic_streams_frames)}`);
  assert(shown.drawn === shown.stored && shown.drawn > 0, `the open answer is not drawn whole: ${JSON.stringify(shown)}`);
};

/** Frame gaps (`requestAnimationFrame`) over `ms`, and what streamed to the page meanwhile. */
function measureFrames(page, ms) {
  return page.evaluate(async (ms) => {
    const running = () => document.querySelectorAll('.thread-row[data-status=running]').length;
    // What reached the page meanwhile: agent text characters across all threads.
    const streamed = () => [...window.troupePage.store.threads.values()]
      .flatMap((t) => [...t.items.values()])
      .reduce((n, item) => n + (item.type === 'agentMessage' ? item.text?.length ?? 0 : 0), 0);
    const atStart = running();
    const charsBefore = streamed();
    const gaps = [];
    let last = performance.now();
    const until = last + ms;
    await new Promise((done) => {
      const tick = (now) => {
        gaps.push(now - last);
        last = now;
        if (now < until) requestAnimationFrame(tick);
        else done();
      };
      requestAnimationFrame(tick);
    });
    gaps.sort((a, b) => a - b);
    const at = (q) => Math.round(gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))] * 10) / 10;
    // A gap of 16.7-16.8 ms is one vsync; over 25 ms at least one frame was missed.
    return {
      runningAtStart: atStart,
      frames: gaps.length,
      p50: at(0.5),
      p95: at(0.95),
      max: at(1),
      over16: gaps.filter((g) => g > 16.7).length,
      missed: gaps.filter((g) => g > 25).length,
      streamedChars: streamed() - charsBefore,
    };
  }, ms);
}

// Twenty threads streaming at once. In the default run a smoke (they all stream and end, and
// frame times are recorded, not judged); run alone against a release server for the figures
// of docs/web.md (TROUPE_WEB_CASES=twenty_streams_frames TROUPE_WEB_BIN=target/release/troupe).
cases.twenty_streams_frames = async (page) => {
  await connected(page);
  const measure = (ms) => measureFrames(page, ms);
  // The same page with nothing streaming: what the machine gives when the page does nothing.
  figures.idle_frames = await measure(3000);
  for (let i = 0; i < 20; i += 1) await startThread(page, `stream-${i}-task: go`);
  const stopProfiling = profileDir ? await startProfiling(page, 'twenty_streams') : null;
  figures.twenty_streams_frames = await measure(5000);
  if (stopProfiling) await stopProfiling();
  assert(figures.twenty_streams_frames.runningAtStart > 0, `nothing streamed while measured: ${JSON.stringify(figures.twenty_streams_frames)}`);
  // The streams end: the open one's answer is whole, and the list shows them done.
  await page.locator('#transcript .item-agentMessage', { hasText: 'STREAM-END' }).waitFor({ timeout: 120_000 });
  try {
    await page.waitForFunction(() => [...document.querySelectorAll('.thread-row[data-status=done]')]
      .filter((r) => /stream-\d+-task/.test(r.textContent)).length >= 10, null, { timeout: 120_000, polling: 250 });
  } catch (err) {
    // What the page believes of each stream: wire status / last turn / lastTurn / followed.
    const states = await page.evaluate(() => [...window.troupePage.store.threads.values()]
      .filter((t) => /stream-\d+-task/.test(t.preview ?? ''))
      .map((t) => `${t.wireStatus?.type}/${t.turns.at(-1)?.status}/${t.lastTurn}/${t.subscribed}`));
    throw new Error(`fewer than 10 of the 20 streams are shown done: ${JSON.stringify(states)}`);
  }
};

let failed = false;
const names = only ? only.split(',') : Object.keys(cases);
for (const name of names) {
  const page = await openPage();
  try {
    const closed = await cases[name](page);
    if (closed !== 'closed') {
      assert(page.errors.length === 0, `page errors: ${page.errors}`);
      const canary = await page.evaluate(() => [window.__canary, window.__violations]);
      assert(canary[0] === 'intact' && canary[1].length === 0, `canary ${canary}`);
      await page.context().close();
    }
    console.log(`ok ${name}`);
  } catch (err) {
    console.log(`FAIL ${name}: ${err.message.split('\n')[0]}`);
    if (screenshots || config.failureShots) {
      await page.screenshot({ path: join(config.failureShots ?? screenshots, `failure-${name}.png`) }).catch(() => {});
    }
    failed = true;
    break;
  }
}
console.log(`figures ${JSON.stringify(figures)}`);
await browser.close();
rmSync(profile, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
