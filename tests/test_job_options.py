"""A producer's job options, checked before anything is sent (core.job_options): each
bad one is INVALID_INPUT naming it, and the good ones become the message's headers."""

from __future__ import annotations

import pytest

from vetq.core.errors import InvalidInputError
from vetq.core.job_options import Priority, job_options
from vetq.core.queue import BUDGET_USD_HEADER, CALLBACK_URL_HEADER, LANE_HEADER, PRIORITY_HEADER, TENANT_HEADER


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"priority": "urgent"}, "priority"),
        ({"priority": 3}, "priority"),
        ({"tenant": "Acme"}, "tenant"),
        ({"tenant": "a" * 65}, "tenant"),
        ({"tenant": ""}, "tenant"),
        ({"tenant": "acme corp"}, "tenant"),
        ({"idempotency_key": "k" * 201}, "idempotency_key"),
        ({"idempotency_key": "  "}, "idempotency_key"),
        ({"idempotency_key": 42}, "idempotency_key"),
        ({"callback_url": "ftp://example.com/hook"}, "callback_url"),
        ({"callback_url": "https:///no-host"}, "callback_url"),
        ({"callback_url": "https://user:pw@example.com/hook"}, "callback_url"),
        ({"callback_url": "https://example.com:port/hook"}, "callback_url"),
        ({"callback_url": "https://example.com/" + "x" * 2100}, "callback_url"),
        ({"budget_usd": -1}, "budget_usd"),
        ({"lane": "express"}, "lane"),
    ],
)
def test_a_bad_option_is_invalid_input_naming_it(options, named):
    with pytest.raises(InvalidInputError, match=named):
        job_options(**options)


def test_the_defaults_add_no_header():
    options = job_options()
    assert options.priority is Priority.NORMAL and options.headers() == {}


def test_good_options_travel_as_headers_and_the_key_stays_with_the_producer():
    options = job_options(
        budget_usd=0.5,
        lane="bulk",
        priority="HIGH",
        tenant="acme_2",
        callback_url=" https://hooks.example.com/vetq ",
        idempotency_key="order-1234",
    )
    headers = options.headers()
    assert headers[PRIORITY_HEADER] == "high"
    assert headers[TENANT_HEADER] == "acme_2"
    assert headers[CALLBACK_URL_HEADER] == "https://hooks.example.com/vetq"
    assert headers[BUDGET_USD_HEADER] == 0.5 and headers[LANE_HEADER] == "bulk"
    assert "order-1234" not in repr(headers)
    assert options.idempotency_key == "order-1234"
    assert job_options(idempotency_key="k" * 200).idempotency_key == "k" * 200
