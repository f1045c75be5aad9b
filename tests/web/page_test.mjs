// Browser test of the supervisor page: headless Debian chromium driven by playwright-core,
// against a real `troupe app-server --web` and the mock model that tests/troupe/web_page.rs
// starts. Usage: node page_test.mjs CONFIG_JSON. Prints `ok <case>` per case and a final
// `figures {...}` line; exits non-zero with `FAIL <case>: why` on the first failure.

import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addStreamingCases } from './streaming_cases.mjs';
import { addTreeCases } from './tree_cases.mjs';
import { addScenarioCases } from './scenario_cases.mjs';

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

/** Font sizes under 11 px of the labels a supervisor reads (charts, rows, items, badges). */
async function smallLabels(page) {
  return page.evaluate(() => {
    const small = [];
    const selectors = '.chart-box .legend, .turn-label, .who, .collab, .thread-meta span, .thread-held, .activity, .badge, .timeline-label, .muted, .approval-from';
    for (const node of document.querySelectorAll(selectors)) {
      if (!node.textContent.trim() || node.getClientRects().length === 0) continue;
      const size = parseFloat(getComputedStyle(node).fontSize);
      if (size < 11) small.push(`${node.className}: ${size}px "${node.textContent.slice(0, 30)}"`);
    }
    // Text drawn inside an SVG scales with the drawing: none is left in the charts.
    for (const node of document.querySelectorAll('svg text')) small.push(`svg text "${node.textContent.slice(0, 30)}"`);
    return small;
  });
}

/** Internal text that must never reach the screen. */
async function internalText(page) {
  const text = await page.evaluate(() => document.body.innerText);
  return ['<subagent_notification>', '[You are agent', 'SPAWNAGENT', 'spawnAgent', 'collabAgentToolCall']
    .filter((needle) => text.includes(needle))
    .concat(/→ [0-9a-f]{8}-[0-9a-f]{4}-/.test(text) ? ['→ <uuid>'] : [])
    .concat(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/.test(text) ? ['a full uuid'] : []);
}

async function itemIds(page) {
  return page.evaluate(() => [...document.querySelectorAll('#transcript [data-item-id]')].map((n) => n.dataset.itemId));
}

const cases = {
  async two_threads_stream(page) {
    await connected(page);
    figures.load_to_connected_ms = Date.now() - page.loadedAt;
    await startThread(page, 'alpha-task: write slowly');
    // Titled by its prompt as soon as it is sent (not its id until the turn ends); the
    // composer names it too.
    const titled = await page.evaluate(() => [
      document.querySelector('.thread-row.selected .thread-title')?.textContent,
      document.querySelector('#composer-target')?.textContent,
    ]);
    assert(titled[0] === 'alpha-task: write slowly', `the new thread is titled ${titled[0]}`);
    assert(titled[1] === 'to alpha-task: write slowly', `the composer reads ${titled[1]}`);
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
    // Each row: its cwd (shortened) and when it was last active.
    const place = await page.evaluate(() => [...document.querySelectorAll('.thread-row')].map((r) => [
      r.querySelector('.thread-cwd')?.textContent ?? '', r.querySelector('.thread-when')?.textContent ?? '',
    ]));
    const base = workdir.split('/').filter(Boolean).at(-1);
    assert(place.length >= 2 && place.every(([cwd, when]) => cwd.endsWith(base) && /^(just now|\d+ s ago|\d+ min ago)$/.test(when)),
      `rows without cwd or last activity: ${JSON.stringify(place)}`);
    // Home is shown as ~ (the page's own rule, served by the binary).
    const short = await page.evaluate(async () => {
      const { shortPath, homeOf } = await import('/labels.js');
      return [shortPath('/home/ann/src/app', homeOf('/home/ann/.troupe')), shortPath('/srv/x/y/z/w', null), shortPath('/root', null)];
    });
    assert(JSON.stringify(short) === JSON.stringify(['~/src/app', '…/y/z/w', '~']), `short paths: ${short}`);
    const small = await smallLabels(page);
    assert(small.length === 0, `labels under 11 px: ${small.join('; ')}`);
    assert((await internalText(page)).length === 0, `internal text on screen: ${await internalText(page)}`);
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
    // The card names the thread that asks by its title and short id.
    const from = await page.locator('.approval .approval-from').textContent();
    assert(/^approve-task: touch a file · thread …[0-9a-f]{8}$/.test(from), `the card names ${from}`);
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
    // The denied command stays in the transcript, marked denied, as the TUI shows it.
    const denied = page.locator('#transcript .item-commandExecution', { hasText: 'touch denied-by-web' });
    await denied.locator('.badge-declined', { hasText: 'denied' }).waitFor({ timeout: WAIT });
    // And read back from the rollout by a page that was not there.
    const later = await openPage();
    await connected(later);
    await later.locator('.thread-row', { hasText: 'deny-task' }).click({ timeout: WAIT });
    await later.locator('#transcript .item-commandExecution', { hasText: 'touch denied-by-web' })
      .locator('.badge-declined', { hasText: 'denied' }).waitFor({ timeout: WAIT });
    await later.context().close();
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
    const child = page.locator('.thread-row[data-sub-agent=true]');
    await child.waitFor({ timeout: WAIT });
    const parentOf = await page.evaluate(() => {
      const row = document.querySelector('.thread-row[data-sub-agent=true]');
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
    // Named by nickname and path, its task beneath; no preamble anywhere.
    const childTitle = await page.locator('.thread-row.selected .thread-title').textContent();
    assert(/^\S+ \(\/root\/helper\)$/.test(childTitle), `the sub-agent's row is titled ${childTitle}`);
    await page.locator('.thread-row.selected .activity, #transcript .item-userMessage', { hasText: 'child-marker: say hi' }).first().waitFor({ timeout: WAIT });
    await shot(page, 'running-child');
    const leakedInChild = await internalText(page);
    assert(leakedInChild.length === 0, `internal text in the sub-agent's transcript: ${leakedInChild}`);
    await page.locator('#transcript .item-agentMessage', { hasText: 'CHILD-END' }).waitFor({ timeout: WAIT });
    await waitTurnStatus(page, 'completed');
    await page.locator('.thread-row', { hasText: 'spawn-task' }).click();
    await page.locator('#transcript .item-agentMessage', { hasText: 'parent done' }).waitFor({ timeout: WAIT });
    // The spawn in plain words, naming the agent as its row does; its report not as "you".
    const nick = childTitle.split(' ')[0];
    await page.locator('#transcript .collab', { hasText: `Spawned ${nick} (/root/helper)` }).waitFor({ timeout: WAIT });
    await page.locator('#transcript .agent-report', { hasText: `${nick} (/root/helper) finished` }).waitFor({ timeout: WAIT });
    const you = await page.locator('#transcript .item-userMessage').allTextContents();
    assert(you.length === 1 && you[0].includes('spawn-task'), `user messages in the parent: ${JSON.stringify(you)}`);
    const leaked = await internalText(page);
    assert(leaked.length === 0, `internal text on screen: ${leaked}`);
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

// Cases with a mock script of their own: run only when named (`only`).
const namedCases = {};
addTreeCases(namedCases, { openPage, connected, startThread, waitTurnStatus, assert, shot, config });
addScenarioCases(namedCases, { connected, assert, shot, config });

addStreamingCases(cases, { browser, connected, startThread, assert, figures, profileDir });

let failed = false;
const names = only ? only.split(',') : Object.keys(cases);
for (const name of names) {
  const page = await openPage();
  try {
    const closed = await (cases[name] ?? namedCases[name])(page);
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
