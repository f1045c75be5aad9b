// The supervision scenario's page half (tests/troupe/supervision_scenario.rs runs it while a
// TUI in tmux holds the tree): eight sub-agents, two asking approval at once, one failing,
// one running a long command. The page approves one request, denies the other, interrupts
// the long one, waits for every row to end and prints what each row says, for the test to
// compare with the TUI's panel and the rollouts.

const WAIT = 60_000;

/** The page's status of every row, by the agent path in its title (the root as `/root`). */
function rowStatuses(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.thread-row')].map((row) => {
    const path = row.querySelector('.thread-head')?.textContent.match(/\((\/root\/[^)]+)\)/)?.[1] ?? '/root';
    return [path, row.dataset.status];
  })));
}

/** The tokens every row shows (0 when it shows none), by agent path. */
function rowTokens(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.thread-row')].map((row) => {
    const path = row.querySelector('.thread-head')?.textContent.match(/\((\/root\/[^)]+)\)/)?.[1] ?? '/root';
    return [path, Number(row.querySelector('.tokens')?.textContent.replace(/[^0-9]/g, '') || 0)];
  })));
}

export function addScenarioCases(cases, { connected, assert, shot, config }) {
  Object.assign(cases, {
    async supervision_scenario(page) {
      const { rootPrompt, agents } = config.scenario;
      await connected(page);
      // The root runs in the TUI: opened here, it is followed, and so are its sub-agents.
      const root = page.locator('.thread-row', { hasText: rootPrompt });
      await root.click({ timeout: WAIT });
      await root.locator('.thread-held', { hasText: 'open in another process' }).waitFor({ timeout: WAIT });
      const row = (path) => page.locator('.thread-row', { hasText: `(${path})` });
      // Each agent's row says it runs where its parent does, without repeating the program.
      for (const path of Object.keys(agents)) {
        await row(path).locator('.thread-held', { hasText: 'with its parent' }).waitFor({ timeout: WAIT });
      }

      // Both requests are queued at once, each naming its agent; one approved, one denied.
      const card = (path) => page.locator('.approval', { hasText: `(${path})` });
      await card('/root/ask1').waitFor({ timeout: WAIT });
      await card('/root/ask2').waitFor({ timeout: WAIT });
      const queued = await page.locator('.approval').count();
      assert(queued === 2, `${queued} approval cards, not 2`);
      await shot(page, 'scenario-approvals');
      await card('/root/ask1').locator('.decide-accept').click({ timeout: WAIT });
      await card('/root/ask1').waitFor({ state: 'detached', timeout: WAIT });
      await card('/root/ask2').locator('.decide-decline').click({ timeout: WAIT });
      await page.locator('.approval').first().waitFor({ state: 'detached', timeout: WAIT });

      // The long command's agent, opened and interrupted from here.
      await row('/root/long').click();
      await page.locator('.thread-row.selected', { hasText: '(/root/long)' }).waitFor({ timeout: WAIT });
      await page.locator('#interrupt:enabled').click({ timeout: WAIT });
      await page.locator('.thread-row[data-status=interrupted]', { hasText: '(/root/long)' }).waitFor({ timeout: WAIT });

      // Every row ends as expected (the root once its turn, waiting for them all, completes).
      // The two answered agents end once the test saw the TUI let go of their requests: longer
      // than a step, so that a TUI still asking is what fails.
      const expected = { '/root': 'done', ...agents };
      try {
        await page.waitForFunction((want) => {
          const seen = {};
          for (const r of document.querySelectorAll('.thread-row')) {
            const path = r.querySelector('.thread-head')?.textContent.match(/\((\/root\/[^)]+)\)/)?.[1] ?? '/root';
            seen[path] = r.dataset.status;
          }
          return Object.entries(want).every(([path, status]) => seen[path] === status);
        }, expected, { timeout: 3 * WAIT });
      } catch {
        throw new Error(`the rows end as ${JSON.stringify(await rowStatuses(page))}, not ${JSON.stringify(expected)}`);
      }
      await root.click();
      await page.locator('#transcript .item-agentMessage', { hasText: 'scenario root done' }).waitFor({ timeout: WAIT });
      const text = await page.evaluate(() => document.body.innerText);
      assert(!text.includes('subagent_notification'), 'the page shows <subagent_notification> text');
      await page.setViewportSize({ width: 1280, height: 1100 });
      await shot(page, 'scenario-tree');
      console.log(`scenario-statuses ${JSON.stringify(await rowStatuses(page))}`);
      console.log(`scenario-tokens ${JSON.stringify(await rowTokens(page))}`);
    },
  });
}
