"""A schema document checked and compiled: its fields by path, its rules parsed, the
label lexicon its amounts are read with, the models its records are parsed with, and
the hash that names exactly this schema on the wire.

Everything a schema can get wrong is found here and refused as SCHEMA_INVALID with
the path in the schema where it stands: an unknown kind, an option of another kind, a
rule naming a field that does not exist, a type that contains itself, a pattern that
does not compile, more fields or deeper nesting than the limits allow."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ValidationError

from vetq.core.errors import ErrorCode, VetqError
from vetq.core.extraction.lexicon import (
    Lexicon,
    LexiconError,
    compile_lexicon,
    compile_value_lexicon,
    normalise_label,
    normalise_phrase,
)
from vetq.core.schemas.records import build_record_model, spell_location, validate_record
from vetq.core.schemas.rules import EACH, Comparison, PathRef, RuleSyntaxError, parse_rule, paths_in
from vetq.core.schemas.spec import (
    CONTAINER_KINDS,
    KINDS,
    LABELLED_VALUE_KINDS,
    NUMERIC_KINDS,
    FieldSpec,
    RuleSpec,
    SchemaDocument,
    TypeSpec,
)

__all__ = [
    "CompiledRule",
    "CompiledSchema",
    "FieldDef",
    "SchemaInvalidError",
    "SchemaLimits",
    "compile_schema",
    "schema_hash",
]


class SchemaInvalidError(VetqError):
    code = ErrorCode.SCHEMA_INVALID


@dataclass(frozen=True)
class SchemaLimits:
    """How large a schema may be (VETQ_SCHEMA_MAX_*): a schema travels in every job's
    message and is walked for every record."""

    max_fields: int = 200
    max_depth: int = 3
    max_list_items: int = 1000
    max_bytes: int = 65_536  # an inline schema's canonical JSON


# Options that belong to one kind only; any other kind refuses them.
_OPTION_KINDS: dict[str, tuple[str, ...]] = {
    "pattern": ("text", "identifier"),
    "validator": ("identifier",),
    "party": ("text",),
    "values": ("enum",),
    "cues": ("boolean",),
    "units": ("number", "quantity"),
    "fields": CONTAINER_KINDS,
    "items": ("list",),
    "max_items": ("list",),
}


@dataclass(frozen=True)
class FieldDef:
    name: str
    path: str  # the template path: line_items[].amount
    kind: str  # one of KINDS (a declared type is an object)
    description: str = ""
    required: bool = False
    labels: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    validator: str | None = None
    party: str | None = None  # "seller" or "buyer": the party a text names
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    cues: Mapping[bool, tuple[str, ...]] = field(default_factory=dict)
    units: tuple[str, ...] = ()
    children: tuple[FieldDef, ...] = ()
    max_items: int | None = None
    type_name: str | None = None
    # The standard label sets it takes ("total" for "@total"): what the checks know of
    # a field's meaning beyond its name (a total is the document's largest figure).
    label_sets: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CompiledRule:
    spec: RuleSpec
    comparison: Comparison
    scope: str | None  # "line_items[]": the rule holds for each item of that list
    blame: str | None  # the template path blamed when every value is grounded
    paths: tuple[str, ...]  # every template path it reads
    dates: bool  # compares dates, not numbers


class SchemaInfo(BaseModel):
    """What a result records of the schema it was verified against."""

    name: str
    version: int
    hash: str


def schema_hash(canonical: Mapping[str, Any]) -> str:
    """sha256 of the schema's canonical JSON: the same schema written as YAML or JSON,
    with options at their defaults spelled out or left off, has one hash."""
    data = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


@dataclass(frozen=True, eq=False)
class CompiledSchema:
    document: SchemaDocument
    canonical: dict[str, Any]
    hash: str
    fields: tuple[FieldDef, ...]
    by_path: Mapping[str, FieldDef]
    rules: tuple[CompiledRule, ...]
    lexicon: Lexicon
    # The labels of its labelled date, identifier and text fields, with the standard
    # value label sets (None: no such field declares labels).
    value_lexicon: Lexicon | None = None

    @property
    def name(self) -> str:
        return self.document.name

    @property
    def version(self) -> int:
        return self.document.version

    @property
    def description(self) -> str:
        return self.document.description

    @property
    def info(self) -> SchemaInfo:
        return SchemaInfo(name=self.name, version=self.version, hash=self.hash)

    @cached_property
    def strict_model(self) -> type[BaseModel]:
        return build_record_model(_model_name(self.name), self.fields, strict=True)

    @cached_property
    def answer_model(self) -> type[BaseModel]:
        return build_record_model(_model_name(self.name), self.fields, strict=False)

    def validate_data(self, data: Any) -> dict[str, Any]:
        """A caller's record, normalised; RecordError naming each path that does not fit."""
        return validate_record(self.strict_model, data, what="data")

    def parse_answer(self, data: Any) -> dict[str, Any]:
        """A model's record: keys the schema does not have are dropped."""
        return validate_record(self.answer_model, data, what="answer", limit=5)


def _model_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) or "Record"


def compile_schema(document: Any, limits: SchemaLimits | None = None) -> CompiledSchema:
    """A schema document (a mapping, or a SchemaDocument) checked and compiled;
    SchemaInvalidError naming the path in the schema otherwise."""
    limits = limits or SchemaLimits()
    if not isinstance(document, SchemaDocument):
        try:
            document = SchemaDocument.model_validate(document)
        except ValidationError as exc:
            from vetq.core.validation import explain

            raise SchemaInvalidError(f"invalid schema: {explain(exc, root='schema', path=spell_location)}") from None
        except RecursionError:
            raise SchemaInvalidError("invalid schema: nested too deeply") from None
    builder = _Builder(document, limits)
    fields = builder.fields(document.fields, prefix="", where="fields", depth=1, seen_types=())
    for name in document.types:  # every declared type is checked, used or not
        _Builder(document, limits)._typed(name, f"types.{name}", name, 2, ())
    rules = tuple(builder.rule(rule, f"rules[{i}]") for i, rule in enumerate(document.rules))
    try:
        lexicon = compile_lexicon(builder.role_labels)
        value_lexicon = (
            compile_value_lexicon(
                builder.value_labels, {path: builder.by_path[path].kind for path in builder.value_labels}
            )
            if builder.value_labels
            else None
        )
    except LexiconError as exc:
        raise SchemaInvalidError(f"invalid schema: {exc}") from None
    canonical = document.model_dump(mode="json", exclude_defaults=True)
    return CompiledSchema(
        document=document,
        canonical=canonical,
        hash=schema_hash(canonical),
        fields=fields,
        by_path=builder.by_path,
        rules=rules,
        lexicon=lexicon,
        value_lexicon=value_lexicon,
    )


class _Builder:
    def __init__(self, document: SchemaDocument, limits: SchemaLimits) -> None:
        self.document = document
        self.limits = limits
        self.by_path: dict[str, FieldDef] = {}
        self.role_labels: dict[str, list[str]] = {}
        self.value_labels: dict[str, list[str]] = {}
        self._label_owner: dict[str, str] = {}

    def fail(self, where: str, message: str) -> SchemaInvalidError:
        return SchemaInvalidError(f"invalid schema: {where}: {message}")

    # --- fields ---------------------------------------------------------------
    def fields(
        self, specs: Mapping[str, FieldSpec], *, prefix: str, where: str, depth: int, seen_types: tuple[str, ...]
    ) -> tuple[FieldDef, ...]:
        if not specs:
            raise self.fail(where, "has no fields")
        if depth > self.limits.max_depth:
            raise self.fail(where, f"nests deeper than {self.limits.max_depth} levels (VETQ_SCHEMA_MAX_DEPTH)")
        out = []
        for name, spec in specs.items():
            if not re.fullmatch(r"[a-z_][a-z0-9_]{0,63}", name):
                raise self.fail(f"{where}.{name}", "a field name is lowercase letters, digits and _")
            out.append(self.field(name, spec, prefix=prefix, where=f"{where}.{name}", depth=depth, seen=seen_types))
        return tuple(out)

    def field(
        self, name: str, spec: FieldSpec, *, prefix: str, where: str, depth: int, seen: tuple[str, ...]
    ) -> FieldDef:
        path = f"{prefix}.{name}" if prefix else name
        if len(self.by_path) >= self.limits.max_fields:
            raise self.fail(where, f"the schema has more than {self.limits.max_fields} fields (VETQ_SCHEMA_MAX_FIELDS)")
        kind, type_name = spec.kind, None
        if kind not in KINDS:
            if kind not in self.document.types:
                known = ", ".join(KINDS + tuple(self.document.types))
                raise self.fail(f"{where}.kind", f"unknown kind {kind!r} (one of: {known})")
            kind, type_name = "object", spec.kind
        self._refuse_foreign_options(spec, kind, where)
        children: tuple[FieldDef, ...] = ()
        max_items = None
        if kind == "list":
            if (spec.fields is None) == (spec.items is None):
                raise self.fail(
                    where, "a list names its item fields (fields:) or a declared type (items:), one of them"
                )
            if spec.items is not None:
                type_name = spec.items
                children = self._typed(spec.items, f"{where}.items", path + EACH, depth + 1, seen)
            else:
                assert spec.fields is not None
                children = self.fields(
                    spec.fields, prefix=path + EACH, where=f"{where}.fields", depth=depth + 1, seen_types=seen
                )
            max_items = spec.max_items or self.limits.max_list_items
            if max_items > self.limits.max_list_items:
                raise self.fail(
                    f"{where}.max_items",
                    f"{max_items} is above the limit of {self.limits.max_list_items} (VETQ_SCHEMA_MAX_LIST_ITEMS)",
                )
        elif kind == "object":
            if type_name is not None:
                if spec.fields is not None:
                    raise self.fail(where, f"a field of type {type_name} takes its fields from the type")
                children = self._typed(type_name, f"{where}.kind", path, depth + 1, seen)
            elif spec.fields is None:
                raise self.fail(where, "an object lists its fields (fields:)")
            else:
                children = self.fields(
                    spec.fields, prefix=path, where=f"{where}.fields", depth=depth + 1, seen_types=seen
                )
        pattern = None
        if spec.pattern is not None:
            try:
                pattern = re.compile(spec.pattern)
            except re.error as exc:
                raise self.fail(f"{where}.pattern", f"does not compile: {exc}") from None
        labels = self._labels(spec.labels, path, f"{where}.labels", kind)
        values: dict[str, tuple[str, ...]] = {}
        if kind == "enum":
            if not spec.values:
                raise self.fail(where, "an enum lists its values (values:)")
            assert isinstance(spec.values, dict)
            values = {value: self._words(words, f"{where}.values.{value}") for value, words in spec.values.items()}
        cues: dict[bool, tuple[str, ...]] = {}
        if kind == "boolean" and spec.cues:
            cues = {key == "true": self._words(words, f"{where}.cues.{key}") for key, words in spec.cues.items()}
        definition = FieldDef(
            name=name,
            path=path,
            kind=kind,
            description=spec.description,
            required=spec.required,
            labels=labels,
            pattern=pattern,
            validator=spec.validator,
            party=spec.party,
            values=values,
            cues=cues,
            units=self._words(spec.units, f"{where}.units"),
            children=children,
            max_items=max_items,
            type_name=type_name,
            label_sets=frozenset(label[1:] for label in spec.labels if label.startswith("@")),
        )
        self.by_path[path] = definition
        return definition

    def _typed(
        self, type_name: str, where: str, prefix: str, depth: int, seen: tuple[str, ...]
    ) -> tuple[FieldDef, ...]:
        spec: TypeSpec | None = self.document.types.get(type_name)
        if spec is None:
            raise self.fail(where, f"no type {type_name!r} is declared under types")
        if type_name in seen:
            cycle = " -> ".join((*seen[seen.index(type_name) :], type_name))
            raise self.fail(where, f"type {type_name} contains itself ({cycle}): a record cannot nest forever")
        return self.fields(
            spec.fields, prefix=prefix, where=f"types.{type_name}.fields", depth=depth, seen_types=(*seen, type_name)
        )

    def _words(self, words: list[str], where: str) -> tuple[str, ...]:
        """Cue words and units, as the matcher compares them (casefolded, single
        spaces); unlike a label, one need not start with a letter ("%", "£")."""
        normalised = tuple(dict.fromkeys(normalise_phrase(word.strip()) for word in words))
        if "" in normalised:
            raise self.fail(where, "a word must not be empty")
        return normalised

    def _refuse_foreign_options(self, spec: FieldSpec, kind: str, where: str) -> None:
        given = spec.model_fields_set
        for option, kinds in _OPTION_KINDS.items():
            if option in given and getattr(spec, option) is not None and kind not in kinds:
                raise self.fail(f"{where}.{option}", f"applies to {' or '.join(kinds)} fields, not to {kind}")

    def _labels(self, labels: list[str], path: str, where: str, kind: str) -> tuple[str, ...]:
        from vetq.core.extraction.lexicon import STANDARD_LABEL_SETS

        phrases: list[str] = []
        for i, label in enumerate(labels):
            if label.startswith("@"):
                standard = STANDARD_LABEL_SETS.get(label[1:])
                if standard is None:
                    known = ", ".join("@" + s for s in STANDARD_LABEL_SETS)
                    raise self.fail(f"{where}[{i}]", f"no standard label set {label!r} (one of: {known})")
                phrases.extend(standard)
                continue
            try:
                phrases.append(normalise_label(label))
            except LexiconError as exc:
                raise self.fail(f"{where}[{i}]", str(exc)) from None
        phrases = list(dict.fromkeys(phrases))
        # The labels of a field outside any list read which number in the document plays
        # a numeric field's role, and which value a date, identifier or text is; a label
        # may name one field only. (An enum's, a boolean's or a currency's labels are
        # grounded by their words, not by a label: theirs only reach the prompt.)
        if phrases and EACH not in path and kind in (*NUMERIC_KINDS, *LABELLED_VALUE_KINDS):
            for phrase in phrases:
                owner = self._label_owner.setdefault(phrase, path)
                if owner != path:
                    raise self.fail(where, f"the label {phrase!r} is also {owner}'s: a label names one field")
            (self.role_labels if kind in NUMERIC_KINDS else self.value_labels)[path] = phrases
        return tuple(phrases)

    # --- rules ----------------------------------------------------------------
    def rule(self, spec: RuleSpec, where: str) -> CompiledRule:
        try:
            comparison = parse_rule(spec.check)
        except RuleSyntaxError as exc:
            raise self.fail(f"{where}.check", str(exc)) from None
        read = [(path, in_sum) for side in comparison.sides for path, in_sum in paths_in(side)]
        if not read:
            raise self.fail(f"{where}.check", "names no field")
        kinds = set()
        scopes = set()
        for path, in_sum in read:
            definition = self.by_path.get(path)
            if definition is None:
                raise self.fail(f"{where}.check", f"no field {path!r} in this schema")
            if definition.kind not in (*NUMERIC_KINDS, "date"):
                raise self.fail(
                    f"{where}.check", f"{path} is a {definition.kind} field: rules compare numbers and dates"
                )
            kinds.add("date" if definition.kind == "date" else "number")
            if not in_sum and EACH in path:
                scopes.add(path[: path.rindex(EACH) + len(EACH)])
        if len(kinds) > 1:
            raise self.fail(f"{where}.check", "compares dates with numbers")
        dates = kinds == {"date"}
        if dates and (comparison.is_equation or any(not isinstance(side, PathRef) for side in comparison.sides)):
            raise self.fail(f"{where}.check", "dates are compared in order (<, <=, >, >=), never added up")
        if len(scopes) > 1:
            raise self.fail(
                f"{where}.check", f"reads items of {len(scopes)} different lists at once: {', '.join(sorted(scopes))}"
            )
        scope = scopes.pop() if scopes else None
        if scope is not None and scope.count(EACH) > 1:
            raise self.fail(f"{where}.check", "a rule holds for each item of one list, not of a list inside a list")
        blame = spec.blame
        if blame is not None:
            if blame not in {path for path, _ in read}:
                raise self.fail(f"{where}.blame", f"{blame!r} is not a field this rule reads")
        elif comparison.is_equation and isinstance(comparison.sides[-1], PathRef):
            blame = comparison.sides[-1].template
        return CompiledRule(
            spec=spec,
            comparison=comparison,
            scope=scope,
            blame=blame,
            paths=tuple(dict.fromkeys(path for path, _ in read)),
            dates=dates,
        )
