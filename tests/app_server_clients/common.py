"""What both client scripts share: step reporting and the scenario's expectations."""

import json
import os
import traceback

# The mock model's scripted answers (see tests/troupe/app_server_clients.rs).
FIRST_TURN = "first turn done"
ROOT_DONE = "root done"
AFTER_RESUME = "after resume"

WORKDIR = os.environ["TROUPE_TEST_WORKDIR"]
TROUPE_BIN = os.environ["TROUPE_BIN"]


def record(step, ok, detail=""):
    print(json.dumps({"step": step, "ok": bool(ok), "detail": str(detail)[:4000]}), flush=True)


async def step(name, body):
    """Runs one step; an exception is that step's failure (the next steps still run)."""
    try:
        ok, detail = await body()
    except BaseException as err:  # noqa: BLE001 - a failed step is reported, not raised
        record(name, False, "".join(traceback.format_exception(err)))
        return None
    record(name, ok, detail)
    return ok


def made_file_exists():
    return os.path.exists(os.path.join(WORKDIR, "made.txt"))
