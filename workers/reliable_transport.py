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

The same script is the fair pop of issue 18 (the script's header says how): once a
message naming a tenant reaches the head of a queue, messages are set aside per tenant
and the tenants are served in turn by their weights (VETQ_TENANT_LIMITS), so one
tenant's burst cannot hold another's jobs behind it. The weights reach the channel in
the worker's transport options (TENANT_WEIGHTS_OPTION, set by workers/app.py). An idle
channel still waits on the queue itself: one whose wait began in the instant another
pop set the queue's last messages aside sees them when its wait slice ends (kombu's
`brpop_timeout`, 1 s), and every new message wakes it sooner.

Workers use this transport (workers/app.py); producers keep kombu's own, since they
never consume. A Redis older than 6.2 (no BLMOVE) gets short sleeps between polls."""

from __future__ import annotations

import time
import uuid
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads

from vetq.core.queue import TENANT_HEADER
from vetq.core.redis_keys import FAIR_QUEUE_PREFIX, idle_key
from vetq.workers.lua_scripts import source

# An idle channel serving several queues watches each for this long in turn.
WAIT_SLICE_S = 0.2
# The most messages one pop sets aside for the fair pop: the cost of a pop stays small
# (a few ms at most), and a tenant's burst is looked past in a few pops per thousand.
FAIR_SET_ASIDE = 256
# The worker's transport option holding the tenants' weights (JSON, core.tenants).
TENANT_WEIGHTS_OPTION = "vetq_tenant_weights"

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
            weights = (self.connection.client.transport_options or {}).get(TENANT_WEIGHTS_OPTION) or "{}"
            command: list[Any] = [
                "EVAL",
                _POP_SCRIPT,
                len(keys),
                *keys,
                time.time(),
                FAIR_QUEUE_PREFIX,
                TENANT_HEADER,
                weights,
                FAIR_SET_ASIDE,
            ]
            self._waiting = False
        else:
            # Wait on the plain queue keys only: vetq sends no priorities, and a
            # message on a priority key is still found by the next pop.
            plain = sorted(self._keys(list(self.active_queues)))
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
