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

__all__ = ["BACKEND", "CANCELED_ATTRIBUTE", "UNPUBLISHED_STATES", "ResultBackend", "backend_url"]

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
