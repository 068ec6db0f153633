"""Every Lua script vetq runs in Redis, listed once: its name, what it does, and the
loader every user of a script goes through.

A script's text is workers/lua/<name>.lua with each `-- include: NAME` line replaced
by workers/lua/include/NAME.lua: Redis scripts cannot call one another, so code two
scripts share is written once and spliced into both. The keys each script is called
with are named in core/redis_keys.py; each script's header comment says which.

`register` hands out redis-py Script objects: a call is one EVALSHA, and the text is
loaded again when Redis answers NOSCRIPT (a restarted Redis has an empty script
cache), so no script is loaded at start. Registering is local (a SHA-1 of the text);
each user registers its scripts once, when it is built."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["INCLUDE_DIR", "LUA_DIR", "SCRIPTS", "register", "source"]

LUA_DIR = Path(__file__).with_name("lua")
INCLUDE_DIR = LUA_DIR / "include"

SCRIPTS: dict[str, str] = {
    # The fleet's rate limiter (workers/rate_limiter.py), on one model's keys.
    "rl_acquire": "admit a call within the model's rpm and tpm (its window's running sum) and its tenant's fair "
    "share of them, or say how long to wait (and register the call as waiting)",
    "rl_settle": "correct an admitted entry (and the running sum) to the tokens the provider counted, dated now",
    "rl_cooldown": "set the model's shared cooldown; it only ever grows",
    # The token ledger (workers/budget_ledger.py), on keys of one hash tag.
    "budget_set_limit": "give each scope its limit once (a re-delivered job keeps what it spent)",
    "budget_reserve": "reserve tokens on every scope or on none, under a lease",
    "budget_finish": "settle or release a reservation, exactly once",
    "budget_renew": "restart a reservation's lease on every scope that still holds it",
    "budget_charge": "charge tokens to spent without a reservation",
    "budget_sweep": "read a scope once the tokens of expired leases are given back",
    # The bulk lane (workers/bulk_store.py), on keys of the `{vetq:bulk}` hash tag.
    "bulk_park": "create or join a bulk-lane request and record the job as its waiter, in one step",
    "bulk_resolve": "resolve a bulk-lane request once and move its parked jobs to the wake list",
    "bulk_claim": "claim pending requests for a submission, only while the caller holds the coordinator lease",
    "bulk_record": "record the provider batch a submission made and close the submission, once",
    "bulk_release": "give a submission's still-claimed requests back to pending and close it",
    "bulk_withdraw": "take a canceled job off its request, and withdraw the request once no job waits on it",
    # The worker's kombu transport (workers/reliable_transport.py), on kombu's keys.
    "reliable_pop": "pop the next message, priorities by their weighted turn, and record it as unacked in the same step",
    # The worker's result backend (workers/result_backend.py), on one job's meta key.
    "result_store": "store a job's state and result unless a SUCCESS is stored, and publish it",
    "result_review": "replace a job's machine result with the reviewed one, once, and publish it",
}

_INCLUDE = re.compile(r"^-- include: (\w+)$", re.MULTILINE)


def _include(match: re.Match[str]) -> str:
    path = INCLUDE_DIR / f"{match.group(1)}.lua"
    if not path.is_file():
        raise FileNotFoundError(f"{match.group(0)!r} names no file {path}")
    return path.read_text(encoding="utf-8")


@cache
def source(name: str) -> str:
    """The text of the script `name`, includes spliced in."""
    if name not in SCRIPTS:
        raise KeyError(f"no Lua script {name!r}: the scripts are listed in workers/lua_scripts.SCRIPTS")
    return _INCLUDE.sub(_include, (LUA_DIR / f"{name}.lua").read_text(encoding="utf-8"))


def register(redis_client: Any, *names: str) -> list[Any]:
    """The scripts `names`, in order, registered on `redis_client`."""
    return [redis_client.register_script(source(name)) for name in names]
