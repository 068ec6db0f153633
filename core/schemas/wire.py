"""How a job names its schema on the wire, so a worker never verifies against a
different schema than the producer meant.

A producer sends `{"name", "hash"}` for a built-in (pinned: a worker whose built-in
of that name hashes differently refuses the job with SCHEMA_MISMATCH instead of
guessing) or `{"name", "hash", "document"}` for a schema of the caller's own (the whole
document travels, checked by the producer before sending and again by the worker,
which must arrive at the same hash). Workers keep compiled schemas by hash."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from threading import Lock
from typing import Any

from vetq.core.errors import ErrorCode, VetqError
from vetq.core.schemas.catalog import DEFAULT_SCHEMA, builtin, builtin_names, load
from vetq.core.schemas.compiled import CompiledSchema, SchemaInvalidError, SchemaLimits, compile_schema, schema_hash

__all__ = ["SchemaMismatchError", "SchemaSource", "resolve", "to_wire"]

# What a caller may pass as a schema: a built-in's name, a file path, the document as
# a mapping, a pydantic class, a compiled schema, or a wire reference.
SchemaSource = str | Path | Mapping[str, Any] | type | CompiledSchema

_CACHE_SIZE = 256
_compiled: OrderedDict[str, CompiledSchema] = OrderedDict()
_lock = Lock()
_compiling = Lock()


class SchemaMismatchError(VetqError):
    code = ErrorCode.SCHEMA_MISMATCH


def to_wire(source: SchemaSource | None, limits: SchemaLimits | None = None) -> tuple[dict[str, Any], CompiledSchema]:
    """The producer's side: the schema checked and compiled here, and the reference the
    message carries. A built-in travels by name and hash; any other schema whole."""
    if source is None:
        source = DEFAULT_SCHEMA
    if isinstance(source, Mapping) and "hash" in source:  # already a wire reference
        compiled = resolve(source, limits)
        return _reference(compiled, inline="document" in source), compiled
    compiled = source if isinstance(source, CompiledSchema) else load(source, limits)
    inline = not (isinstance(source, str) and source in builtin_names() and source == compiled.name)
    reference = _reference(compiled, inline=inline)
    if inline:
        _check_size(reference, limits)
    return reference, compiled


def _check_size(reference: Mapping[str, Any], limits: SchemaLimits | None) -> None:
    limit = (limits or SchemaLimits()).max_bytes
    size = wire_size(reference)
    if size > limit:
        raise SchemaInvalidError(
            f"schema {reference.get('name')!r} is {size} bytes as JSON; a job carries at most {limit} "
            "(VETQ_SCHEMA_MAX_BYTES): trim descriptions and labels, or make it a built-in"
        )


def _reference(compiled: CompiledSchema, *, inline: bool) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": compiled.name, "hash": compiled.hash}
    if inline:
        ref["document"] = compiled.canonical
    return ref


def resolve(reference: Any, limits: SchemaLimits | None = None) -> CompiledSchema:
    """The worker's side: the schema a job's message names, compiled (cached by hash).
    None is the default built-in (a message from a producer that sent no schema); a
    bare name is refused (SCHEMA_MISMATCH), as nothing pins which version it means."""
    if reference is None:
        return builtin(DEFAULT_SCHEMA)
    if isinstance(reference, CompiledSchema):
        return reference
    if isinstance(reference, str):
        # A bare name pins nothing: this worker's built-in of that name may not be the
        # one the producer's version meant, and verifying against it would be a guess.
        # vetq's producers always send {"name", "hash"} (to_wire); only a message made
        # by hand or by a foreign producer carries a bare name.
        raise SchemaMismatchError(
            f"schema {reference[:80]!r} came as a bare name, without the hash that pins which {reference[:80]} "
            'schema the producer meant: send {"name": ..., "hash": ...} (vetq\'s clients do)'
        )
    if not isinstance(reference, Mapping):
        raise SchemaInvalidError("schema must be a built-in's name or a schema document")
    if "hash" not in reference:  # a document given in-process, unpinned
        return compile_schema(dict(reference), limits)
    expected = reference.get("hash")
    if not isinstance(expected, str) or len(expected) != 64:
        raise SchemaInvalidError("schema.hash must be the schema's sha256 (64 hex digits)")
    document = reference.get("document")
    if document is None:
        name = reference.get("name")
        if not isinstance(name, str):
            raise SchemaInvalidError("schema.name must name a built-in schema when no document is sent")
        compiled = builtin(name)
        if compiled.hash != expected:
            raise SchemaMismatchError(
                f"the producer's built-in schema {name!r} (hash {expected[:12]}) is not this worker's "
                f"(hash {compiled.hash[:12]}): producer and workers run different vetq versions; upgrade the older side"
            )
        return compiled
    _check_size(reference, limits)
    # The cache is keyed by the hash of the document as it arrived, so an altered
    # document never finds the compiled schema of the one it claims to be.
    arrived = schema_hash(document) if isinstance(document, Mapping) else None
    if arrived == expected:
        cached = _cached(expected)
        if cached is not None:
            return cached
    with _compiling:  # once, not once per thread its first jobs arrive on at the same time
        cached = _cached(expected) if arrived == expected else None
        if cached is not None:
            return cached
        compiled = compile_schema(document, limits)
        if compiled.hash != expected:
            raise SchemaMismatchError(
                f"schema {compiled.name!r} hashes to {compiled.hash[:12]} here, but the producer sent hash "
                f"{expected[:12]}: the document changed on the way or the two sides differ in version"
            )
        if arrived == expected:
            with _lock:
                _compiled[expected] = compiled
                while len(_compiled) > _CACHE_SIZE:
                    _compiled.popitem(last=False)
    return compiled


def _cached(digest: str) -> CompiledSchema | None:
    with _lock:
        cached = _compiled.get(digest)
        if cached is not None:
            _compiled.move_to_end(digest)
        return cached


def wire_size(reference: Mapping[str, Any]) -> int:
    """The bytes a reference adds to a message (the inline-schema limit counts these)."""
    return len(json.dumps(reference, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
