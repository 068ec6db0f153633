"""Derive the held-out set's labels mechanically from the XML each e-invoice embeds.

    python eval/golden/real_heldout/derive.py [--sources DIR]   # writes labels.jsonl

`candidates.jsonl` lists the documents (id, repository, commit, path, licence, language,
kind). For each, this reads the PDF at its pinned commit, takes the CII invoice it embeds
(ZUGFeRD 1 or Factur-X / ZUGFeRD 2), and maps it to the `invoice` schema: seller name,
invoice number, issue date, tax basis (subtotal), tax total, grand total, currency. Nothing
is labelled by hand: a value the converted text does not hold (the same simple,
OCR-tolerant checks as the tuned set's, `vetq.eval.real_eval.value_in_text`) becomes null,
and the document's notes say which and why.

A candidate is dropped when it is another rendering of a document of eval/golden/real
(its invoice number and grand total equal one there) or of one already taken here: the
held-out set holds no document the heuristics were tuned on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

HERE = Path(__file__).resolve().parent
CANDIDATES = HERE / "candidates.jsonl"
LABELS = HERE / "labels.jsonl"
TUNED_LABELS = HERE.parent / "real" / "labels.jsonl"

# the tuned set's reader and converter: one of each
from vetq.eval.golden.real import build as real_build  # noqa: E402


def embedded_xml(pdf: bytes) -> bytes:
    """The XML file a ZUGFeRD / Factur-X PDF carries as an attachment."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        for i in range(document.count_attachments()):
            attachment = document.get_attachment(i)
            if attachment.get_name().lower().endswith(".xml"):
                return bytes(attachment.get_data())
    finally:
        document.close()
    raise ValueError("the PDF embeds no XML invoice")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _first(root: ElementTree.Element, *path: str) -> ElementTree.Element | None:
    """The first element down the path of local names, at any depth for the first step."""
    for start in root.iter():
        if _local(start.tag) != path[0]:
            continue
        node: ElementTree.Element | None = start
        for name in path[1:]:
            node = next((child for child in node if _local(child.tag) == name), None) if node is not None else None
        if node is not None:
            return node
    return None


def _text(root: ElementTree.Element, *path: str) -> str | None:
    node = _first(root, *path)
    return node.text.strip() if node is not None and node.text and node.text.strip() else None


def _amount(root: ElementTree.Element, summation: ElementTree.Element | None, name: str) -> float | None:
    if summation is None:
        return None
    node = next((child for child in summation if _local(child.tag) == name and (child.text or "").strip()), None)
    return float(Decimal(node.text.strip())) if node is not None and node.text else None


def record_from_cii(xml: bytes) -> dict[str, Any]:
    """The invoice record the CII XML states (ZUGFeRD 1 and 2 name the parts alike)."""
    root = ElementTree.fromstring(xml)
    number = _text(root, "ExchangedDocument", "ID") or _text(root, "HeaderExchangedDocument", "ID")
    issued = _text(root, "ExchangedDocument", "IssueDateTime", "DateTimeString") or _text(
        root, "HeaderExchangedDocument", "IssueDateTime", "DateTimeString"
    )
    summation = _first(root, "SpecifiedTradeSettlementHeaderMonetarySummation") or _first(
        root, "SpecifiedTradeSettlementMonetarySummation"
    )
    return {
        "vendor_name": _text(root, "SellerTradeParty", "Name"),
        "invoice_number": number,
        "invoice_date": f"{issued[:4]}-{issued[4:6]}-{issued[6:8]}" if issued and len(issued) >= 8 else None,
        "subtotal": _amount(root, summation, "TaxBasisTotalAmount"),
        "tax": _amount(root, summation, "TaxTotalAmount"),
        "total": _amount(root, summation, "GrandTotalAmount"),
        "currency": _text(root, "InvoiceCurrencyCode"),
        "line_items": None,
    }


def label(candidate: Mapping[str, Any], pdf: bytes) -> tuple[dict[str, Any], str]:
    from vetq.eval.real_eval import value_in_text

    text, _ = real_build.document_text("pdf", pdf)
    derived = record_from_cii(embedded_xml(pdf))
    truth: dict[str, Any] = {}
    notes = []
    for name, value in derived.items():
        if value is not None and name != "line_items" and not value_in_text("invoice", name, value, text):
            notes.append(f"{name}: the XML's {value!r} is not in the text, so null")
            value = None
        truth[name] = value
    row = {
        "id": candidate["id"],
        "schema": "invoice",
        "kind": candidate["kind"],
        "language": candidate["language"],
        "currency": derived["currency"],
        "source": {key: candidate[key] for key in ("repo", "commit", "path", "licence")},
        "format": "pdf",
        "truth": truth,
        "expected_flags": {},
        "notes": ["labels derived from the embedded XML by derive.py", *notes],
    }
    return row, text


def _key(record: Mapping[str, Any]) -> tuple[str, Any]:
    # abs: a credit note's print may sign its total where its XML does not
    total = record.get("total")
    return (str(record.get("invoice_number") or ""), abs(total) if total is not None else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python eval/golden/real_heldout/derive.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--sources", default=real_build.DEFAULT_SOURCES, help="git copies of the sources (default %(default)s)"
    )
    args = parser.parse_args(argv)
    tuned = {_key(json.loads(line)["truth"]) for line in TUNED_LABELS.read_text(encoding="utf-8").splitlines() if line}
    seen: set[tuple[str, Any]] = set()
    rows = []
    for line in CANDIDATES.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        candidate = json.loads(line)
        pdf = real_build.read_source(Path(args.sources), candidate)
        try:
            row, _ = label(candidate, pdf)
        except (ValueError, ElementTree.ParseError) as exc:
            print(f"{candidate['id']}: dropped: {exc}", file=sys.stderr)
            continue
        key = _key(record_from_cii(embedded_xml(pdf)))
        if key in tuned or key in seen:
            why = "a rendering of a document in eval/golden/real" if key in tuned else "a rendering of one taken here"
            print(f"{candidate['id']}: dropped: {why} (number {key[0]}, total {key[1]})", file=sys.stderr)
            continue
        seen.add(key)
        rows.append(row)
    LABELS.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"wrote {len(rows)} labels to {LABELS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
