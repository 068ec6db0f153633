"""Schemas: what record a document holds, written as data (YAML or JSON) or as a
pydantic class, checked and compiled once, and named on the wire by its hash.

    from vetq.core import schemas
    receipt = schemas.load("receipt")            # a built-in
    mine = schemas.load("path/to/it.yaml")       # a file of your own
    schemas.builtin_names()                      # ('invoice', 'purchase_order', ...)
"""

from vetq.core.schemas.catalog import DEFAULT_SCHEMA, builtin, builtin_names, load
from vetq.core.schemas.compiled import CompiledSchema, SchemaInfo, SchemaInvalidError, SchemaLimits, compile_schema
from vetq.core.schemas.records import RecordError
from vetq.core.schemas.wire import SchemaMismatchError

__all__ = [
    "DEFAULT_SCHEMA",
    "CompiledSchema",
    "RecordError",
    "SchemaInfo",
    "SchemaInvalidError",
    "SchemaLimits",
    "SchemaMismatchError",
    "builtin",
    "builtin_names",
    "compile_schema",
    "load",
]
