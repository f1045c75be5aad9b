// The streaming cases of the browser test (page_test.mjs): streamed markdown drawn line by
// line, a transcript that follows its end, and the frame figures while twenty threads stream
// (docs/web.md). They get the page test's helpers and add themselves to its cases.

import { join } from 'node:path';
import { writeFileSync } from 'node:fs';

export function addStreamingCases(cases, { browser, connected, startThread, assert, figures, profileDir }) {
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

  // The streamed markdown is drawn line by line (markdown.js `MarkdownStream`, and
  // `PlainTextStream` for reasoning): at every cut of these texts, and after all of them, it
  // must be exactly what a whole render draws.
  cases.markdown_streams_as_whole = async (page) => {
    await connected(page);
    const mismatch = await page.evaluate(async () => {
      const { MarkdownStream, PlainTextStream, renderMarkdown } = await import('/markdown.js');
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
          const plainBox = document.createElement('div');
          const plain = new PlainTextStream(plainBox);
          for (let end = 0; end <= text.length + step; end += step) {
            const prefix = text.slice(0, end);
            stream.update(prefix);
            const whole = html((b) => b.append(renderMarkdown(prefix)));
            if (box.innerHTML !== whole) return { text, end, step, streamed: box.innerHTML, whole };
            plain.update(prefix);
            const wholePlain = html((b) => new PlainTextStream(b).update(prefix));
            if (plainBox.innerHTML !== wholePlain) return { text, end, step, plain: plainBox.innerHTML, wholePlain };
          }
        }
      }
      // An OSC escape left open hides what follows up to its terminator, across lines too.
      const osc = document.createElement('div');
      osc.append(renderMarkdown('a\x1b]2;left open\nswallowed\x07shown'));
      if (osc.textContent !== 'ashown') return { osc: osc.textContent };
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
      // A new item goes after the last one, and a tool call onto the turn's timeline.
      store.apply({ method: 'item/started', params: { threadId, turnId, item: { id: 'after-live', type: 'commandExecution', command: 'echo after', status: 'inProgress' } } });
      store.apply({ method: 'item/completed', params: { threadId, turnId, item: { id: 'after-live', type: 'commandExecution', command: 'echo after', status: 'completed', exitCode: 0 } } });
      await frame();
      const order = [...document.querySelectorAll('#transcript [data-item-id]')].map((n) => n.dataset.itemId);
      return {
        last: order.slice(-2).join(','),
        items: order.length,
        timeline: document.querySelectorAll('#transcript .timeline-row').length,
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
    assert(report.last === 'live,after-live' && report.items === 62 && report.timeline === 1, `the new item is misplaced: ${JSON.stringify(report)}`);
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
}
