"""The human-review inbox: results a person must confirm, in a database of their own.

Workers hand every needs_review result to a Redis stream (workers/signals.py, with
VETQ_INBOX=on); the inbox takes them from it (ingest.py) into items in SQLite or
PostgreSQL (models.py, migrations/, store.py), a reviewer claims one, confirms or
corrects its fields on a web page (web.py) and the correction becomes the job's
final result (`status: "reviewed"`, workers/result_backend.store_reviewed). Resolved
items feed the system back: golden examples and labelling tools' formats
(export.py), and field thresholds calibrated to a target precision (calibrate.py).

Only the `vetq inbox` and `vetq calibrate` verbs import this package, and it needs
the vetq[inbox] extra (SQLAlchemy, Alembic, psycopg, Starlette, Jinja2, uvicorn)."""
