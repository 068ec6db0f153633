"""vetq leans on a few Celery internals that no public API offers. Each is checked
here against the installed Celery, so an upgrade that changes one fails this file by
name instead of quietly turning a guard off; pyproject.toml bounds Celery to the
releases checked."""

from __future__ import annotations

import inspect
import logging
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _requirement(name: str) -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (found,) = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == name]
    return found


def test_celery_has_an_upper_bound_and_the_installed_release_is_inside_it():
    import celery

    requirement = _requirement("celery")
    assert any(spec.operator in ("<", "<=") for spec in requirement.specifier), (
        f"{requirement}: vetq overrides Celery internals, so pyproject.toml must bound Celery from above"
    )
    assert Version(celery.__version__) in requirement.specifier, (
        f"Celery {celery.__version__} is outside {requirement.specifier}: re-check this file's internals first"
    )


# workers/dead_letter_consumer.py: DeadLetterConsumer overrides these Consumer methods and calls
# super() with the same arguments.
CONSUMER_HOOKS = {
    "on_decode_error": ["self", "message", "exc"],
    "on_unknown_message": ["self", "body", "message"],
    "on_unknown_task": ["self", "body", "message", "exc"],
    "on_invalid_task": ["self", "body", "message", "exc"],
    "on_connection_error_after_connected": ["self", "exc"],
    "call_soon_ack": ["self", "p", "args", "kwargs"],
    "create_task_handler": ["self", "promise"],
}


@pytest.mark.parametrize("name", sorted(CONSUMER_HOOKS))
def test_the_consumer_hooks_dead_letters_override_still_exist_with_their_signature(name):
    from celery.worker.consumer import Consumer

    from vetq.workers.dead_letter_consumer import DeadLetterConsumer

    original = getattr(Consumer, name, None)
    assert original is not None, f"celery.worker.consumer.Consumer.{name} is gone: DeadLetterConsumer's hook is dead"
    assert list(inspect.signature(original).parameters) == CONSUMER_HOOKS[name], (
        f"Consumer.{name}{inspect.signature(original)} changed: re-check DeadLetterConsumer.{name}"
    )
    assert name in vars(DeadLetterConsumer)  # the override this test guards is still there


def test_the_consumer_still_routes_refused_messages_through_those_hooks():
    from celery.worker.consumer import Consumer

    # The task handler looks the hooks up on the consumer, so an override is called.
    source = inspect.getsource(Consumer.create_task_handler)
    for hook in ("on_decode_error", "on_unknown_message", "on_unknown_task", "on_invalid_task"):
        assert f"self.{hook}" in source, f"Consumer.create_task_handler no longer calls self.{hook}"
    # The worker_consumer setting (workers/app.py) is how the subclass gets used at all.
    from celery.app.defaults import NAMESPACES

    assert "consumer" in NAMESPACES["worker"], "the worker_consumer setting is gone"


def test_the_result_consumer_attributes_the_client_resets_still_exist():
    # api_client/client.py _release_result_consumer clears subscribed_to and
    # _pending_unsubscribe, stops the consumer and drops _pubsub.
    from celery import Celery
    from celery.backends.redis import ResultConsumer

    app = Celery(
        "internals-check", broker="redis://127.0.0.1:1/0", backend="redis://127.0.0.1:1/0", set_as_current=False
    )
    consumer = app.backend.result_consumer  # built without connecting
    assert isinstance(consumer, ResultConsumer)
    assert isinstance(consumer.subscribed_to, set)
    assert isinstance(consumer._pending_unsubscribe, set), "ResultConsumer._pending_unsubscribe changed"
    assert "_pubsub" in vars(ResultConsumer), "ResultConsumer._pubsub changed"
    assert callable(consumer.stop)
    reconnect = inspect.getsource(ResultConsumer._reconnect_pubsub)
    assert "_pending_unsubscribe" in reconnect and "_pubsub" in reconnect, (
        "ResultConsumer._reconnect_pubsub no longer reads the attributes the client resets"
    )
    app.close()


def test_the_task_trace_still_logs_result_and_arguments_in_a_context_dict():
    # core/logging.py TaskDataFilter drops Celery's success line (told by its
    # %(return_value)s field) and masks these keys of Celery's other task lines.
    from celery.app import trace
    from celery.worker import strategy

    from vetq.core.logging import CELERY_TASK_LOGGERS, TASK_DATA_KEYS

    assert "%(return_value)s" in trace.LOG_SUCCESS, "Celery's success line no longer formats return_value"
    assert not any("%(return_value)s" in line for line in (trace.LOG_FAILURE, trace.LOG_RETRY, trace.LOG_IGNORED))
    assert trace.logger.name in CELERY_TASK_LOGGERS and strategy.logger.name in CELERY_TASK_LOGGERS
    assert "'return_value': Rstr" in inspect.getsource(trace.build_tracer)
    for key in ("args", "kwargs"):
        assert f"'{key}':" in inspect.getsource(trace.build_tracer) and f"'{key}':" in inspect.getsource(strategy)
    assert "'args': sargs" in inspect.getsource(trace.TraceInfo._log_error), "a failure line's arguments moved"
    assert set(TASK_DATA_KEYS) == {"return_value", "args", "kwargs"}
    # What the filter does to such records, end to end through a real handler.
    from vetq.core.logging import TaskDataFilter

    def record(message: str, context: dict) -> logging.LogRecord:
        return logging.LogRecord(trace.logger.name, logging.INFO, __file__, 1, message, (context,), None)

    success = record(
        trace.LOG_SUCCESS,
        {
            "id": "j1",
            "name": "vetq.extract",
            "runtime": 0.1,
            "return_value": "{'Globex'}",
            "args": "()",
            "kwargs": "{}",
        },
    )
    assert not TaskDataFilter().filter(success)
    failure = record(
        trace.LOG_FAILURE,
        {"id": "j1", "name": "vetq.extract", "description": "raised unexpected", "exc": "KeyError('x')",
         "args": "('doc Globex',)", "kwargs": "{}"},
    )  # fmt: skip
    assert TaskDataFilter().filter(failure)
    assert "Globex" not in failure.getMessage() and "vetq.extract[j1] raised unexpected" in failure.getMessage()


def test_the_tracer_makes_the_result_repr_vetq_tasks_cut_to_nothing():
    # workers/tasks.py: vetq's tasks set resultrepr_maxsize=0, so the tracer's repr of
    # a result (built for every success, before any log level is consulted) stops at
    # once instead of walking the envelope.
    from celery import Task
    from celery.app import trace
    from celery.utils.saferepr import saferepr

    from vetq.workers.tasks import RESULT_REPR_MAXSIZE

    assert hasattr(Task, "resultrepr_maxsize")
    tracer = inspect.getsource(trace.build_tracer)
    assert "resultrepr_maxsize = task.resultrepr_maxsize" in tracer
    assert "Rstr = saferepr(R, resultrepr_maxsize)" in tracer
    envelope = {"status": "ok", "data": {"vendor_name": "Globex Ltd", "items": [{"sku": "A-1"}] * 50}}
    cut = saferepr(envelope, RESULT_REPR_MAXSIZE)
    assert len(cut) < 10 and "Globex" not in cut, cut


def test_the_started_write_gets_the_request_the_task_body_reads():
    # workers/result_backend.py sets `vetq_canceled` on the request the STARTED write is
    # given, and workers/tasks.py reads it as task.request: the tracer must pass the
    # request it pushed (else every task start pays an extra read for the cancel mark).
    import re

    from celery.app import trace

    tracer = inspect.getsource(trace.build_tracer)
    assert "push_request(task_request)" in tracer
    assert re.search(r"store_result\(\s*uuid,[^)]*\bSTARTED,\s*request=task_request,?\s*\)", tracer)


def test_the_key_value_store_the_result_backend_replaces_is_unchanged():
    # workers/result_backend.py ResultBackend overrides _store_result with one Lua
    # script; it reuses these RedisBackend / BaseBackend internals as Celery's own does.
    from celery.backends.base import BaseBackend, BaseKeyValueStoreBackend
    from celery.backends.redis import RedisBackend

    from vetq.workers.result_backend import ResultBackend

    store = BaseKeyValueStoreBackend._store_result
    assert list(inspect.signature(store).parameters) == [
        "self", "task_id", "result", "state", "traceback", "request", "kwargs"
    ]  # fmt: skip
    source = inspect.getsource(store)
    # What Celery's store does, and the script does in one step: meta, the SUCCESS guard, the write.
    assert "self._get_result_meta(result=result, state=state," in source
    assert "current_meta['status'] == states.SUCCESS" in source
    assert "self._set_with_state(self.get_key_for_task(task_id), self.encode(meta), state)" in source
    # Celery still reaches the store through store_result (with its retries).
    assert "self._store_result," in inspect.getsource(BaseBackend.store_result)
    assert "_store_result" in vars(ResultBackend)  # the override this test guards is still there
    # RedisBackend's write: its expiries, the pipeline SET + PUBLISH on the key's channel.
    from celery import Celery

    app = Celery("internals-check", backend="redis://127.0.0.1:1/0", set_as_current=False)
    backend = app.backend  # built without connecting
    for name in ("expires", "failure_expires", "compression", "serializer", "_MAX_STR_VALUE_SIZE"):
        assert hasattr(backend, name), f"RedisBackend.{name} is gone: re-check ResultBackend"
    for name in ("ensure", "get_key_for_task", "encode", "_get_result_meta"):
        assert callable(getattr(backend, name, None)), f"RedisBackend.{name} is gone: re-check ResultBackend"
    assert "client" in dir(RedisBackend)
    app.close()
    set_with_state = inspect.getsource(RedisBackend._set_with_state)
    assert "expires=self.failure_expires" in set_with_state and "states.FAILURE" in set_with_state
    write = inspect.getsource(RedisBackend._set)
    assert "pipe.setex(key, expires, value)" in write and "pipe.publish(key, value)" in write
    assert "self.ensure(self._set," in inspect.getsource(RedisBackend.set)
    # The `<class>+<url>` form of result_backend builds the class on the URL.
    from celery.app.backends import by_url

    from vetq.workers.result_backend import backend_url

    cls, url = by_url(backend_url("redis://127.0.0.1:6379/0"))
    assert cls is ResultBackend and url == "redis://127.0.0.1:6379/0"
    # The tracer writes STARTED through store_result (left unpublished by the subclass).
    from celery.app import trace

    assert "uuid, {'pid': pid, 'hostname': hostname}, STARTED," in inspect.getsource(trace.build_tracer)


# workers/reliable_transport.py: its Channel replaces the BRPOP pair of kombu's Redis
# channel, its QoS class and its synchronous client, and reads these attributes of it.
KOMBU_CHANNEL_INTERNALS = (
    "QoS",
    "_create_client",
    "pool",
    "_brpop_start",
    "_brpop_read",
    "_q_for_pri",
    "_flush_brpop_reauth",
    "unacked_key",
    "unacked_index_key",
    "priority_steps",
    "sep",
    "global_keyprefix",
    "_in_poll",
    "_brpop_sent_at",
)


def test_kombu_has_an_upper_bound_and_the_redis_channel_internals_the_transport_replaces():
    import kombu
    from kombu.transport import redis as kombu_redis

    requirement = _requirement("kombu")
    assert any(spec.operator in ("<", "<=") for spec in requirement.specifier), requirement
    assert Version(kombu.__version__) in requirement.specifier, (
        f"kombu {kombu.__version__} is outside {requirement.specifier}: re-check workers/reliable_transport.py"
    )
    channel = kombu_redis.Channel
    missing = [name for name in KOMBU_CHANNEL_INTERNALS if not hasattr(channel, name)]
    assert missing == [], f"kombu's Redis Channel lost {missing}"
    assert list(inspect.signature(channel._brpop_start).parameters) == ["self", "timeout"]
    assert list(inspect.signature(channel._brpop_read).parameters) == ["self", "options"]
    # The poller reaches the pair only through these two calls.
    poller = inspect.getsource(kombu_redis.MultiChannelPoller)
    assert "channel._brpop_start()" in poller and "chan.handlers[type]()" in poller
    assert "'BRPOP': self._brpop_read" in inspect.getsource(channel.__init__)
    # The unacked record's write is QoS.append's (the pop script makes it redundant),
    # and the writes and acks reach Redis through _create_client (shared per pool).
    assert list(inspect.signature(channel._create_client).parameters) == ["self", "asynchronous"]
    assert list(inspect.signature(kombu_redis.QoS.append).parameters) == ["self", "message", "delivery_tag"]
    assert "self._create_client()" in inspect.getsource(channel.conn_or_acquire)
    assert "self.channel.conn_or_acquire(client)" in inspect.getsource(kombu_redis.QoS.pipe_or_acquire)
