"""`codex-app-server-sdk` (CodexClient) driving `troupe app-server` over stdio or WebSocket:
a turn with three commands and an approval, an interrupt, sub-agents, fork, resume, read and
list, with the client's usual options (turn overrides on the first turn)."""

import asyncio
import sys

from codex_app_server_sdk import (
    CodexClient,
    CodexTurnInactiveError,
    ThreadConfig,
    TurnOverrides,
)

import common


def connect(transport):
    if transport == "stdio":
        return CodexClient.connect_stdio(
            command=[common.TROUPE_BIN, "app-server"],
            cwd=common.WORKDIR,
            inactivity_timeout=60,
        )
    import os

    return CodexClient.connect_websocket(
        url=os.environ["TROUPE_WS_URL"],
        token=os.environ["TROUPE_WS_TOKEN"],
        inactivity_timeout=60,
    )


async def main(transport):
    approvals = []

    async def approve(request):
        approvals.append(request)
        return "accept"

    async with connect(transport) as client:
        await client.initialize()
        client.set_approval_handler(approve)
        thread = await client.start_thread(
            ThreadConfig(
                cwd=common.WORKDIR,
                sandbox="workspace-write",
                approval_policy="untrusted",
            )
        )

        async def three_calls():
            result = await thread.chat_once(
                "run the three commands",
                turn_overrides=TurnOverrides(effort="low", approval_policy="untrusted"),
            )
            commands = [
                e
                for e in result.raw_events
                if e.get("method") == "item/completed"
                and e["params"]["item"]["type"] == "commandExecution"
            ]
            ok = (
                result.final_text == common.FIRST_TURN
                and len(commands) == 3
                and common.made_file_exists()
            )
            return ok, f"{result.final_text!r}, {len(commands)} commands"

        await common.step("turn_with_three_calls", three_calls)

        async def approval():
            kinds = [type(a).__name__ for a in approvals]
            return "CommandApprovalRequest" in kinds, kinds

        await common.step("approval", approval)

        async def interrupt():
            try:
                result = await thread.chat_once("sleep a while", inactivity_timeout=2.0)
                return False, f"the turn completed: {result.final_text!r}"
            except CodexTurnInactiveError as err:
                cancelled = await client.cancel(err.continuation)
                return cancelled.was_interrupted, cancelled

        await common.step("interrupt", interrupt)

        async def sub_agents():
            result = await thread.chat_once("delegate the job")
            spawned = any(
                e.get("method") == "item/completed"
                and e["params"]["item"]["type"] == "collabAgentToolCall"
                for e in result.raw_events
            )
            return result.final_text == common.ROOT_DONE and spawned, result.final_text

        await common.step("sub_agents", sub_agents)

        async def fork():
            forked = await thread.fork()
            read = await forked.read()
            return forked.thread_id != thread.thread_id, read["thread"]["forkedFromId"]

        await common.step("fork", fork)

        async def resume():
            resumed = await client.resume_thread(thread.thread_id)
            result = await resumed.chat_once("go on after the resume")
            return result.final_text == common.AFTER_RESUME, result.final_text

        await common.step("resume", resume)

        async def read_and_list():
            read = await client.read_thread(thread.thread_id, include_turns=True)
            listed = await client.list_threads()
            turns = len(read["thread"]["turns"])
            ids = [t["id"] for t in listed["data"]]
            return turns >= 4 and thread.thread_id in ids, f"{turns} turns, {len(ids)} threads"

        await common.step("read_and_list", read_and_list)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
