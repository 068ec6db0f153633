"""The worker's result backend: Celery's Redis backend with each state written in one
round trip, and the STARTED state written for readers only.

Celery's key-value backend (`BaseKeyValueStoreBackend._store_result`) reads a job's
stored meta back before every write, so that a late or redelivered run never
overwrites a SUCCESS, and then writes and publishes it in a second round trip: two
round trips and a decode per state, twice per job (STARTED, then the result). Here
the check and the write are one Lua script (workers/lua/result_store.lua, on the
job's one key): the same guarantee, atomic rather than read-then-write, in one
round trip and with nothing read back into the worker.

STARTED (`task_track_started`, which `Job.status()` reads as `running`) is stored
but not published. Nothing listens for it: a client waiting on a result through
pub/sub acts only on a final state, and one asking for the status reads the key. So
producers no longer decode a second message per job. Every other state is published
as Celery does.

The STARTED write also reads the job's cancel mark (core.redis_keys.cancel_key), in
the same script: a canceled job's run then stores nothing and finds
`request.vetq_canceled` True (False otherwise; unset when no STARTED was stored this
way, and the task reads the mark itself). So a task start costs no extra round trip.

One final result is ever replaced: a machine result a person reviewed in the inbox
(vetq.inbox), by `store_reviewed` and its own script, which replaces only the result
the review was made from, once.

Whatever this class cannot write that way (a compressed or non-JSON result, which
vetq's queue contract never configures) goes through Celery's own path. Workers use
this backend (workers/app.py); producers keep Celery's, since they only read. The
Celery internals it relies on are checked by name in tests/test_celery_internals.py.
"""

from __future__ import annotations

from typing import Any

from celery import states
from celery.backends.redis import RedisBackend
from celery.exceptions import BackendStoreError
from kombu.utils.encoding import bytes_to_str

from vetq.core.redis_keys import cancel_key
from vetq.workers.lua_scripts import register

__all__ = ["BACKEND", "CANCELED_ATTRIBUTE", "UNPUBLISHED_STATES", "ResultBackend", "backend_url", "store_reviewed"]

# The class as Celery's `result_backend` setting names it (`<class>+<redis url>`).
BACKEND = "vetq.workers.result_backend:ResultBackend"
# States stored for readers of the key only: no client waits for them.
UNPUBLISHED_STATES = frozenset({states.STARTED})
# Set on the task's request by the STARTED write: whether the job was canceled.
CANCELED_ATTRIBUTE = "vetq_canceled"
# What result_store.lua answers for a job whose cancel mark is set.
_CANCELED = 2


def backend_url(redis_url: str) -> str:
    """The `result_backend` value that makes Celery build this class on `redis_url`."""
    return f"{BACKEND}+{redis_url}"


class ResultBackend(RedisBackend):
    _store_script: Any = None

    def _scripted(self) -> bool:
        return not self.compression and self.serializer == "json"

    def _store_result(
        self,
        task_id: str,
        result: Any,
        state: str,
        traceback: Any = None,
        request: Any = None,
        **kwargs: Any,
    ) -> Any:
        if not self._scripted():
            return super()._store_result(task_id, result, state, traceback, request, **kwargs)
        meta = self._get_result_meta(result=result, state=state, traceback=traceback, request=request)
        meta["task_id"] = bytes_to_str(task_id)
        value = self.encode(meta)
        if isinstance(value, str) and len(value) > self._MAX_STR_VALUE_SIZE:
            raise BackendStoreError("value too large for Redis backend", state=state, task_id=task_id)
        expires = self.failure_expires if state == states.FAILURE else self.expires
        publish = state not in UNPUBLISHED_STATES
        keys = [self.get_key_for_task(task_id)]
        if state == states.STARTED:
            keys.append(cancel_key(bytes_to_str(task_id)))
        # As Celery's own `set`: retried while the connection is down.
        stored = self.ensure(self._store, (keys, value, expires, publish))
        if state == states.STARTED and request is not None:
            # Celery's tracer passes the request the task body reads as `task.request`.
            setattr(request, CANCELED_ATTRIBUTE, stored == _CANCELED)
        return result

    def _store(self, keys: list[Any], value: str | bytes, expires: Any, publish: bool) -> int:
        if self._store_script is None:
            (self._store_script,) = register(self.client, "result_store")
        return int(self._store_script(keys=keys, args=[value, int(expires or 0), "1" if publish else "0"]))


REVIEW_STORED, REVIEW_ALREADY_STORED = "stored", "already_stored"


def store_reviewed(
    client: Any,
    job_id: str,
    reviewed: dict[str, Any],
    *,
    replaces_status: str,
    date_done: str,
    expires_s: int,
) -> str:
    """Make a reviewed result the job's final result and publish it to its waiters
    (`job.result(until="reviewed")`). It replaces only the machine result whose status
    was `replaces_status`; a key expired meanwhile is written anew, and the job's
    submitted mark with it, so the id reads as issued for another `expires_s`.
    "stored", or "already_stored" for the same review (a retry after a lost reply);
    ConflictError when the job holds another review or anything but its machine result."""
    import json

    from vetq.core.errors import ConflictError
    from vetq.core.redis_keys import CELERY_RESULT_PREFIX, submitted_key

    review = reviewed.get("review")
    review_id = str(review.get("id") or "") if isinstance(review, dict) else ""
    if not review_id:
        raise ValueError("a reviewed result carries its review's id (review.id)")
    # Celery's meta, as its backend writes one: what every client reads.
    meta = {
        "status": states.SUCCESS,
        "result": reviewed,
        "traceback": None,
        "children": [],
        "date_done": date_done,
        "task_id": job_id,
    }
    (script,) = register(client, "result_review")
    outcome = int(
        script(
            keys=[CELERY_RESULT_PREFIX + job_id],
            args=[json.dumps(meta, ensure_ascii=False), int(expires_s), replaces_status, review_id],
        )
    )
    if outcome == 0:
        raise ConflictError(f"job {job_id} already has another reviewed result; nothing was written")
    if outcome < 0:
        raise ConflictError(
            f"job {job_id}'s stored result is not the {replaces_status} result this review corrects; nothing was written"
        )
    client.set(submitted_key(job_id), 1, ex=int(expires_s) or None)
    return REVIEW_STORED if outcome == 1 else REVIEW_ALREADY_STORED
