"""`codex-python-sdk-unofficial` (CodexSDKClient) driving `troupe app-server` over stdio (the
only transport it has): a turn with three commands, an interrupt, fork, resume, read and
list. Its usual options send the per-turn settings (`approvalPolicy`, `sandboxPolicy`,
`effort`, and the others as null) on every `turn/start`.

Not played with this client: approvals and sub-agents. Version 0.128.0 validates every
message against models generated from an older Codex schema: its command approval params
declare `command` a list of strings (Codex 0.169's schema, and wire, make it a string) and
its `ThreadItem` has no `subAgentActivity`; it rejects those messages from Codex 0.169 as
from Troupe."""

import asyncio
import sys

from codex_agent_sdk import AppServerConfig, ApprovalDecision, CodexOptions, CodexSDKClient
from codex_agent_sdk.events import ItemCompletedEvent, ItemStartedEvent

import common


def as_dict(value):
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True)
    return value


async def run_turn(client, prompt, on_item_started=None):
    """Starts a turn, collects its completed items, and waits for its result."""
    handle = await client.query(prompt)
    completed = []
    async for event in handle:
        if isinstance(event, ItemCompletedEvent):
            completed.append(as_dict(event.item))
        elif isinstance(event, ItemStartedEvent) and on_item_started is not None:
            await on_item_started(handle, as_dict(event.item))
    return await handle.wait(), completed


async def main(transport):
    if transport != "stdio":
        raise SystemExit("codex-python-sdk-unofficial has only a stdio transport")
    async def approve(request):
        return ApprovalDecision.accept()

    options = CodexOptions(
        cwd=common.WORKDIR,
        approval_policy="never",
        sandbox_mode="workspace-write",
        effort="low",
    )
    app_server = AppServerConfig(codex_bin=common.TROUPE_BIN, cwd=common.WORKDIR)
    async with CodexSDKClient(options, app_server, approval_handler=approve) as client:
        thread_id = await client.start_thread()

        async def three_calls():
            result, items = await run_turn(client, "run the three commands")
            commands = [i for i in items if i.get("type") == "commandExecution"]
            ok = (
                result.status == "completed"
                and result.assistant_text == common.FIRST_TURN
                and len(commands) == 3
                and common.made_file_exists()
            )
            return ok, f"{result.status} {result.assistant_text!r}, {len(commands)} commands"

        await common.step("turn_with_three_calls", three_calls)

        async def interrupt():
            async def stop_the_sleep(handle, item):
                if item.get("type") == "commandExecution" and "sleep" in item.get("command", ""):
                    await handle.interrupt()

            result, _ = await run_turn(client, "sleep a while", stop_the_sleep)
            return result.status == "interrupted", result.status

        await common.step("interrupt", interrupt)

        async def fork():
            forked = await client.fork_thread(thread_id)
            return forked != thread_id, forked

        await common.step("fork", fork)

        async def resume():
            resumed = await client.resume_thread(thread_id)
            result, _ = await run_turn(client, "go on after the resume")
            return resumed == thread_id and result.assistant_text == common.AFTER_RESUME, (
                result.assistant_text
            )

        await common.step("resume", resume)

        async def read_and_list():
            # The high-level client has no read/list: its own connection's low-level client.
            app = await client._get_client()
            read = await app.thread_read(thread_id=thread_id, include_turns=True)
            listed = await app.thread_list()
            turns = len(read.thread.turns)
            ids = [t.id for t in listed.data]
            return turns >= 3 and thread_id in ids, f"{turns} turns, {len(ids)} threads"

        await common.step("read_and_list", read_and_list)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
