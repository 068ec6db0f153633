"""Derive the held-out set's labels from the data each print was made from.

    python eval/golden/real_heldout/derive.py [--sources DIR]   # writes labels.jsonl
    python eval/golden/real_heldout/derive.py --round N         # only round N's candidates

`candidates.jsonl` lists the documents (id, repository, commit, path, licence, language,
kind, and `xml_path` when the data is a file beside the print rather than inside it, with
`xml_repo` / `xml_commit` when the renderer read it from another repository). For each,
this reads the PDF at its pinned commit and the XML it was printed from: the CII invoice a
ZUGFeRD 1 / ZUGFeRD 2 / Factur-X PDF embeds, or the sidecar XML at `xml_path` (a Brazilian
NF-e, NFS-e or CT-e whose DANFE / DANFSE / DACTE the repository renders from it, a UBL
invoice of the XRechnung test suite, a Polish KSeF invoice, a Mexican CFDI, an Ecuadorian
SRI factura beside its RIDE). It maps that
XML to the `invoice` schema: seller name, invoice number, issue date, tax basis
(subtotal), tax total, grand total, currency. A value the converted text does not hold
(the same simple, OCR-tolerant checks as the tuned set's,
`vetq.eval.real_eval.value_in_text`) becomes null, and the document's notes say which and
why; a document whose text holds fewer than half of its XML's values is dropped.

A candidate with no data beside its print carries its own `truth`, labelled by hand: every
value of it must be in the converted text (LabelError otherwise: the label is fixed, the
document is not dropped), and its notes say it was labelled by hand.

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
from collections.abc import Iterator, Mapping
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
    """The XML file a ZUGFeRD / Factur-X PDF (or a Czech ISDOC.PDF: `.isdoc`) carries as an attachment."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        for i in range(document.count_attachments()):
            attachment = document.get_attachment(i)
            if attachment.get_name().lower().endswith((".xml", ".isdoc")):
                return bytes(attachment.get_data())
    finally:
        document.close()
    raise ValueError("the PDF embeds no XML invoice")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _down(root: ElementTree.Element, *path: str) -> Iterator[ElementTree.Element]:
    """Every element down the path of local names, at any depth for the first step."""
    for start in root.iter():
        if _local(start.tag) != path[0]:
            continue
        node: ElementTree.Element | None = start
        for name in path[1:]:
            node = next((child for child in node if _local(child.tag) == name), None) if node is not None else None
        if node is not None:
            yield node


def _first(root: ElementTree.Element, *path: str) -> ElementTree.Element | None:
    """The first element down the path of local names, at any depth for the first step."""
    return next(_down(root, *path), None)


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
    return next((node.text.strip() for node in _down(root, *path) if node.text and node.text.strip()), None)


def _decimal(text: str | None) -> float | None:
    return float(Decimal(text)) if text else None


# NF-e and NFS-e state no "subtotal + tax = total": their taxes (ICMS, ISS, PIS, COFINS) are
# included in the prices, and the totals add freight, insurance and other charges instead.
# Mapping a tax there to `tax` would label a reconciliation the document does not make.
BRAZIL_NOTE = "subtotal, tax: null: an NF-e / NFS-e's taxes are included in its prices (no subtotal + tax = total)"


def _brazilian_record(
    xml: bytes, number: tuple[str, str], total: tuple[str, str], issued: tuple[tuple[str, str], ...]
) -> dict[str, Any]:
    """The invoice record of a Brazilian fiscal document: its issuer, the number and the
    total at the (parent, element) paths given, the date of the first `issued` path found;
    subtotal and tax null (BRAZIL_NOTE)."""
    root = ElementTree.fromstring(xml)
    date = next((text for path in issued if (text := _all_text(root, *path))), None)
    return {
        "vendor_name": _all_text(root, "emit", "xNome"),
        "invoice_number": _all_text(root, *number),
        "invoice_date": date[:10] if date else None,
        "subtotal": None,
        "tax": None,
        "total": _decimal(_all_text(root, *total)),
        "currency": "BRL",
        "line_items": None,
    }


def record_from_nfe(xml: bytes) -> dict[str, Any]:
    """The invoice record a Brazilian NF-e (the data a DANFE prints) states."""
    return _brazilian_record(xml, ("ide", "nNF"), ("ICMSTot", "vNF"), (("ide", "dhEmi"), ("ide", "dEmi")))


def record_from_nfse(xml: bytes) -> dict[str, Any]:
    """The invoice record a Brazilian national NFS-e (the data a DANFSE prints) states: the
    total is the service's value (vServ), before the withholdings that make the net vLiq."""
    return _brazilian_record(xml, ("infNFSe", "nNFSe"), ("vServPrest", "vServ"), (("infDPS", "dhEmi"),))


def record_from_cte(xml: bytes) -> dict[str, Any]:
    """The invoice record a Brazilian CT-e (the transport service a DACTE prints) states:
    the total is the service's value (vTPrest)."""
    return _brazilian_record(xml, ("ide", "nCT"), ("vPrest", "vTPrest"), (("ide", "dhEmi"),))


def _children(node: ElementTree.Element, name: str) -> list[ElementTree.Element]:
    return [child for child in node if _local(child.tag) == name]


def _child_text(node: ElementTree.Element | None, *path: str) -> str | None:
    """The text down a path of direct children (not at any depth, as _text does)."""
    for name in path:
        if node is None:
            return None
        node = next(iter(_children(node, name)), None)
    return node.text.strip() if node is not None and node.text and node.text.strip() else None


def record_from_ubl(xml: bytes) -> dict[str, Any]:
    """The invoice record a UBL Invoice or CreditNote states (EN 16931's BT-1, BT-2, BT-27,
    BT-109, BT-110, BT-112, BT-5), or a Czech ISDOC invoice, which names its parts as UBL
    does (its currency is the LocalCurrencyCode its amounts are in)."""
    root = ElementTree.fromstring(xml)
    currency = _child_text(root, "DocumentCurrencyCode") or _child_text(root, "LocalCurrencyCode")
    party = _first(root, "AccountingSupplierParty", "Party")
    seller = _child_text(party, "PartyLegalEntity", "RegistrationName") or _child_text(party, "PartyName", "Name")
    totals = next(iter(_children(root, "LegalMonetaryTotal")), None)
    # the tax total in the document's currency (BT-110), not the one in the accounting currency (BT-111)
    tax = next(
        (
            amount.text
            for total in _children(root, "TaxTotal")
            for amount in _children(total, "TaxAmount")
            if amount.get("currencyID") in (None, currency)
        ),
        None,
    )
    return {
        "vendor_name": seller,
        "invoice_number": _child_text(root, "ID"),
        "invoice_date": (_child_text(root, "IssueDate") or "")[:10] or None,
        "subtotal": _decimal(_child_text(totals, "TaxExclusiveAmount")),
        "tax": _decimal(tax.strip() if tax else None),
        "total": _decimal(_child_text(totals, "TaxInclusiveAmount")),
        "currency": currency,
        "line_items": None,
    }


def record_from_ksef(xml: bytes) -> dict[str, Any]:
    """The invoice record a Polish KSeF invoice (FA(1)-FA(3)) states: P_2 the number, P_1 the
    issue date, P_15 the gross total; the net and the VAT are the sums of the per-rate
    P_13_x and P_14_x (not P_14_xW, the VAT converted to PLN)."""
    root = ElementTree.fromstring(xml)
    invoice = _first(root, "Fa")
    seller = _first(root, "Podmiot1", "DaneIdentyfikacyjne", "Nazwa")
    net = [Decimal(child.text) for child in invoice or [] if _local(child.tag).startswith("P_13_") and child.text]
    vat = [
        Decimal(child.text)
        for child in invoice or []
        if _local(child.tag).startswith("P_14_") and not _local(child.tag).endswith("W") and child.text
    ]
    return {
        "vendor_name": seller.text.strip() if seller is not None and seller.text else None,
        "invoice_number": _child_text(invoice, "P_2"),
        "invoice_date": _child_text(invoice, "P_1"),
        "subtotal": float(sum(net)) if net else None,
        "tax": float(sum(vat)) if vat else None,
        "total": _decimal(_child_text(invoice, "P_15")),
        "currency": _child_text(invoice, "KodWaluty"),
        "line_items": None,
    }


# A CFDI's Total is SubTotal - Descuento + transferred taxes - withheld taxes: with a
# withholding, "subtotal + tax = total" does not hold for any printed tax figure.
CFDI_WITHHELD_NOTE = "tax: null: the CFDI withholds taxes (retenciones), so subtotal + transferred tax is not its total"


def record_from_cfdi(xml: bytes) -> tuple[dict[str, Any], list[str]]:
    """The invoice record a Mexican CFDI (3.3 / 4.0) states, from the Comprobante's
    attributes: Folio, Fecha, SubTotal, the transferred taxes, Total, Moneda; the issuer's Nombre."""
    root = ElementTree.fromstring(xml)
    issuer = next((node for node in root.iter() if _local(node.tag) == "Emisor"), None)
    taxes = next((node for node in root if _local(node.tag) == "Impuestos"), None)
    transferred = taxes.get("TotalImpuestosTrasladados") if taxes is not None else None
    withheld = taxes.get("TotalImpuestosRetenidos") if taxes is not None else None
    discount = Decimal(root.get("Descuento") or "0")
    notes = []
    tax = _decimal(transferred)
    if withheld and Decimal(withheld) != 0:
        tax = None
        notes.append(CFDI_WITHHELD_NOTE)
    stated_subtotal = root.get("SubTotal")
    subtotal = Decimal(stated_subtotal) - discount if stated_subtotal else None
    return {
        "vendor_name": issuer.get("Nombre") if issuer is not None else None,
        "invoice_number": root.get("Folio"),
        "invoice_date": (root.get("Fecha") or "")[:10] or None,
        "subtotal": float(subtotal) if subtotal is not None else None,
        "tax": tax,
        "total": _decimal(root.get("Total")),
        "currency": root.get("Moneda"),
        "line_items": None,
    }, notes


def record_from_dte(xml: bytes) -> dict[str, Any]:
    """The invoice record a Chilean DTE states (Encabezado: IdDoc's Folio and FchEmis, the
    Emisor's RznSoc, Totales): the subtotal is the net plus the exempt amount (MntNeto +
    MntExe), the tax the IVA, the total MntTotal, in pesos."""
    root = ElementTree.fromstring(xml)
    header = _first(root, "Documento", "Encabezado")
    totals = next(iter(_children(header, "Totales")), None) if header is not None else None
    parts = [Decimal(value) for value in (_child_text(totals, "MntNeto"), _child_text(totals, "MntExe")) if value]
    return {
        "vendor_name": _child_text(header, "Emisor", "RznSoc"),
        "invoice_number": _child_text(header, "IdDoc", "Folio"),
        "invoice_date": _child_text(header, "IdDoc", "FchEmis"),
        "subtotal": float(sum(parts)) if parts else None,
        "tax": _decimal(_child_text(totals, "IVA")),
        "total": _decimal(_child_text(totals, "MntTotal")),
        "currency": "CLP",
        "line_items": None,
    }


def record_from_sri(xml: bytes) -> dict[str, Any]:
    """The invoice record an Ecuadorian SRI factura states (infoTributaria, infoFactura): the
    number estab-ptoEmi-secuencial as its RIDE prints it, fechaEmision (dd/mm/yyyy), the
    subtotal totalSinImpuestos, the tax the sum of its totalImpuesto values (IVA, ICE), the
    total importeTotal; in US dollars (moneda DOLAR). An SRI authorisation response
    (`autorizacion`) carries the factura as the text of its `comprobante`."""
    root = ElementTree.fromstring(xml)
    if _local(root.tag) == "autorizacion":
        root = ElementTree.fromstring((_text(root, "comprobante") or "").encode("utf-8"))
    tributaria = _first(root, "infoTributaria")
    factura = _first(root, "infoFactura")
    parts = [part for name in ("estab", "ptoEmi", "secuencial") if (part := _child_text(tributaria, name))]
    issued = (_child_text(factura, "fechaEmision") or "").split("/")
    taxes = [Decimal(node.text) for node in _down(root, "totalImpuesto", "valor") if node.text]
    currency = _child_text(factura, "moneda")
    return {
        "vendor_name": _child_text(tributaria, "razonSocial"),
        "invoice_number": "-".join(parts) if len(parts) == 3 else None,
        "invoice_date": "-".join(reversed(issued)) if len(issued) == 3 else None,
        "subtotal": _decimal(_child_text(factura, "totalSinImpuestos")),
        "tax": float(sum(taxes)) if taxes else None,
        "total": _decimal(_child_text(factura, "importeTotal")),
        "currency": "USD" if currency in (None, "DOLAR", "USD") else currency,
        "line_items": None,
    }


def record_from_xml(xml: bytes) -> tuple[dict[str, Any], list[str]]:
    """(the record, notes on the mapping) for a CII, UBL or ISDOC invoice, an NF-e, NFS-e or
    CT-e, a KSeF invoice, a CFDI, a Chilean DTE or an Ecuadorian SRI factura."""
    tag = ElementTree.fromstring(xml).tag
    name = _local(tag)
    if name in ("NFe", "nfeProc"):
        return record_from_nfe(xml), [BRAZIL_NOTE]
    if name == "NFSe":
        return record_from_nfse(xml), [BRAZIL_NOTE]
    if name in ("CTe", "cteProc"):
        return record_from_cte(xml), [BRAZIL_NOTE.replace("NF-e / NFS-e", "CT-e")]
    if tag.startswith(("{urn:oasis:names:specification:ubl:schema:xsd:", "{http://isdoc.cz/namespace/")):
        return record_from_ubl(xml), []
    if name == "Faktura":
        return record_from_ksef(xml), []
    if name == "Comprobante":
        return record_from_cfdi(xml)
    if name == "DTE":
        return record_from_dte(xml), []
    if name in ("factura", "autorizacion"):
        return record_from_sri(xml), []
    return record_from_cii(xml), []


def source_xml(sources: Path, candidate: Mapping[str, Any], pdf: bytes) -> bytes:
    """The XML the print was made from: a sidecar file at the same commit, or the PDF's attachment."""
    if candidate.get("xml_path"):
        return real_build.read_source(sources, xml_source(candidate))
    return embedded_xml(pdf)


def xml_source(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """Where the sidecar XML is: beside the print (the same repository and commit) unless
    `xml_repo` / `xml_commit` name the repository the renderer read it from."""
    return {
        "repo": candidate.get("xml_repo", candidate["repo"]),
        "commit": candidate.get("xml_commit", candidate["commit"]),
        "path": candidate["xml_path"],
    }


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


# where a document comes from: a repository at a commit, a package archive pinned by its
# SHA-256, or a PDF rendered here from a repository's file and pinned by its SHA-256
# (build.read_source reads each), the XML it was printed from, and the licence
SOURCE_KEYS = (
    "repo",
    "commit",
    "registry",
    "package",
    "version",
    "archive",
    "sha256",
    "path",
    "renderer",
    "xml_repo",
    "xml_commit",
    "xml_path",
    "licence",
)


class LabelError(Exception):
    """A hand label that its text does not bear out: fix the label, do not drop the document."""


def label(candidate: Mapping[str, Any], source: bytes, xml: bytes | None) -> tuple[dict[str, Any], str]:
    """(the labels.jsonl row, the converted text) for a candidate: from the XML its print was
    made from, or, for a candidate that carries its own `truth` (a print with no data beside
    it), from that hand label, every value of which must be in the text."""
    from vetq.eval.real_eval import value_in_text

    fmt = candidate.get("format", "pdf")
    text, _ = real_build.document_text(fmt, source)
    schema = candidate.get("schema", "invoice")
    if xml is None:
        derived, notes = dict(candidate["truth"]), ["labelled by hand, each value checked against the converted text"]
        notes += candidate.get("notes", [])
        for name, value in derived.items():
            if value is not None and not value_in_text(schema, name, value, text):
                raise LabelError(f"{candidate['id']}: the hand label's {name} {value!r} is not in the text")
    else:
        derived, notes = record_from_xml(xml)
        notes = [
            f"labels derived from {candidate['xml_path'] if candidate.get('xml_path') else 'the embedded XML'} by derive.py",
            *notes,
        ]
    truth: dict[str, Any] = {}
    for name, value in derived.items():
        if value is not None and name != "line_items" and not value_in_text(schema, name, value, text):
            notes.append(f"{name}: the XML's {value!r} is not in the text, so null")
            value = None
        truth[name] = value
    stated = [name for name, value in derived.items() if value is not None and name != "line_items"]
    if sum(truth[name] is not None for name in stated) * 2 < len(stated):
        # the print does not show what its data says (an unrelated or unreadable page)
        raise ValueError(f"the text holds fewer than half of the {len(stated)} values its XML states")
    row = {
        "id": candidate["id"],
        "schema": schema,
        "kind": candidate["kind"],
        "language": candidate["language"],
        "currency": derived["currency"] or candidate.get("currency"),
        "source": {key: candidate[key] for key in SOURCE_KEYS if key in candidate},
        "format": fmt,
        "truth": truth,
        "expected_flags": {},
        "notes": notes,
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
    parser.add_argument(
        "--round",
        type=int,
        help="derive only this round's candidates and keep the other rows of labels.jsonl as they are "
        "(for a session that has only the new round's sources; duplicates are judged against the kept labels)",
    )
    args = parser.parse_args(argv)
    kept = {row["id"]: row for row in real_build.load_labels(LABELS)} if args.round is not None else {}
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
        if args.round is not None and candidate.get("round") != args.round:
            if candidate["id"] in kept:
                # a label's value not in its text is null: keys with a gap say nothing
                seen |= {
                    key
                    for key in identity_keys(kept[candidate["id"]]["truth"])
                    if None not in key[1] and "" not in key[1]
                }
                rows.append(kept[candidate["id"]])
            continue
        try:
            pdf = real_build.read_source(Path(args.sources), candidate)
        except (OSError, ValueError) as exc:  # no copy of its source, or not the pinned one
            print(f"error: {candidate['id']}: {exc}", file=sys.stderr)
            return 2
        try:
            xml = None if "truth" in candidate else source_xml(Path(args.sources), candidate, pdf)
            row, _ = label(candidate, pdf, xml)
        except (ValueError, ElementTree.ParseError) as exc:
            print(f"{candidate['id']}: dropped: {exc}", file=sys.stderr)
            continue
        keys = identity_keys(candidate["truth"] if xml is None else record_from_xml(xml)[0])
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
