// The browser test's cases with a mock script of their own (page_test.mjs runs them only when
// named): sub-agents asking approval at once, and threads another `troupe web` holds. They get
// the page test's helpers and add themselves to its named cases.

const WAIT = 45_000;

export function addTreeCases(cases, { openPage, connected, startThread, waitTurnStatus, assert, shot, config }) {
  Object.assign(cases, {
    async subagent_approvals(page) {
      await connected(page);
      await startThread(page, 'tree-task: delegate to two agents', { sandbox: 'workspace-write', approval: 'untrusted' });
      // Both sub-agents ask at once: both requests are queued, each naming the agent asking.
      const askers = (p) => p.evaluate(() => [...document.querySelectorAll('.approval .approval-from')].map((n) => n.textContent));
      const namedBoth = (p) => p.waitForFunction(() => {
        const names = [...document.querySelectorAll('.approval .approval-from')].map((n) => n.textContent);
        return names.length === 2 && names.some((n) => n.includes('(/root/t1)')) && names.some((n) => n.includes('(/root/t2)'));
      }, null, { timeout: WAIT });
      await namedBoth(page).catch(async () => {
        throw new Error(`the queue shows ${JSON.stringify(await askers(page))}`);
      });
      // A page opened now gets the same two questions.
      const other = await openPage();
      await connected(other);
      await namedBoth(other).catch(async () => {
        throw new Error(`a fresh page shows ${JSON.stringify(await askers(other))}`);
      });
      await shot(page, 'subagent-approvals');
      // Sibling agents made at once: their short ids differ (the tail, not the shared time prefix).
      const ids = (await askers(page)).map((n) => n.match(/thread (…[0-9a-f]{8})$/)?.[1]);
      assert(ids.every(Boolean) && ids[0] !== ids[1], `the asking threads' ids do not tell them apart: ${ids}`);
      // A card's name is a link to the thread that asks.
      const card = page.locator('.approval', { hasText: '(/root/t2)' });
      const asking = await card.getAttribute('data-thread-id');
      await card.locator('.approval-from').click();
      await page.locator(`.thread-row.selected[data-thread-id="${asking}"]`).waitFor({ timeout: WAIT });
      await page.locator('#transcript h2', { hasText: '(/root/t2)' }).waitFor({ timeout: WAIT });
      await page.locator('.thread-row', { hasText: 'tree-task' }).click();
      // One answered here, the other from the second page; each page sees both answered.
      await page.locator('.approval').first().locator('.decide-accept').click({ timeout: WAIT });
      await other.waitForFunction(() => document.querySelectorAll('.approval').length === 1, null, { timeout: WAIT });
      await other.locator('.approval .decide-accept').click({ timeout: WAIT });
      await page.locator('.approval').waitFor({ state: 'detached', timeout: WAIT });
      await other.locator('.approval').waitFor({ state: 'detached', timeout: WAIT });
      await page.locator('#transcript .item-agentMessage', { hasText: 'tree done' }).waitFor({ timeout: WAIT });
      await waitTurnStatus(page, 'completed');
      await other.context().close();
    },

    // Threads another `troupe web` (config.otherUrl) holds: one idle there, one running a turn.
    // This page shows the idle one as it ended, not running, and says who holds both.
    async held_elsewhere(page) {
      const there = await openPage(config.otherUrl);
      await connected(there);
      await startThread(there, 'held-idle-task: answer', { approval: 'never' });
      await there.locator('#transcript .item-agentMessage', { hasText: 'idle answer' }).waitFor({ timeout: WAIT });
      await waitTurnStatus(there, 'completed');
      await startThread(there, 'held-running-task: sleep');
      await there.locator('#transcript .item-commandExecution').waitFor({ timeout: WAIT });
      await connected(page);
      const idle = page.locator('.thread-row', { hasText: 'held-idle-task' });
      const running = page.locator('.thread-row', { hasText: 'held-running-task' });
      await page.locator('.thread-row[data-status=running]', { hasText: 'held-running-task' }).waitFor({ timeout: WAIT });
      await idle.locator('.thread-held', { hasText: 'open in another process: pid' }).waitFor({ timeout: WAIT });
      await running.locator('.thread-held', { hasText: 'open in another process: pid' }).waitFor({ timeout: WAIT });
      const idleStatus = await idle.getAttribute('data-status');
      assert(idleStatus === 'done', `the thread idle in another process shows ${idleStatus}`);
      // The "running" filter keeps only the thread whose turn runs.
      await page.selectOption('#status-filter', 'running');
      await page.waitForFunction(() => [...document.querySelectorAll('.thread-row')].every((r) => r.dataset.status === 'running'), null, { timeout: WAIT });
      assert(await running.count() === 1 && await idle.count() === 0, 'the running filter shows the idle thread, or not the running one');
      await page.selectOption('#status-filter', '');
      // Opened, it is followed (its history, then what the holder records); its running turn
      // can be steered and interrupted from here, new turns start only there.
      await running.click();
      await page.locator('#transcript .item-userMessage', { hasText: 'held-running-task: sleep' }).waitFor({ timeout: WAIT });
      await page.locator('#composer-target', { hasText: 'steer or interrupt its turn here' }).waitFor({ timeout: WAIT });
      assert(await page.locator('#send').textContent() === 'Steer', 'a followed running turn cannot be steered');
      assert(await page.locator('#notice').isHidden(), `an error is shown: ${await page.locator('#notice').textContent()}`);
      await shot(page, 'held-elsewhere');
      // The supervisor interrupts it from this page: the holder's turn ends, both pages see it.
      await page.locator('#interrupt:enabled').click({ timeout: WAIT });
      await waitTurnStatus(there, 'interrupted');
      await page.locator('.thread-row[data-status=interrupted]', { hasText: 'held-running-task' }).waitFor({ timeout: WAIT });
      // Idle there now: nothing to act on here.
      await page.locator('#send:disabled').waitFor({ timeout: WAIT });
      assert(await page.locator('#interrupt').isDisabled(), 'interrupt is offered with no turn running');
      await there.context().close();
    },
  });
}
