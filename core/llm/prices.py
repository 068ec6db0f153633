"""What a model call costs in US dollars: the one price table and the one cost rule.

The table is data: `prices.json` beside this module holds list prices per
`provider:model` (USD per million input, output, cache-read and cache-write tokens,
and the factor a provider's Batch API charges of them), with the date they were read
and where. A file named by VETQ_PRICES (JSON or YAML, the same shape; read by
core.settings, which stops the process on a malformed one) replaces or adds entries.

A key prices the model it names and that model's dated snapshots and variants: the
model name followed by `-`, `@` or `:` (core.llm.profiles.first_prefix_match with
boundaries), the longest key first. A model no key matches has no price, and its
cost is None, never 0: a budget in dollars cannot be kept on a guess.

`cost_usd(model, usage, lane=...)` is the cost of one answered call from its token
counts, for the lane the call ran on: `realtime` at list price, `bulk` (a provider's
Batch API) at list price times the entry's `batch_discount`. Costs are rounded to
micro-dollars (6 decimals); the ledger keeps dollar budgets as whole micro-dollars.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vetq.core.errors import ConfigError, InvalidInputError
from vetq.core.llm.client import ModelSpec
from vetq.core.llm.profiles import first_prefix_match
from vetq.core.llm.types import LLMResponse, Usage
from vetq.core.validation import explain

__all__ = [
    "ENV_VAR",
    "LANES",
    "MICRO_USD",
    "ModelPrice",
    "PriceTable",
    "budget_micro_usd",
    "check_budget_usd",
    "check_lane",
    "cost_usd",
    "load_prices",
    "micro_usd",
    "priced",
    "shipped_prices",
]

ENV_VAR = "VETQ_PRICES"
PRICES_FILE = "prices.json"
# The lanes a call can run on (core.lanes.Lane's values; a str enum passes as its value):
# realtime at list price, bulk (a provider's Batch API) at list price x batch_discount.
LANES = ("realtime", "bulk")
# What may follow a key in a model's name for the key to price it: a dated snapshot
# (claude-sonnet-4-5-20250929), Vertex's @version, Bedrock's :revision.
NAME_BOUNDARIES = "-@:"
PER_TOKENS = 1_000_000
MICRO_USD = 1_000_000
DECIMALS = 6


def micro_usd(usd: float) -> int:
    """Dollars as whole micro-dollars (the ledger's unit), rounded up: what a call
    costs or may cost."""
    return math.ceil(round(float(usd) * MICRO_USD, 3))


def budget_micro_usd(usd: float) -> int:
    """A dollar budget as whole micro-dollars, rounded down: never more than was given."""
    return math.floor(round(float(usd) * MICRO_USD, 3))


def check_budget_usd(value: Any, *, name: str = "budget_usd") -> float | None:
    """A dollar budget as given by a caller: None, or a positive finite number of dollars;
    anything else is INVALID_INPUT naming it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{name} must be a positive number of US dollars (e.g. 50 or 0.25), got {value!r}")
    if budget_micro_usd(value) < 1:
        raise InvalidInputError(f"{name} must be at least one micro-dollar (0.000001), got {value!r}")
    return float(value)


def check_lane(lane: str) -> str:
    """`lane` if it is one of LANES, else ValueError (a programming error, not input)."""
    if lane not in LANES:
        raise ValueError(f"unknown lane {lane!r}; choose one of {', '.join(LANES)}")
    return lane


# ---------------------------------------------------------------- the table


class _Entry(BaseModel):
    """One model's prices as written in a price file."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    batch_discount: float = Field(default=1.0, gt=0, le=1)


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    as_of: str | None = None
    sources: list[str] = Field(default_factory=list)
    about: str | None = None
    models: dict[str, _Entry]

    @field_validator("as_of", mode="before")
    @classmethod
    def _date(cls, value: Any) -> Any:
        return value.isoformat() if isinstance(value, date) else value  # YAML reads 2026-12-02 as a date

    @field_validator("models")
    @classmethod
    def _keys(cls, models: dict[str, _Entry]) -> dict[str, _Entry]:
        for key in models:
            try:
                ModelSpec.parse(key, variable=f"price key {key!r}")
            except ConfigError as exc:
                raise ValueError(exc.message) from None
        return models


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens of one model, and its Batch API factor."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    batch_discount: float

    def factor(self, lane: str) -> float:
        """What `lane` charges of the list price."""
        return self.batch_discount if check_lane(lane) == "bulk" else 1.0

    def cost(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        *,
        lane: str,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """Dollars for these token counts on `lane`, rounded to micro-dollars. The cache
        counts are tokens billed at the cache prices instead of the input price."""
        dollars = (
            prompt_tokens * self.input
            + completion_tokens * self.output
            + cache_read_tokens * self.cache_read
            + cache_write_tokens * self.cache_write
        ) / PER_TOKENS
        return round(dollars * self.factor(lane), DECIMALS)

    def estimate_micro_usd(self, prompt_tokens: int, max_tokens: int, *, lane: str) -> int:
        """What a call may cost at most, in micro-dollars: the prompt estimate at the
        input price and all of max_tokens at the output price (what a budget reserves)."""
        return micro_usd((prompt_tokens * self.input + max_tokens * self.output) / PER_TOKENS * self.factor(lane))


class PriceTable:
    """Prices by `provider:model` key; `lookup` finds a model's by its longest key."""

    def __init__(self, prices: Mapping[str, ModelPrice], *, as_of: str | None = None, sources: tuple[str, ...] = ()):
        self.prices = dict(prices)
        self.as_of = as_of
        self.sources = sources
        self._ordered = sorted(self.prices.items(), key=lambda item: len(item[0]), reverse=True)

    def lookup(self, model: ModelSpec | str) -> ModelPrice | None:
        """The price of `model` (a ModelSpec or `provider:model`), None when no key matches."""
        return first_prefix_match(self._ordered, str(model), boundaries=NAME_BOUNDARIES)

    def cost_usd(self, model: ModelSpec | str, usage: Usage, *, lane: str) -> float | None:
        price = self.lookup(model)
        return None if price is None else price.cost(usage.prompt_tokens, usage.completion_tokens, lane=lane)

    def price_for_budget(self, model: ModelSpec | str) -> ModelPrice:
        """The price a dollar budget needs to reserve a call of `model`; CONFIG_ERROR
        without one (nothing is sent)."""
        price = self.lookup(model)
        if price is None:
            raise ConfigError(f"no price for {model}; set {ENV_VAR} or drop the dollar budget")
        return price

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with `other`'s entries replacing or adding to its own."""
        return PriceTable(
            {**self.prices, **other.prices}, as_of=other.as_of or self.as_of, sources=other.sources or self.sources
        )


def _table(data: Any, where: str) -> PriceTable:
    try:
        parsed = _PriceFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {explain(exc, limit=3, root='the file')}") from None
    prices = {
        key: ModelPrice(
            input=entry.input,
            output=entry.output,
            cache_read=entry.input if entry.cache_read is None else entry.cache_read,
            cache_write=entry.input if entry.cache_write is None else entry.cache_write,
            batch_discount=entry.batch_discount,
        )
        for key, entry in parsed.models.items()
    }
    return PriceTable(prices, as_of=parsed.as_of, sources=tuple(parsed.sources))


@functools.cache
def shipped_prices() -> PriceTable:
    """The table vetq ships (prices.json), as of its `as_of` date."""
    text = resources.files("vetq.core.llm").joinpath(PRICES_FILE).read_text(encoding="utf-8")
    return _table(json.loads(text), f"the shipped {PRICES_FILE}")


def _read_price_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{ENV_VAR}: cannot read {path}: {type(exc).__name__}") from None
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            return json.loads(text, parse_constant=_not_finite)
        except ValueError as exc:
            raise ConfigError(f"{ENV_VAR}: {path} is not valid JSON ({str(exc)[:80]})") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{ENV_VAR}: {path} is not valid YAML{at}: {getattr(exc, 'problem', None) or exc}") from None


def _not_finite(name: str) -> Any:
    raise ValueError(f"{name} is not a price")


@functools.lru_cache(maxsize=8)
def _overrides(path: str, mtime_ns: int, size: int) -> PriceTable:
    return _table(_read_price_file(Path(path)), f"{ENV_VAR}: {path}")


def load_prices(path: Path | str | None = None) -> PriceTable:
    """The shipped table, with the entries of the price file at `path` (VETQ_PRICES)
    replacing or adding to it. A file that cannot be read or does not hold prices is
    a ConfigError naming VETQ_PRICES and what is wrong."""
    if path is None or str(path) == "":
        return shipped_prices()
    file = Path(path).expanduser()
    try:
        stat = file.stat()
    except OSError as exc:
        raise ConfigError(f"{ENV_VAR}: cannot read {file}: {type(exc).__name__}") from None
    return shipped_prices().merged(_overrides(str(file.resolve()), stat.st_mtime_ns, stat.st_size))


def priced(response: LLMResponse, price: ModelPrice | None, *, lane: str) -> LLMResponse:
    """An answered call's response with its cost set from its token counts (None
    without a price): what a call gate returns."""
    usage = response.usage
    cost = None if price is None else price.cost(usage.prompt_tokens, usage.completion_tokens, lane=lane)
    return response.with_cost(cost)


def cost_usd(model: ModelSpec | str, usage: Usage, *, lane: str, prices: PriceTable | None = None) -> float | None:
    """Dollars one answered call of `model` (a ModelSpec or `provider:model`) cost for
    `usage` on `lane`; None when the model has no price. `prices` defaults to the
    shipped table."""
    return (prices or shipped_prices()).cost_usd(model, usage, lane=lane)
