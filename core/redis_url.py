"""One spelling of a Redis URL for everything that connects with it.

redis-py accepts the credentials in the userinfo (`redis://user:pw@host`) or as query
parameters (`redis://host:6379/0?password=pw`, `?username=`). kombu (so Celery's
broker and result backend) reads them from the userinfo only, and passes every query
parameter on as a keyword argument next to the userinfo's: `?password=` made its URL
parser raise `dict() got multiple values for keyword argument 'password'`, and a
`?username=` would be silently dropped. `normalise_redis_url` moves them into the
userinfo once, before the URL reaches Celery; redis-py reads the result the same way."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

CREDENTIAL_PARAMETERS = ("username", "password")


def normalise_redis_url(url: str) -> str:
    """`url` with `?username=` / `?password=` moved into the userinfo (a password
    already in the userinfo wins, as it does in redis-py). Anything else is returned
    unchanged, so a URL without query credentials is the same string."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url  # not a URL at all: whoever connects with it says so
    if not parts.query:
        return url
    query = parse_qsl(parts.query, keep_blank_values=True)
    given: dict[str, str] = {}
    for name, value in query:
        if name in CREDENTIAL_PARAMETERS:
            given.setdefault(name, value)  # redis-py reads the first value
    if not given:
        return url
    userinfo, at, hostport = parts.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":") if at else ("", "", "")
    if not user and given.get("username"):
        user = quote(given["username"], safe="")
    if not (colon and password) and given.get("password"):
        password = quote(given["password"], safe="")
    credentials = f"{user}:{password}" if password else user
    netloc = f"{credentials}@{hostport}" if credentials else hostport
    rest = urlencode([(name, value) for name, value in query if name not in CREDENTIAL_PARAMETERS])
    return urlunsplit((parts.scheme, netloc, parts.path, rest, parts.fragment))
