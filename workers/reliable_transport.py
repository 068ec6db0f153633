"""kombu's Redis transport with a delivery that cannot lose a message.

Stock kombu takes a message with BRPOP and only then, in a second round trip from
the worker, writes it to the `unacked` hash that redelivers the jobs of dead
workers. A worker SIGKILLed between the two, or a Redis restarted between them (the
pop is already in the append-only file, the reply or the second write never lands),
loses the job for good: the chaos run saw one such loss in six runs.

Here the pop and the unacked record are one Lua script (workers/lua/reliable_pop.lua),
so a message is always in a queue, in `unacked`, or in a worker that has recorded it.
A script cannot block, so an idle channel waits with `BLMOVE q q RIGHT RIGHT`: it
blocks until the queue has a message and then moves that message onto itself,
which leaves the list exactly as it was; the script then takes it. With several
queues the wait rotates over them in short slices, so a job on the other queue
waits at most `WAIT_SLICE_S` for an idle worker. Every idle channel of a queue wakes
on each new message and one takes it (the others find nothing and wait again):
cheap at fleet sizes, and only while workers are idle.

Workers use this transport (workers/app.py); producers keep kombu's own, since they
never consume. A Redis older than 6.2 (no BLMOVE) gets short sleeps between polls."""

from __future__ import annotations

import time
import uuid
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads

from vetq.core.redis_keys import WEBHOOK_QUEUE, idle_key
from vetq.workers.lua_scripts import source

# An idle channel serving several queues watches each for this long in turn.
WAIT_SLICE_S = 0.2

_POP_SCRIPT = source("reliable_pop")


class Channel(kombu_redis.Channel):
    _waiting = False  # the command in flight is the wait, not the pop
    _poll_next = True  # the next command is the pop
    _wait_turn = 0
    _no_blmove = False

    def _keys(self, names: list[str]) -> list[str]:
        prefix = self.global_keyprefix or ""
        return [prefix + name for name in names]

    def _brpop_start(self, timeout: float | None = None) -> None:
        queues = self._queue_cycle.consume(len(self.active_queues))
        if not queues:
            return
        connection = self.client.connection
        if self._poll_next:
            keys = self._keys(
                [self.unacked_key, self.unacked_index_key]
                + [self._q_for_pri(queue, pri) for pri in self.priority_steps for queue in queues]
            )
            command: list[Any] = ["EVAL", _POP_SCRIPT, len(keys), *keys, time.time()]
            self._waiting = False
        else:
            # Wait on the plain queue keys only: vetq sends no priorities, and a
            # message on a priority key is still found by the next pop. Nor on the
            # webhook queue, which every worker serves: an idle worker waits on its
            # job queues as before, and a delivery is found by the next pop (after a
            # job, or within one wait: at most kombu's brpop_timeout, 1 s).
            plain = sorted(
                self._keys([q for q in self.active_queues if q != WEBHOOK_QUEUE] or list(self.active_queues))
            )
            self._wait_turn = (self._wait_turn + 1) % len(plain)
            if timeout is None:
                timeout = self.brpop_timeout
            slice_s = timeout if len(plain) == 1 else min(timeout, WAIT_SLICE_S)
            if self._no_blmove:
                command = ["BLPOP", self._keys([idle_key(uuid.uuid4().hex)])[0], slice_s]
            else:
                key = plain[self._wait_turn]
                command = ["BLMOVE", key, key, "RIGHT", "RIGHT", slice_s]
            self._waiting = True
        self._in_poll = connection
        self._brpop_sent_at = time.monotonic()  # type: ignore[assignment]  # kombu's attribute, None by default
        connection.send_command(*command)

    def _brpop_read(self, **options: Any) -> bool:
        waiting = self._waiting
        try:
            try:
                reply = self.client.parse_response(self.client.connection, "BLMOVE" if waiting else "EVAL", **options)
            except self.ResponseError as exc:
                if waiting and "unknown command" in str(exc).lower():
                    self._no_blmove = True  # Redis < 6.2
                    self._poll_next = True
                    raise kombu_redis.Empty() from None
                raise
            except self.connection_errors:
                self.client.connection.disconnect()
                self._poll_next = True
                raise
            if waiting:
                # Something arrived (or the slice ended): take it with the script.
                self._poll_next = True
                raise kombu_redis.Empty()
            if not reply:
                self._poll_next = False
                raise kombu_redis.Empty()
            dest, item = reply
            dest = bytes_to_str(dest)
            if self.global_keyprefix:
                dest = dest[len(self.global_keyprefix) :]
            dest = dest.rsplit(self.sep, 1)[0]
            self._queue_cycle.rotate(dest)
            self._poll_next = True  # more may be waiting: pop again before waiting
            self.connection._deliver(loads(bytes_to_str(item)), dest)
            return True
        finally:
            self._in_poll = None  # type: ignore[assignment]  # as kombu's own disconnect handler does
            self._flush_brpop_reauth()


class Transport(kombu_redis.Transport):
    Channel = Channel
