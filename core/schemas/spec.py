"""The schema document: what a user writes (YAML or JSON, no Python) to tell vetq what
record a document holds. Only its shape is checked here; what it means (kinds that
exist, rules that name real fields, types without cycles, the limits) is the
compiler's (core.schemas.compiled)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
FIELD_NAME_PATTERN = r"^[a-z_][a-z0-9_]{0,63}$"

# Field kinds, each with its own parsing, grounding and normalisation
# (core.extraction.checks). A field may also name one of the document's `types`.
SCALAR_KINDS = (
    "text",
    "identifier",
    "amount",
    "number",
    "quantity",
    "date",
    "time",
    "currency",
    "enum",
    "boolean",
    "email",
    "phone",
    "url",
)
CONTAINER_KINDS = ("list", "object")
KINDS = SCALAR_KINDS + CONTAINER_KINDS
NUMERIC_KINDS = ("amount", "number", "quantity")
# The kinds whose value is written where the document writes it, so that the label
# beside it says which value it is (core.extraction.field_checks reads it).
LABELLED_VALUE_KINDS = ("text", "identifier", "date", "email", "phone", "url")
# The identifier checksums a schema may ask for.
VALIDATORS = ("iban", "luhn", "vat")

Phrases = list[str]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, str_strip_whitespace=True)


class FieldSpec(_Strict):
    """One field. Options that belong to another kind are refused by the compiler,
    with the field's path, so a typo never silently does nothing."""

    kind: str = Field(min_length=1, max_length=64)
    description: str = Field(default="", max_length=1000)
    required: bool = False
    # What documents call this value, in any language ("Total", "Amount due",
    # "Gesamtbetrag"). An entry "@total" takes a standard set (core.schemas.labels).
    labels: Phrases = Field(default_factory=list, max_length=500)
    # text / identifier: a regular expression the whole value must match.
    pattern: str | None = Field(default=None, max_length=500)
    # identifier: a checksum or format the value must pass.
    validator: Literal["iban", "luhn", "vat"] | None = None
    # text: the party of the document the value names; one the document writes only under
    # the other party's labels is the other's ("Bill to" over an invoice's vendor).
    party: Literal["seller", "buyer"] | None = None
    # enum: each allowed value with the words that ground it in a document
    # (a plain list means each value is its own word).
    values: dict[str, Phrases] | list[str] | None = None
    # boolean: the words that say true and the words that say false.
    cues: dict[Literal["true", "false"], Phrases] | None = None
    # number / quantity: the units a value may be written with ("kg", "pcs").
    units: Phrases = Field(default_factory=list, max_length=100)
    # list / object: the fields of an item (or of the object) ...
    fields: dict[str, FieldSpec] | None = None
    # ... or, for a list, the name of a declared type its items are.
    items: str | None = Field(default=None, max_length=64)
    max_items: int | None = Field(default=None, ge=1)

    @field_validator("labels", "units")
    @classmethod
    def _non_empty_phrases(cls, value: list[str]) -> list[str]:
        return _check_phrases(value)

    @field_validator("values")
    @classmethod
    def _enum_values(cls, value: dict[str, Phrases] | list[str] | None) -> dict[str, Phrases] | None:
        if value is None:
            return None
        if isinstance(value, list):
            value = {str(v): [str(v)] for v in value}
        if not value:
            raise ValueError("an enum needs at least one value")
        return {str(name).strip(): _check_phrases(words or [str(name)]) for name, words in value.items()}

    @field_validator("cues", mode="before")
    @classmethod
    def _yaml_boolean_keys(cls, value: Any) -> Any:
        # YAML reads an unquoted `true:` key as a boolean
        if isinstance(value, dict):
            return {str(key).lower() if isinstance(key, bool) else key: words for key, words in value.items()}
        return value

    @field_validator("cues")
    @classmethod
    def _cue_words(cls, value: dict[str, Phrases] | None) -> dict[str, Phrases] | None:
        if value is None:
            return None
        return {key: _check_phrases(words) for key, words in value.items()}


class TypeSpec(_Strict):
    """A named object type, for fields or list items of the same shape (parties,
    addresses). A type may use other types, never itself (directly or not)."""

    description: str = Field(default="", max_length=1000)
    fields: dict[str, FieldSpec]


class RuleSpec(_Strict):
    """A deterministic cross-field check. It can only lower the scores of the fields it
    names. `check` is an expression: `subtotal + tax = total`,
    `sum(line_items[].amount) = subtotal`, `line_items[].quantity * line_items[].unit_price
    = line_items[].amount` (each item), `due_date >= invoice_date`, `0 <= tax_rate <= 1`."""

    check: str = Field(min_length=1, max_length=500)
    # An equation holds when the two sides differ by at most this much.
    tolerance: float = Field(default=0.01, ge=0)
    # A difference within this is named as rounding (cash, per-line tax) and costs
    # little; beyond it, the rule fails.
    rounding: float | None = Field(default=None, ge=0)
    # A difference that labelled charges or discounts in the source make up
    # (shipping, a discount, an amount already paid) costs little.
    adjustments: bool = False
    # Paths that count as 0 when null (a receipt with no tip still adds up); any other
    # null leaves the rule unchecked, since an honest null never fails a rule.
    optional: list[str] = Field(default_factory=list, max_length=50)
    # Who is blamed when every value in the rule is grounded: by default the one
    # field on the right-hand side of the comparison.
    blame: str | None = Field(default=None, max_length=200)
    why: str = Field(default="", max_length=300)


class SchemaDocument(_Strict):
    name: str = Field(pattern=NAME_PATTERN)
    version: int = Field(default=1, ge=1)
    description: str = Field(default="", max_length=2000)
    types: dict[str, TypeSpec] = Field(default_factory=dict)
    fields: dict[str, FieldSpec]
    rules: list[RuleSpec] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _a_mapping(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError("a schema is a mapping with name, version, description, fields and rules")
        return value


def _check_phrases(value: list[str]) -> list[str]:
    out = []
    for phrase in value:
        if not isinstance(phrase, str) or not phrase.strip():
            raise ValueError("each phrase must be a non-empty string")
        if len(phrase) > 100:
            raise ValueError(f"the phrase {phrase[:20]!r}... is longer than 100 characters")
        out.append(phrase.strip())
    return out
