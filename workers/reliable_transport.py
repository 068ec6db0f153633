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

Priorities (README, Priorities): each queue has a high, a normal and a low list
(kombu's priority steps, core.queue.PRIORITY_STEPS), and the same script picks the
list by the queue's weighted turn, kept in Redis so the whole fleet shares it (high 6,
normal 3, low 1 in every 10 while all have work; an empty level gives its turn away).
An idle channel waits on the normal lists, where nearly every job goes, so those
start at once, as before; it looks at the high and low lists after every slice of
at most `WAIT_SLICE_S`, so a high or low job sent to an idle fleet waits up to that.

The same script is the fair pop of issue 18 (the script's header says how): once a
message naming a tenant reaches the head of a list, messages are set aside per tenant
and the tenants are served in turn by their weights (VETQ_TENANT_LIMITS), so one
tenant's burst cannot hold another's jobs behind it. The weights reach the channel in
the worker's transport options (TENANT_WEIGHTS_OPTION, set by workers/app.py). Fairness is
per list, so priorities keep their order. An idle channel still waits on the normal
lists themselves: messages set aside are found by the pop after the slice.

Workers use this transport (workers/app.py); producers keep kombu's own, since they
never consume. A Redis older than 6.2 (no BLMOVE) gets short sleeps between polls."""

from __future__ import annotations

import time
import uuid
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads

from vetq.core.queue import PRIORITY_LEVELS, PRIORITY_SCHEDULE, TENANT_HEADER, priority_keys
from vetq.core.redis_keys import FAIR_QUEUE_PREFIX, WEBHOOK_QUEUE, idle_key, priority_turn_key
from vetq.workers.lua_scripts import source

# An idle channel watches each of its queues' normal lists for this long in turn, then
# pops (which looks at every list).
WAIT_SLICE_S = 0.2
# The most messages one pop sets aside for the fair pop: the cost of a pop stays small
# (a few ms at most), and a tenant's burst is looked past in a few pops per thousand.
FAIR_SET_ASIDE = 256
# The worker's transport option holding the tenants' weights (JSON, core.tenants).
TENANT_WEIGHTS_OPTION = "vetq_tenant_weights"

# Redis hashes an EVAL's text on every call, and this one runs once per job: its
# comment lines are not sent (about a tenth of a pop's time in Redis, measured).
_POP_SCRIPT = "\n".join(line for line in source("reliable_pop").splitlines() if not line.lstrip().startswith("--"))
# The script's form of the schedule: a digit per turn, 1 high, 2 normal, 3 low.
_SCHEDULE = "".join(str(PRIORITY_LEVELS.index(level) + 1) for level in PRIORITY_SCHEDULE)


class QoS(kombu_redis.QoS):
    def append(self, message: Any, delivery_tag: str) -> None:
        """Keep the delivery in this channel's memory, without kombu's second write of
        the unacked record: the pop script wrote that same record in its step (one
        round trip and a transaction less per job). A message the script could not
        record (no delivery tag or delivery info) still gets kombu's write."""
        properties = message.properties or {}
        if isinstance(properties.get("delivery_tag"), str) and isinstance(properties.get("delivery_info"), dict):
            virtual.QoS.append(self, message, delivery_tag)
        else:
            super().append(message, delivery_tag)


class Channel(kombu_redis.Channel):
    QoS = QoS
    _waiting = False  # the command in flight is the wait, not the pop
    _poll_next = True  # the next command is the pop
    _wait_turn = 0
    _no_blmove = False

    _shared_client: Any = None

    def _create_client(self, asynchronous: bool = False) -> Any:
        """kombu builds a new redis-py client (its command tables and event
        dispatcher) for each unacked record and each ack, 3% of a job's CPU on a
        250-thread worker; a client on the channel's pool serves every thread (it
        takes a pooled connection per command). A new pool (after a reconnect) gets
        a new client."""
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self._shared_client
        if client is None or client.connection_pool is not self.pool:
            client = self._shared_client = super()._create_client()
        return client

    def _keys(self, names: list[str]) -> list[str]:
        prefix = self.global_keyprefix or ""
        return [prefix + name for name in names]

    def _brpop_start(self, timeout: float | None = None) -> None:
        queues = self._queue_cycle.consume(len(self.active_queues))
        if not queues:
            return
        connection = self.client.connection
        if self._poll_next:
            names = [self.unacked_key, self.unacked_index_key]
            for queue in queues:  # in kombu's rotation, so the queues take turns
                names += [priority_turn_key(queue), *priority_keys(queue)]
            keys = self._keys(names)
            weights = (self.connection.client.transport_options or {}).get(TENANT_WEIGHTS_OPTION) or "{}"
            command: list[Any] = [
                "EVAL",
                _POP_SCRIPT,
                len(keys),
                *keys,
                time.time(),
                _SCHEDULE,
                FAIR_QUEUE_PREFIX,
                TENANT_HEADER,
                weights,
                FAIR_SET_ASIDE,
            ]
            self._waiting = False
        else:
            # Wait on the normal lists (the queues' own keys) only; a high or low job is
            # found by the pop after the slice. Nor on the webhook queue, which every
            # worker serves: an idle worker waits on its job queues as before, and a
            # delivery is found by the next pop (after a job, or after the slice).
            plain = sorted(
                self._keys([q for q in self.active_queues if q != WEBHOOK_QUEUE] or list(self.active_queues))
            )
            self._wait_turn = (self._wait_turn + 1) % len(plain)
            if timeout is None:
                timeout = self.brpop_timeout
            slice_s = min(timeout, WAIT_SLICE_S)
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
