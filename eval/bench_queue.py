"""How much the vetq layer costs on top of raw Celery, and what its heuristics cost.

    python -m vetq.eval.bench_queue --jobs 1000 20000 100000 --json
    python -m vetq.eval.bench_queue --heuristics --json
    python -m vetq.eval.bench_queue --worker-cost --json
    python -m vetq.eval.bench_queue --awaits 10000 --json

Starts the embedded Redis and worker processes and, for each N, runs N no-op tasks
through raw Celery, then N heuristics-only validation jobs through vetq's Client and
through its AsyncClient, on the same Redis and workers. Each row: jobs per second, the
ratio to raw Celery's rate at the same N, the producer's CPU time per job (this
process, every thread) and the Redis memory a finished job keeps for VETQ_RESULT_TTL_S
(its result and, for vetq, its submitted mark: MEMORY USAGE over a sample of jobs).

With --heuristics it starts nothing and times run_heuristics in this process (the
median of --repeats calls, after one call whose time is shown as first_ms): the
built-in invoice on the first golden case, then a synthetic 40-field purchase order
(32 top-level fields of every scalar kind and 8 fields in each of its line items, with
three rules) on a generated document with 50 line items; then that schema at 10, 25,
50 and 100 items, and the 50-item document padded to 2x and 4x its length with
unrelated text. Every value checks against the whole text, so the cost should grow
with values x characters and no faster: ns_per_value_kchar staying flat (or falling)
down a scaling series says so, and `exponents` fits the growth (time ~ size^k).

With --worker-cost it starts the embedded Redis only and measures, in this process, the
worker's bookkeeping around one heuristics-only job in CPU time (the median of
--repeats rounds, the variants interleaved): writing STARTED and the result as Celery's
key-value backend does (a read, then a write) and as vetq's worker backend does (one
script; workers/result_backend.py), the result alone, the repr Celery's tracer makes
of a result at its default length and at vetq's (none), and the budget-limit round
trip every job used to make before its gate was built.

With --awaits N it submits N heuristics-only validation jobs through the AsyncClient
while no worker runs, awaits each one's `job.result()` at once (asyncio.gather), and
only then starts the workers: the threads and resident memory of this process while
all N waits are pending (every result channel subscribed) and after, its peak resident
memory, and the time until the last result."""

from __future__ import annotations

import argparse
import functools
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vetq.core.extraction.field_checks import FieldCheck
    from vetq.core.schemas import CompiledSchema

DOCUMENT = (
    "Hi team, forwarding the bill from Globex Ltd below.\nRef: GLX/2026/778\nBilling date 2026-02-28.\n"
    "Items came to 540.00 before tax, tax was 43.20, and the amount due is 583.20. Please pay in GBP.\n"
)
DATA = {
    "vendor_name": "Globex Ltd",
    "invoice_number": "GLX/2026/778",
    "invoice_date": "2026-02-28",
    "subtotal": 540.0,
    "tax": 43.2,
    "total": 583.2,
    "currency": "GBP",
}


def _wait_for_workers(client, count: int, timeout: float = 60.0) -> None:
    from vetq.api_client.admin import Admin

    deadline = time.monotonic() + timeout
    while len(Admin.of(client).workers()) < count:
        if time.monotonic() > deadline:
            raise SystemExit("workers did not start")
        time.sleep(0.2)


def _request() -> dict[str, Any]:
    return {"kind": "validate", "text": DOCUMENT, "data": DATA, "heuristics_only": True}


@dataclass
class _Measured:
    """One way of running N jobs: wall time, the producer's CPU time (this process, all
    its threads) and the Redis memory a finished job keeps (MEMORY USAGE of the keys
    it leaves for VETQ_RESULT_TTL_S, averaged over a sample of its jobs)."""

    seconds: float
    cpu_s: float
    bytes_per_job: float


MEMORY_SAMPLE = 200


def _kept_bytes(redis_client: Any, job_ids: Sequence[str]) -> float:
    from vetq.core.redis_keys import CELERY_RESULT_PREFIX, submitted_key

    sample = random.Random(7).sample(list(job_ids), min(MEMORY_SAMPLE, len(job_ids)))
    pipe = redis_client.pipeline(transaction=False)
    for job_id in sample:
        pipe.memory_usage(CELERY_RESULT_PREFIX + job_id)
        pipe.memory_usage(submitted_key(job_id))
    return sum(size or 0 for size in pipe.execute()) / len(sample)


def _measure(redis_client: Any, work: Callable[[], list[str]]) -> _Measured:
    wall, cpu = time.perf_counter(), time.process_time()
    job_ids = work()
    seconds, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    return _Measured(seconds, cpu_s, _kept_bytes(redis_client, job_ids))


def _vetq_sync(client: Any, jobs: int) -> list[str]:
    batch = client.submit_batch(_request() for _ in range(jobs))
    results = batch.results(timeout=600)
    assert len(results) == jobs and all(r["status"] == "ok" for r in results)
    return [job.id for job in batch.jobs]


def _vetq_async(redis_url: str, settings: Any, jobs: int) -> list[str]:
    import asyncio

    from vetq.api_client.aio import AsyncClient, AsyncJob

    async def main() -> list[str]:
        async with AsyncClient(redis_url, settings=settings) as client:
            batch = await client.submit_batch(_request() for _ in range(jobs))
            results = await batch.results(timeout=600)
            assert len(results) == jobs and all(r["status"] == "ok" for r in results)
            return [entry.id for entry in batch.entries if isinstance(entry, AsyncJob)]

    return asyncio.run(main())


def _resident_mb(field: str = "VmRSS") -> float | None:
    """This process's resident memory now (VmRSS), or the most it has held (VmHWM, which
    unlike ru_maxrss counts the present too), from /proc (Linux; else None)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def run_awaits(jobs: int, workers: int, concurrency: int) -> dict[str, Any]:
    """N waits pending at once in one process (see the module's docstring). A wait
    looks for a live worker after LIVENESS_CHECK_S, so the workers must be up within
    some ten seconds of the waits' start."""
    import asyncio
    import threading

    import redis as redis_py

    from vetq.api_client.aio import AsyncClient
    from vetq.core.redis_keys import CELERY_RESULT_PREFIX
    from vetq.core.settings import load_settings
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    home = Path(tempfile.mkdtemp(prefix="vetq-bench-awaits-"))
    settings = load_settings(home=home, log_level="WARNING")
    processes: list[Any] = []
    figures: dict[str, Any] = {"jobs": jobs, "workers": workers, "concurrency": concurrency}

    async def main() -> None:
        async with AsyncClient(redis.live_url, settings=settings) as client:
            job_list = [await client.submit(_request()) for _ in range(jobs)]
            figures["threads_before"] = threading.active_count()
            figures["resident_mb_before"] = _resident_mb()
            most_threads = [threading.active_count()]

            async def count_threads() -> None:
                while True:
                    most_threads[0] = max(most_threads[0], threading.active_count())
                    await asyncio.sleep(0.05)

            counter = asyncio.create_task(count_threads())
            waits = asyncio.gather(*(job.result(timeout=600) for job in job_list))
            # Every wait pending: its result channel subscribed, and no worker runs yet.
            with redis_py.Redis.from_url(redis.live_url) as probe:
                deadline = time.monotonic() + 60
                while len(probe.pubsub_channels(f"{CELERY_RESULT_PREFIX}*")) < jobs:
                    if time.monotonic() > deadline:
                        raise SystemExit("the waits did not all subscribe within 60 s")
                    await asyncio.sleep(0.1)
            figures["threads_all_pending"] = threading.active_count()
            figures["resident_mb_all_pending"] = _resident_mb()
            started = time.perf_counter()
            processes.extend(
                spawn_worker_process(redis.live_url, concurrency=concurrency, die_with_parent=True)
                for _ in range(workers)
            )
            results = await waits
            figures["wait_s"] = round(time.perf_counter() - started, 1)
            counter.cancel()
            figures["threads_peak"] = max(most_threads[0], threading.active_count())
            figures["ok"] = sum(1 for result in results if result.get("status") == "ok")
            figures["resident_mb_peak"] = _resident_mb("VmHWM")

    with EmbeddedRedis(home, role="bench") as redis:
        try:
            asyncio.run(main())
        finally:
            stop_processes(processes)
    return figures


def _raw_celery(app: Any, jobs: int) -> list[str]:
    from celery.result import ResultSet

    from vetq.core.queue import TASK_NOOP

    handles = [app.send_task(TASK_NOOP, args=[None], queue="extract") for _ in range(jobs)]
    # disable_sync_subtasks: a process that also ran a worker (the tests) is not a task.
    ResultSet(handles, app=app).join_native(timeout=600, disable_sync_subtasks=False)
    return [handle.id for handle in handles]


def _row(way: str, jobs: int, measured: _Measured, raw: _Measured | None) -> dict[str, Any]:
    rate = jobs / measured.seconds
    row: dict[str, Any] = {
        "way": way,
        "jobs": jobs,
        "jobs_per_s": round(rate, 1),
        "producer_cpu_ms_per_job": round(1000 * measured.cpu_s / jobs, 3),
        "redis_bytes_per_job": round(measured.bytes_per_job),
    }
    if raw is not None:
        row["ratio_to_raw_celery"] = round(rate / (jobs / raw.seconds), 3)
    return row


def _best_of_rounds(
    redis_client: Any, ways: dict[str, Callable[[int], list[str]]], jobs: int, rounds: int
) -> dict[str, _Measured]:
    """Each way run `rounds` times, the order turned each round so no way always runs
    first or last; per way the fastest round (the least disturbed by whatever else the
    machine runs), with the median CPU time per job of its rounds."""
    runs: dict[str, list[_Measured]] = {way: [] for way in ways}
    order = list(ways)
    for turn in range(rounds):
        for way in order[turn % len(order) :] + order[: turn % len(order)]:
            runs[way].append(_measure(redis_client, functools.partial(ways[way], jobs)))
    best = {}
    for way, measured in runs.items():
        fastest = min(measured, key=lambda m: m.seconds)
        cpu_s = statistics.median(m.cpu_s for m in measured)
        best[way] = _Measured(fastest.seconds, cpu_s, fastest.bytes_per_job)
    return best


def _worker_env(index: int, metrics_port: int | None) -> dict[str, str]:
    environment = {"VETQ_LOG_LEVEL": "WARNING"}
    if metrics_port is not None:  # a port each: several workers on one host
        environment["VETQ_METRICS_PORT"] = str(metrics_port + index)
    return environment


def run(
    job_counts: Sequence[int],
    workers: int,
    concurrency: int,
    *,
    with_async: bool = True,
    rounds: int = 1,
    metrics_port: int | None = None,
) -> dict[str, Any]:
    """For each N: N heuristics-only validation jobs through vetq's Client (and its
    AsyncClient), and N no-op tasks through raw Celery, on the same Redis and workers,
    `rounds` times each (see _best_of_rounds)."""
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    home = Path(tempfile.mkdtemp(prefix="vetq-bench-"))
    settings = load_settings(home=home, log_level="WARNING")
    rows: list[dict[str, Any]] = []
    with EmbeddedRedis(home, role="bench") as redis:
        processes = [
            spawn_worker_process(
                redis.live_url, concurrency=concurrency, extra_env=_worker_env(i, metrics_port), die_with_parent=True
            )
            for i in range(workers)
        ]
        try:
            with Client(redis.url, settings=settings) as client:
                _wait_for_workers(client, workers)
                _vetq_sync(client, 20)  # warm: imports, connections, the workers' first jobs
                _raw_celery(client.app, 20)
                r = client.redis()
                ways: dict[str, Callable[[int], list[str]]] = {
                    "raw_celery": functools.partial(_raw_celery, client.app),
                    "vetq_client": functools.partial(_vetq_sync, client),
                }
                if with_async:
                    ways["vetq_async_client"] = functools.partial(_vetq_async, client.redis_url, settings)
                for jobs in job_counts:
                    best = _best_of_rounds(r, ways, jobs, rounds)
                    raw = best["raw_celery"]
                    new_rows = [
                        _row(way, jobs, measured, None if way == "raw_celery" else raw)
                        for way, measured in best.items()
                    ]
                    print(json.dumps(new_rows), file=sys.stderr, flush=True)
                    rows += new_rows
        finally:
            stop_processes(processes)
    return {
        "workers": workers,
        "concurrency": concurrency,
        "rounds": rounds,
        "metrics": metrics_port is not None,
        "rows": rows,
    }


# --- --heuristics: what run_heuristics costs, by values and document length ----------------

GOLDEN_INVOICES = Path(__file__).with_name("golden") / "invoice" / "cases.jsonl"
LINE_ITEMS = (10, 25, 50, 100)
MAIN_ITEMS = 50
PADDINGS = (2, 4)
_IBAN = "GB82WEST12345698765432"  # the standard example IBAN: its mod-97 check passes

# A purchase order with 32 top-level fields and 8 per line item: 40 fields in all.
_UNITS = ["pcs", "box", "kg", "m", "set"]
BIG_SCHEMA: dict[str, Any] = {
    "name": "bench_purchase_order",
    "version": 1,
    "description": "A synthetic 40-field purchase order for the heuristics benchmark.",
    "fields": {
        "po_number": {"kind": "identifier", "required": True},
        "requisition_number": {"kind": "identifier"},
        "order_date": {"kind": "date"},
        "delivery_date": {"kind": "date"},
        "payment_due_date": {"kind": "date"},
        "buyer_name": {"kind": "text"},
        "buyer_contact": {"kind": "text"},
        "buyer_email": {"kind": "email"},
        "buyer_phone": {"kind": "phone"},
        "supplier_name": {"kind": "text"},
        "supplier_email": {"kind": "email"},
        "supplier_phone": {"kind": "phone"},
        "supplier_website": {"kind": "url"},
        "supplier_vat_id": {"kind": "identifier"},
        "supplier_iban": {"kind": "identifier", "validator": "iban"},
        "ship_to": {"kind": "text"},
        "bill_to": {"kind": "text"},
        "payment_terms": {"kind": "text"},
        "incoterm": {
            "kind": "enum",
            "values": {
                "EXW": ["exw", "ex works"],
                "FOB": ["fob", "free on board"],
                "DAP": ["dap", "delivered at place"],
                "DDP": ["ddp", "delivered duty paid"],
            },
        },
        "shipping_method": {
            "kind": "enum",
            "values": {"road": ["road freight"], "air": ["air freight"], "sea": ["sea freight", "ocean freight"]},
        },
        "priority": {"kind": "enum", "values": {"standard": ["standard priority"], "urgent": ["urgent"]}},
        "partial_shipments": {
            "kind": "boolean",
            "cues": {"true": ["partial shipments allowed"], "false": ["no partial shipments"]},
        },
        "tax_exempt": {"kind": "boolean", "cues": {"true": ["tax-exempt order"], "false": ["taxable order"]}},
        "currency": {"kind": "currency"},
        "tax_rate": {"kind": "number", "units": ["percent", "pct"]},
        "total_weight": {"kind": "number", "units": ["kg"]},
        "package_count": {"kind": "number", "units": ["cartons"]},
        "subtotal": {"kind": "amount", "labels": ["@subtotal"]},
        "discount": {"kind": "amount", "labels": ["discount"]},
        "shipping": {"kind": "amount", "labels": ["shipping", "freight charge"]},
        "tax": {"kind": "amount", "labels": ["@tax"]},
        "total": {"kind": "amount", "labels": ["@total"]},
        "line_items": {
            "kind": "list",
            "max_items": 1000,
            "fields": {
                "description": {"kind": "text"},
                "sku": {"kind": "identifier"},
                "quantity": {"kind": "quantity", "units": _UNITS},
                "unit_price": {"kind": "amount"},
                "amount": {"kind": "amount"},
                "ship_date": {"kind": "date"},
                "stock": {
                    "kind": "enum",
                    "values": {
                        "in_stock": ["in stock"],
                        "backorder": ["backorder"],
                        "special_order": ["special order"],
                    },
                },
                "cost_center": {"kind": "text"},
            },
        },
    },
    "rules": [
        {"check": "sum(line_items[].amount) = subtotal", "rounding": 0.05},
        {"check": "line_items[].quantity * line_items[].unit_price = line_items[].amount", "rounding": 0.05},
        {"check": "subtotal - discount + shipping + tax = total", "rounding": 0.05},
        {"check": "delivery_date >= order_date"},
    ],
}

_ADJECTIVES = ["Hex", "Flanged", "Stainless", "Galvanised", "Heavy-duty", "Nylon", "Brass", "Coated", "Sealed"]
_NOUNS = ["bolt", "washer", "bearing", "hinge", "bracket", "gasket", "coupling", "valve", "cable gland", "fuse"]
_FINISHES = ["zinc plated", "black oxide", "grade A2", "food safe", "IP67", "anodised", "pack of 10"]
_STOCK_WORDS = {"in_stock": "In stock", "backorder": "Backorder", "special_order": "Special order"}
_PADDING = [
    "The supplier shall deliver the goods in the condition described and packed to prevent damage in transit.",
    "Goods that do not conform to the specification may be returned at the supplier's cost within a reasonable time.",
    "Title passes to the buyer on acceptance; risk passes on delivery to the address named in this order.",
    "The supplier warrants that the goods are free from defects in design, material and workmanship.",
    "Neither party is liable for delay caused by events beyond its reasonable control, if notice is given promptly.",
    "All drawings and specifications supplied by the buyer remain its property and must be returned on request.",
    "The supplier shall comply with every applicable law, including those on safety, labour and the environment.",
    "This order is governed by the law of the buyer's place of business; its courts have exclusive jurisdiction.",
    "Changes to quantities or dates are binding only when confirmed in writing by the buyer's purchasing team.",
    "Confidential information exchanged under this order is used only to perform it and kept for five years.",
]


def _money(value: Decimal) -> str:
    return f"{value:,.2f}"


def purchase_order(items: int, seed: int = 7) -> tuple[str, dict[str, Any]]:
    """A purchase order's text with `items` line items in aligned columns and the record
    it holds (every value written in the text), the same for the same seed."""
    rng = random.Random(seed)
    order_date = date(2026, 3, 2) + timedelta(days=rng.randrange(20))
    cents = Decimal("0.01")
    rows, items_out = [], []
    for i in range(items):
        description = f"{rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)} {rng.choice(_FINISHES)}"
        sku = f"{rng.choice('ABCDEFGHKM')}{rng.choice('PRSTVX')}-{rng.randrange(100, 999)}-{i + 1:04d}"
        quantity = rng.randrange(1, 500)
        unit = rng.choice(_UNITS)
        unit_price = Decimal(rng.randrange(25, 250_000)) * cents
        amount = quantity * unit_price
        ship_date = order_date + timedelta(days=rng.randrange(5, 40))
        stock = rng.choice(list(_STOCK_WORDS))
        cost_center = f"CC-{rng.randrange(1000, 9999)}"
        rows.append(
            f"{i + 1:>3}  {sku:<14} {description:<40} {f'{quantity} {unit}':>9} {_money(unit_price):>10} "
            f"{_money(amount):>12}  {ship_date.isoformat()}  {_STOCK_WORDS[stock]:<13} {cost_center}"
        )
        items_out.append(
            {
                "description": description,
                "sku": sku,
                "quantity": quantity,
                "unit_price": float(unit_price),
                "amount": float(amount),
                "ship_date": ship_date.isoformat(),
                "stock": stock,
                "cost_center": cost_center,
            }
        )
    subtotal = sum((Decimal(repr(item["amount"])) for item in items_out), Decimal(0))
    discount = (subtotal * Decimal("0.02")).quantize(cents)
    shipping = Decimal(rng.randrange(2_000, 90_000)) * cents
    tax_rate = Decimal("8.25")
    tax = ((subtotal - discount) * tax_rate / 100).quantize(cents)
    total = subtotal - discount + shipping + tax
    weight = Decimal(rng.randrange(100, 99_999)) / 10
    cartons = 2 + items // 4 + rng.randrange(3)
    po_number = f"PO-2026-{rng.randrange(1000, 99999):05d}"
    requisition = f"REQ-{rng.randrange(10000, 99999)}"
    buyer = rng.choice(["Northwind Traders GmbH", "Harbor Freight Logistics LLC", "Fabrikam Components Ltd"])
    supplier = rng.choice(["Contoso Industrial Supply Ltd", "Globex Fasteners plc", "Initech Parts Co."])
    header: dict[str, Any] = {
        "po_number": po_number,
        "requisition_number": requisition,
        "order_date": order_date.isoformat(),
        "delivery_date": (order_date + timedelta(days=45)).isoformat(),
        "payment_due_date": (order_date + timedelta(days=75)).isoformat(),
        "buyer_name": buyer,
        "buyer_contact": "Maria Lindqvist",
        "buyer_email": "purchasing@northwind.example",
        "buyer_phone": "+1 (412) 555-0199",
        "supplier_name": supplier,
        "supplier_email": "orders@contoso-supply.example",
        "supplier_phone": "+44 20 7946 0958",
        "supplier_website": "https://www.contoso-supply.example/orders",
        "supplier_vat_id": "GB 123 4567 89",
        "supplier_iban": _IBAN,
        "ship_to": "4 Harbour Road, Bristol BS1 5TT, United Kingdom",
        "bill_to": f"{buyer}, Accounts Payable, Hamburg",
        "payment_terms": "Net 30 days",
        "incoterm": "DAP",
        "shipping_method": "sea",
        "priority": "urgent",
        "partial_shipments": True,
        "tax_exempt": False,
        "currency": "USD",
        "tax_rate": float(tax_rate),
        "total_weight": float(weight),
        "package_count": cartons,
        "subtotal": float(subtotal),
        "discount": float(discount),
        "shipping": float(shipping),
        "tax": float(tax),
        "total": float(total),
    }
    h = header
    iban = " ".join(_IBAN[i : i + 4] for i in range(0, len(_IBAN), 4))
    lines = [
        f"{'PURCHASE ORDER':<56}PO number: {h['po_number']}",
        f"{'Requisition: ' + h['requisition_number']:<56}Order date: {h['order_date']}",
        f"{'':<56}Delivery date: {h['delivery_date']}",
        f"{'':<56}Payment due by: {h['payment_due_date']}",
        "",
        f"{'Buyer: ' + buyer:<56}Supplier: {supplier}",
        f"{'Contact: ' + h['buyer_contact']:<56}E-mail: {h['supplier_email']}",
        f"{'E-mail: ' + h['buyer_email']:<56}Phone: {h['supplier_phone']}",
        f"{'Phone: ' + h['buyer_phone']:<56}Web: {h['supplier_website']}",
        f"{'':<56}VAT reg.: {h['supplier_vat_id']}",
        f"{'':<56}IBAN: {iban}",
        "",
        f"Ship to: {h['ship_to']}",
        f"Bill to: {h['bill_to']}",
        f"Payment terms: {h['payment_terms']}. Currency: USD. Urgent.",
        "Incoterms 2020: DAP (delivered at place) Bristol, sea freight. Partial shipments allowed. Taxable order.",
        "",
        f"{'#':>3}  {'SKU':<14} {'Description':<40} {'Qty':>9} {'Unit price':>10} {'Line value':>12}  "
        f"{'Ship by':<10}  {'Stock':<13} Cost centre",
        "-" * 130,
        *rows,
        "-" * 130,
        f"{'Subtotal':<20}{_money(subtotal):>14}",
        f"{'Discount':<20}{_money(discount):>14}",
        f"{'Shipping':<20}{_money(shipping):>14}",
        f"{'Sales tax':<20}{_money(tax):>14}      (tax rate 8.25 percent)",
        f"{'Total due':<20}{_money(total):>14} USD",
        "",
        f"Packed in {cartons} cartons, gross weight {weight} kg.",
    ]
    return "\n".join(lines) + "\n", {**header, "line_items": items_out}


def padded(text: str, factor: int, seed: int = 7) -> str:
    """The text with unrelated terms and conditions after it, to `factor` times its length."""
    rng = random.Random(seed)
    parts, size, clause = [text, "\nTerms and conditions\n"], len(text), 1
    while size < factor * len(text):
        line = f"{clause}. " + " ".join(rng.sample(_PADDING, 3)) + "\n"
        parts.append(line)
        size += len(line)
        clause += 1
    return "".join(parts)


@dataclass
class _Case:
    name: str
    text: str
    record: dict[str, Any]
    schema: CompiledSchema
    checks: dict[str, FieldCheck] = field(default_factory=dict)
    first_s: float = 0.0
    runs: list[float] = field(default_factory=list)
    source_runs: list[float] = field(default_factory=list)

    @property
    def items(self) -> int:
        return len(self.record.get("line_items") or [])


def time_cases(cases: list[_Case], repeats: int) -> None:
    """run_heuristics on each case: one first call, then `repeats` rounds over all the
    cases in turn (so a burst of other load on the machine falls on every case alike),
    each round also timing the Source analysis alone."""
    from vetq.core.extraction.heuristics import run_heuristics
    from vetq.core.extraction.source import Source

    for case in cases:
        case.record = case.schema.validate_data(case.record)
        started = time.perf_counter()
        case.checks = run_heuristics(case.text, case.record, case.schema)
        case.first_s = time.perf_counter() - started
    for _ in range(repeats):
        for case in cases:
            started = time.perf_counter()
            run_heuristics(case.text, case.record, case.schema)
            case.runs.append(time.perf_counter() - started)
            started = time.perf_counter()
            Source(case.text, case.schema.lexicon)
            case.source_runs.append(time.perf_counter() - started)


def _figures(case: _Case) -> dict[str, Any]:
    median_s = statistics.median(case.runs)
    values, kchars = len(case.checks), len(case.text) / 1000
    return {
        "case": case.name,
        "items": case.items,
        "values": values,
        "chars": len(case.text),
        "first_ms": round(case.first_s * 1000, 2),
        "median_ms": round(median_s * 1000, 2),
        "min_ms": round(min(case.runs) * 1000, 2),
        "source_ms": round(statistics.median(case.source_runs) * 1000, 2),
        "us_per_value": round(median_s * 1e6 / values, 1),
        "ns_per_value_kchar": round(median_s * 1e9 / (values * kchars), 1),
        "min_factor": round(min(check.factor for check in case.checks.values()), 3),
    }


def _exponent(rows: list[dict[str, Any]], size: Callable[[dict[str, Any]], float]) -> float | None:
    """k in time ~ size^k, from the first and the last row of a series (None for one row)."""
    first, last = rows[0], rows[-1]
    if size(last) == size(first):
        return None
    return round(math.log(last["median_ms"] / first["median_ms"]) / math.log(size(last) / size(first)), 2)


def run_heuristics_bench(
    repeats: int = 20,
    items: Sequence[int] = LINE_ITEMS,
    main_items: int = MAIN_ITEMS,
    paddings: Sequence[int] = PADDINGS,
    seed: int = 7,
) -> dict[str, Any]:
    """The --heuristics figures: the invoice, the 40-field order at `main_items`, and the
    two scaling series (line items; the document padded to each factor of `paddings`)."""
    from vetq.core.schemas import builtin, compile_schema

    golden = json.loads(GOLDEN_INVOICES.read_text(encoding="utf-8").splitlines()[0])
    big = compile_schema(BIG_SCHEMA)
    # The invoice's seven top-level fields on its first golden document, the row the
    # README's table compares with (that document's line items, when it lists them, are
    # left out: the line-item scaling is the 40-field series').
    seven = {name: value for name, value in golden["expected"].items() if name != "line_items"}
    invoice = _Case(f"invoice ({golden['id']})", golden["text"], seven, builtin("invoice"))
    by_items = [_Case(f"po40 x{n}", *purchase_order(n, seed), big) for n in items]
    main = next((case for case in by_items if case.items == main_items), None)
    main = main or _Case(f"po40 x{main_items}", *purchase_order(main_items, seed), big)
    by_length = [main] + [
        _Case(f"{main.name} pad {factor}x", padded(main.text, factor, seed), main.record, big) for factor in paddings
    ]
    time_cases(list({id(case): case for case in [invoice, *by_items, *by_length]}.values()), repeats)
    items_rows = [_figures(case) for case in by_items]
    length_rows = [_figures(case) for case in by_length]
    return {
        "repeats": repeats,
        "schema_fields": sum(1 + len(f.children) for f in big.fields) - 1,
        "invoice": _figures(invoice),
        "po40": length_rows[0],
        "by_items": items_rows,
        "by_length": length_rows,
        "exponents": {
            "items": _exponent(items_rows, lambda r: r["items"]),
            "values_x_chars": _exponent(items_rows, lambda r: r["values"] * r["chars"]),
            "length": _exponent(length_rows, lambda r: r["chars"]),
        },
    }


COLUMNS = (
    "case",
    "values",
    "chars",
    "first_ms",
    "median_ms",
    "min_ms",
    "source_ms",
    "us_per_value",
    "ns_per_value_kchar",
)


def print_heuristics(figures: dict[str, Any]) -> None:
    rows = [figures["invoice"], *figures["by_items"], *figures["by_length"]]
    rows = list({row["case"]: row for row in rows}.values())
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in COLUMNS]
    print(f"run_heuristics, median of {figures['repeats']}; big schema: {figures['schema_fields']} fields")
    print("  ".join(c.rjust(w) for c, w in zip(COLUMNS, widths, strict=True)) + "  min_factor")
    for row in rows:
        print("  ".join(str(row[c]).rjust(w) for c, w in zip(COLUMNS, widths, strict=True)) + f"  {row['min_factor']}")
    exps = figures["exponents"]
    print(
        f"time ~ size^k: k={exps['items']} in line items, k={exps['values_x_chars']} in values x chars, "
        f"k={exps['length']} in document length"
    )


# --- --worker-cost: the worker's bookkeeping around one job ------------------------------


def run_worker_cost(repeats: int) -> dict[str, Any]:
    import uuid

    from celery.backends.base import BaseKeyValueStoreBackend
    from celery.utils.saferepr import saferepr

    from vetq.core.extraction.pipeline import ExtractionPipeline
    from vetq.core.settings import load_settings
    from vetq.workers.app import create_app
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.tasks import RESULT_REPR_MAXSIZE

    home = Path(tempfile.mkdtemp(prefix="vetq-bench-"))
    settings = load_settings(home=home, log_level="WARNING")
    job = {"kind": "validate", "text": DOCUMENT, "data": DATA, "heuristics_only": True, "trace_id": "bench"}
    envelope = ExtractionPipeline(settings).run(job).model_dump(mode="json")
    started = {"pid": 1, "hostname": "bench"}

    def cpu_us(action: Callable[[], object]) -> float:
        begun = time.process_time()
        action()
        return (time.process_time() - begun) * 1e6

    with EmbeddedRedis(home, role="bench") as redis:
        app = create_app(settings, redis.live_url)
        backend, ledger = app.backend, app.conf.vetq_context.ledger

        def celery_store(states: Sequence[str]) -> Callable[[], None]:
            def store() -> None:
                task_id = uuid.uuid4().hex
                for state in states:
                    value = started if state == "STARTED" else envelope
                    BaseKeyValueStoreBackend._store_result(backend, task_id, value, state)

            return store

        def vetq_store(states: Sequence[str]) -> Callable[[], None]:
            def store() -> None:
                task_id = uuid.uuid4().hex
                for state in states:
                    backend.store_result(task_id, started if state == "STARTED" else envelope, state)

            return store

        cases: dict[str, Callable[[], object]] = {
            "celery_store_started_and_result": celery_store(("STARTED", "SUCCESS")),
            "vetq_store_started_and_result": vetq_store(("STARTED", "SUCCESS")),
            "celery_store_result_only": celery_store(("SUCCESS",)),
            "vetq_store_result_only": vetq_store(("SUCCESS",)),
            "result_repr_celery_default": lambda: saferepr(envelope, 1024),
            "result_repr_vetq": lambda: saferepr(envelope, RESULT_REPR_MAXSIZE),
            "budget_set_limit_round_trip": lambda: ledger.set_limit(f"job:{uuid.uuid4().hex}", 50_000, 600),
        }
        for action in cases.values():
            action()  # scripts loaded, caches warm
        timings: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(repeats):
            for name, action in cases.items():
                timings[name].append(cpu_us(action))
        app.close()
    return {
        "repeats": repeats,
        "result_bytes": len(json.dumps(envelope)),
        "cpu_us_median": {name: round(statistics.median(values)) for name, values in timings.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.bench_queue", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--jobs", type=int, nargs="+", default=[1000], help="jobs per run; several counts make a row each (1000 20000)"
    )
    parser.add_argument("--no-async", action="store_true", help="leave out the AsyncClient rows")
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs of each way per N, in turned order; the fastest counts"
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve each worker's Prometheus metrics (worker i on this port + i), to measure their cost",
    )
    parser.add_argument("--concurrency", type=int, default=1, help="jobs per worker process")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--heuristics", action="store_true", help="time run_heuristics in this process instead")
    parser.add_argument("--worker-cost", action="store_true", help="time a job's worker bookkeeping instead")
    parser.add_argument(
        "--awaits", type=int, default=None, help="await this many jobs at once in one AsyncClient instead"
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="calls timed per case (--heuristics 20, --worker-cost 2000)"
    )
    args = parser.parse_args(argv)
    from vetq.core.logging import configure_logging

    configure_logging("WARNING")
    if args.worker_cost:
        if args.repeats is not None and args.repeats < 1:
            parser.error("--repeats must be at least 1")
        print(json.dumps(run_worker_cost(args.repeats or 2000), indent=None if args.json else 2))
        return 0
    if args.awaits is not None:
        if args.awaits < 1 or args.workers < 1:
            parser.error("--awaits and --workers must be at least 1")
        awaits = run_awaits(args.awaits, args.workers, args.concurrency)
        print(json.dumps(awaits, indent=None if args.json else 2))
        return 0 if awaits["ok"] == args.awaits else 1
    args.repeats = 20 if args.repeats is None else args.repeats
    if args.heuristics:
        if args.repeats < 1:
            parser.error("--repeats must be at least 1")
        heuristics = run_heuristics_bench(args.repeats)
        if args.json:
            print(json.dumps(heuristics))
        else:
            print_heuristics(heuristics)
        return 0
    if min(args.jobs) < 1 or args.workers < 1 or args.rounds < 1:
        parser.error("--jobs, --workers and --rounds must be at least 1")
    figures = run(
        args.jobs,
        args.workers,
        args.concurrency,
        with_async=not args.no_async,
        rounds=args.rounds,
        metrics_port=args.metrics_port,
    )
    if args.json:
        print(json.dumps(figures))
    else:
        print_queue(figures)
    return 0


def print_queue(figures: dict[str, Any]) -> None:
    columns = ["way", "jobs", "jobs_per_s", "ratio_to_raw_celery", "producer_cpu_ms_per_job", "redis_bytes_per_job"]
    print(" | ".join(columns))
    for row in figures["rows"]:
        print(" | ".join(str(row.get(column, "")) for column in columns))


if __name__ == "__main__":
    sys.exit(main())
