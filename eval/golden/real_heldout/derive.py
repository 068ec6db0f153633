"""Derive the held-out set's labels mechanically from the XML each e-invoice carries.

    python eval/golden/real_heldout/derive.py [--sources DIR]   # writes labels.jsonl

`candidates.jsonl` lists the documents (id, repository, commit, path, licence, language,
kind, and `xml_path` when the data is a file beside the print rather than inside it). For
each, this reads the PDF at its pinned commit and the XML it was printed from: the CII
invoice a ZUGFeRD 1 / ZUGFeRD 2 / Factur-X PDF embeds, or the sidecar XML at `xml_path`
(a Brazilian NF-e or NFS-e, whose DANFE / DANFSE print the repository renders from it).
It maps that XML to the `invoice` schema: seller name, invoice number, issue date, tax
basis (subtotal), tax total, grand total, currency. Nothing is labelled by hand: a value
the converted text does not hold (the same simple, OCR-tolerant checks as the tuned set's,
`vetq.eval.real_eval.value_in_text`) becomes null, and the document's notes say which and
why; a document whose text holds fewer than half of its XML's values is dropped.

A candidate is dropped when it is another rendering or a variant of a document of
eval/golden/real or of one already taken here: the same invoice number and grand total,
the same seller and grand total (a document renumbered or re-dated for another edition of
a standard's examples), or the same invoice number and seller (an example edited into
another). The held-out set holds no document the heuristics were tuned on.
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


def _all_text(root: ElementTree.Element, *path: str) -> str | None:
    """Like _text, but the first match whose text is not empty."""
    for start in root.iter():
        if _local(start.tag) != path[0]:
            continue
        node: ElementTree.Element | None = start
        for name in path[1:]:
            node = next((child for child in node if _local(child.tag) == name), None) if node is not None else None
        if node is not None and node.text and node.text.strip():
            return node.text.strip()
    return None


def _decimal(text: str | None) -> float | None:
    return float(Decimal(text)) if text else None


# NF-e and NFS-e state no "subtotal + tax = total": their taxes (ICMS, ISS, PIS, COFINS) are
# included in the prices, and the totals add freight, insurance and other charges instead.
# Mapping a tax there to `tax` would label a reconciliation the document does not make.
BRAZIL_NOTE = "subtotal, tax: null: an NF-e / NFS-e's taxes are included in its prices (no subtotal + tax = total)"


def record_from_nfe(xml: bytes) -> dict[str, Any]:
    """The invoice record a Brazilian NF-e (the data a DANFE prints) states."""
    root = ElementTree.fromstring(xml)
    issued = _all_text(root, "ide", "dhEmi") or _all_text(root, "ide", "dEmi")
    return {
        "vendor_name": _all_text(root, "emit", "xNome"),
        "invoice_number": _all_text(root, "ide", "nNF"),
        "invoice_date": issued[:10] if issued else None,
        "subtotal": None,
        "tax": None,
        "total": _decimal(_all_text(root, "ICMSTot", "vNF")),
        "currency": "BRL",
        "line_items": None,
    }


def record_from_nfse(xml: bytes) -> dict[str, Any]:
    """The invoice record a Brazilian national NFS-e (the data a DANFSE prints) states: the
    total is the service's value (vServ), before the withholdings that make the net vLiq."""
    root = ElementTree.fromstring(xml)
    issued = _all_text(root, "infDPS", "dhEmi")
    return {
        "vendor_name": _all_text(root, "emit", "xNome"),
        "invoice_number": _all_text(root, "infNFSe", "nNFSe"),
        "invoice_date": issued[:10] if issued else None,
        "subtotal": None,
        "tax": None,
        "total": _decimal(_all_text(root, "vServPrest", "vServ")),
        "currency": "BRL",
        "line_items": None,
    }


def record_from_xml(xml: bytes) -> tuple[dict[str, Any], list[str]]:
    """(the record, notes on the mapping) for a CII invoice, an NF-e or an NFS-e."""
    name = _local(ElementTree.fromstring(xml).tag)
    if name in ("NFe", "nfeProc"):
        return record_from_nfe(xml), [BRAZIL_NOTE]
    if name == "NFSe":
        return record_from_nfse(xml), [BRAZIL_NOTE]
    return record_from_cii(xml), []


def source_xml(sources: Path, candidate: Mapping[str, Any], pdf: bytes) -> bytes:
    """The XML the print was made from: a sidecar file at the same commit, or the PDF's attachment."""
    if candidate.get("xml_path"):
        return real_build.read_source(sources, {**candidate, "path": candidate["xml_path"]})
    return embedded_xml(pdf)


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


def label(candidate: Mapping[str, Any], pdf: bytes, xml: bytes) -> tuple[dict[str, Any], str]:
    from vetq.eval.real_eval import value_in_text

    text, _ = real_build.document_text("pdf", pdf)
    derived, notes = record_from_xml(xml)
    truth: dict[str, Any] = {}
    for name, value in derived.items():
        if value is not None and name != "line_items" and not value_in_text("invoice", name, value, text):
            notes.append(f"{name}: the XML's {value!r} is not in the text, so null")
            value = None
        truth[name] = value
    stated = [name for name, value in derived.items() if value is not None and name != "line_items"]
    if sum(truth[name] is not None for name in stated) * 2 < len(stated):
        # the print does not show what its data says (an unrelated or unreadable page)
        raise ValueError(f"the text holds fewer than half of the {len(stated)} values its XML states")
    row = {
        "id": candidate["id"],
        "schema": "invoice",
        "kind": candidate["kind"],
        "language": candidate["language"],
        "currency": derived["currency"],
        "source": {
            key: candidate[key] for key in ("repo", "commit", "path", "xml_path", "licence") if key in candidate
        },
        "format": "pdf",
        "truth": truth,
        "expected_flags": {},
        "notes": [
            f"labels derived from {candidate['xml_path'] if candidate.get('xml_path') else 'the embedded XML'} by derive.py",
            *notes,
        ],
    }
    return row, text


def _key(record: Mapping[str, Any]) -> tuple[str, Any]:
    # abs: a credit note's print may sign its total where its XML does not
    total = record.get("total")
    return (str(record.get("invoice_number") or ""), abs(total) if total is not None else None)


def _seller(record: Mapping[str, Any]) -> str:
    return " ".join(str(record.get("vendor_name") or "").split()).casefold()


def identity_keys(record: Mapping[str, Any]) -> set[tuple[str, Any]]:
    """What makes two records one document in two renderings (or one edited into another):
    number and total, seller and total, or number and seller."""
    number, total = _key(record)
    seller = _seller(record)
    keys: set[tuple[str, Any]] = {("number+total", (number, total))}
    if seller and total is not None:
        keys.add(("seller+total", (seller, total)))
    if seller and number:
        keys.add(("number+seller", (number, seller)))
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python eval/golden/real_heldout/derive.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--sources", default=real_build.DEFAULT_SOURCES, help="git copies of the sources (default %(default)s)"
    )
    args = parser.parse_args(argv)
    tuned = {
        key
        for line in TUNED_LABELS.read_text(encoding="utf-8").splitlines()
        if line
        for key in identity_keys(json.loads(line)["truth"])
    }
    seen: set[tuple[str, Any]] = set()
    rows = []
    for line in CANDIDATES.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        candidate = json.loads(line)
        pdf = real_build.read_source(Path(args.sources), candidate)
        try:
            xml = source_xml(Path(args.sources), candidate, pdf)
            row, _ = label(candidate, pdf, xml)
        except (ValueError, ElementTree.ParseError) as exc:
            print(f"{candidate['id']}: dropped: {exc}", file=sys.stderr)
            continue
        keys = identity_keys(record_from_xml(xml)[0])
        if keys & (tuned | seen):
            why = "a rendering of a document in eval/golden/real" if keys & tuned else "a rendering of one taken here"
            kind, value = sorted(keys & (tuned | seen))[0]
            print(f"{candidate['id']}: dropped: {why} (same {kind}: {value})", file=sys.stderr)
            continue
        seen |= keys
        rows.append(row)
    LABELS.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"wrote {len(rows)} labels to {LABELS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
