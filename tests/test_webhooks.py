"""Webhooks (issue 18), the producer's side: a callback_url is checked against
VETQ_WEBHOOK_ALLOW, and refused without VETQ_WEBHOOK_SECRET, before anything is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA
from vetq.core.errors import ConfigError, ErrorCode, InvalidInputError

SECRET = "whsec-test-" + "0123456789abcdef" * 2
ATTEMPTS = 3


def webhook_settings(home: Path, **extra: Any):
    from vetq.core.settings import load_settings

    options = {
        "webhook_secret": SECRET,
        "webhook_allow": "127.0.0.1",  # loopback, and nothing else
        "webhook_attempts": ATTEMPTS,
        "webhook_backoff_s": 0.05,
        "webhook_timeout_s": 5,
    }
    return load_settings(home=home, **{**options, **extra})


def validation(**options: Any):
    return {"kind": "validate", "text": GLOBEX, "data": GLOBEX_DATA, "heuristics_only": True, **options}


# ------------------------------------------------------------------ at submission


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/hook",  # private
        "http://192.168.0.10:8080/hook",
        "http://169.254.169.254/latest/meta-data",  # a cloud's metadata service: link-local
        "http://127.0.0.2:9/hook",  # loopback, but not the address listed
        "http://[::1]:9/hook",
        "http://[::ffff:10.0.0.1]/hook",  # an IPv4 address in IPv6 clothing
        "http://localhost:9/hook",
        "https://hooks.example.com/vetq",  # public, but not listed
        "ftp://127.0.0.1/hook",  # not http(s)
    ],
)
def test_a_callback_url_not_allowed_is_refused_at_submission(url, tmp_path):
    from vetq.api_client.client import Client

    # Nothing listens there: a refusal must come before anything is sent.
    with Client("redis://127.0.0.1:9/0", settings=webhook_settings(tmp_path)) as client:
        with pytest.raises(InvalidInputError, match="callback_url") as refused:
            client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, callback_url=url)
        assert refused.value.code == ErrorCode.INVALID_INPUT
        with pytest.raises(InvalidInputError, match="callback_url"):
            client.submit_batch([validation()], callback_url=url)


def test_a_callback_url_without_a_secret_is_refused_at_submission(tmp_path):
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings

    settings = load_settings(home=tmp_path, webhook_allow="127.0.0.1")
    with Client("redis://127.0.0.1:9/0", settings=settings) as client:
        with pytest.raises(ConfigError, match="VETQ_WEBHOOK_SECRET"):
            client.submit_validation(GLOBEX, GLOBEX_DATA, callback_url="http://127.0.0.1:9/hook")
        with pytest.raises(ConfigError, match="VETQ_WEBHOOK_SECRET"):
            client.submit_batch([validation()], callback_url="http://127.0.0.1:9/hook")


# ------------------------------------------------------------------ the rules


def test_the_allow_list_keeps_private_addresses_to_entries_that_name_them():
    from ipaddress import ip_address

    from vetq.core.webhooks import AllowList, check_destination

    everywhere = AllowList.parse("*")
    assert check_destination("https://hooks.example.com/x", everywhere) is None
    assert check_destination("https://93.184.216.34/x", everywhere) is None
    for private in ("10.0.0.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "[::1]", "[fe80::1]"):
        assert check_destination(f"http://{private}/x", everywhere) is not None, private
    assert check_destination("http://localhost/x", everywhere) is not None
    assert not everywhere.allows_address(ip_address("10.0.0.1"), host_named=False)

    listed = AllowList.parse(" hooks.internal, *.corp.example, 10.20.0.0/16, 127.0.0.1 ")
    assert check_destination("http://hooks.internal/x", listed) is None
    assert check_destination("http://a.b.corp.example/x", listed) is None
    assert check_destination("http://corp.example/x", listed) is not None  # *. is the subdomains
    assert check_destination("http://10.20.3.4/x", listed) is None
    assert check_destination("http://10.21.0.1/x", listed) is not None
    assert check_destination("https://hooks.example.com/x", listed) is not None  # no *: public hosts too
    # A host named by the operator may resolve to a private address; under * it may not.
    assert listed.allows_address(ip_address("10.9.9.9"), host_named=True)
    assert not listed.allows_address(ip_address("10.9.9.9"), host_named=False)
    assert AllowList.parse("").empty


@pytest.mark.parametrize("entry", ["http://x.example", "10.0.0.0/33", "*.", "a b", "*x.example"])
def test_a_malformed_allow_list_stops_at_start_naming_it(entry, tmp_path):
    from vetq.core.settings import load_settings

    with pytest.raises(ConfigError, match="VETQ_WEBHOOK_ALLOW"):
        load_settings(home=tmp_path, webhook_allow=f"127.0.0.1,{entry}")


def test_a_short_secret_stops_at_start_without_being_printed(tmp_path):
    from vetq.core.settings import as_environment, load_settings

    with pytest.raises(ConfigError, match="VETQ_WEBHOOK_SECRET") as refused:
        load_settings(home=tmp_path, webhook_secret="hunter2hunter2")
    assert "hunter2" not in refused.value.message
    settings = load_settings(home=tmp_path, webhook_secret=SECRET)
    assert SECRET not in repr(settings) and SECRET not in str(settings.model_dump())
    assert as_environment(settings)["VETQ_WEBHOOK_SECRET"] == SECRET  # a worker the client starts signs alike
