"""The real documents written differently: false alarms a layout variation brings.

    python -m vetq.eval.layout_variants                  # both real sets, every variation but OCR
    python -m vetq.eval.layout_variants --variant tesseract   # the kept PDFs read by OCR (some 15 min)
    python -m vetq.eval.layout_variants --set heldout --variant single_spaced --json

Unseen documents differ from the ones the heuristics were tuned on less in what they say
than in how it is written: another converter's spacing, a footer of bank details, signs
and spaces as other software writes them. Each variation here rewrites every document of
the real sets (eval/golden/real, eval/golden/real_heldout) the same way, validates its
correct record (heuristics only, in process, as a validation job runs) and reports the
fields flagged that the original text did not flag: what that way of writing costs,
without new documents.

NEUTRAL variations change nothing a reader relies on (other spaces, line ends, a page
header, a footer of bank details and registration numbers, capitals, a minus written
after the figure): they must add no flag, and exit 1 says one did. STRESS variations
take away what a layout tells (the spacing of columns, one cell per line, dot leaders,
a document printed twice): their counts are a benchmark, not a gate.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vetq.core.results import error_of
from vetq.core.schemas import builtin
from vetq.eval.real_eval import REAL_SETS, flags_by_field, load_documents, value_in_text

_BANK_FOOTER = (
    "\nSparkasse Berlin  IBAN DE89 3704 0044 0532 0130 00  BIC COBADEFFXXX\n"
    "Tel. +49 30 1234567  Fax +49 30 1234568  USt-IdNr. DE123456789  HRB 12345 B\n"
    "Seite 1 von 1\n"
)
_ID_FOOTER = (
    "\nKonto-Nr. 1234567890  BLZ 370 400 44  Steuernummer 27/123/45678\n"
    "Filiale 4711  Kasse 3  Bon-Nr. 8812  Terminal ID 00012345  Auth code 123456\n"
)
_SIGNED = re.compile(r"(?<![0-9])-([0-9][0-9.,]*[.,][0-9]{2})(?![0-9])")


@dataclass(frozen=True)
class Variant:
    name: str
    rewrite: Callable[[str], str]
    neutral: bool
    what: str

    def text_of(self, doc: Mapping[str, Any]) -> str | None:
        return self.rewrite(doc["text"])


class ConversionError(Exception):
    """A converter could not read a document's PDF, or read no text from it."""


@dataclass(frozen=True)
class Converter:
    """Another PDF-to-text converter: a document's kept PDF as that converter writes it,
    where the set's own text is vetq's conversion. Only documents with a kept PDF count.
    A converter may lose a value (a dash, a right-to-left name written backwards): a flag
    on a value its text no longer holds is counted apart (`lost`), not as a false alarm."""

    name: str
    convert: Callable[[Path, str], str]  # (the PDF, the document's language) -> its text
    what: str
    missing: Callable[[], str | None]  # what to install when the converter is not here
    neutral: bool = False
    slow: bool = False  # run only when named (--variant)

    def text_of(self, doc: Mapping[str, Any]) -> str | None:
        pdf = doc.get("pdf")
        if pdf is None:
            return None
        try:
            text = self.convert(Path(pdf), str(doc.get("language") or "en"))
        except Exception as exc:  # a third-party converter's own failure, whatever its kind
            raise ConversionError(f"{type(exc).__name__}: {exc}") from exc
        if not text.strip():
            raise ConversionError("no text")
        return text


VARIANTS: tuple[Variant, ...] = (
    Variant("no_break_spaces", lambda t: t.replace(" ", "\u00a0"), True, "every space a no-break space"),
    Variant("crlf", lambda t: t.replace("\n", "\r\n"), True, "CR LF line ends"),
    Variant("trailing_blanks", lambda t: t.replace("\n", "   \n"), True, "blanks at the end of every line"),
    Variant("page_header", lambda t: "Seite 1 von 2   Kopie / Copy\n" + t, True, "a page header before the text"),
    Variant("bank_footer", lambda t: t + _BANK_FOOTER, True, "a footer of bank details, phones, tax ids"),
    Variant("id_footer", lambda t: t + _ID_FOOTER, True, "a footer of account, branch and terminal numbers"),
    Variant("upper", str.upper, True, "every letter a capital"),
    Variant("minus_after", lambda t: _SIGNED.sub(r"\1-", t), True, "a deduction's minus after its figure"),
    Variant("single_spaced", lambda t: re.sub(r"[ \t]+", " ", t), False, "runs of blanks one space (no layout)"),
    Variant("one_cell_per_line", lambda t: re.sub(r"[ \t]{2,}", "\n", t), False, "every cell on its own line"),
    Variant(
        "dot_leaders",
        lambda t: re.sub(r"(?<=[^\W\d_:])[ \t]{2,}(?=[0-9]+[.,][0-9]{2}(?![0-9.,]))", lambda m: "." * len(m[0]), t),
        False,
        "dot leaders between a label and its figure",
    ),
    Variant("twice", lambda t: t + "\f" + t, False, "the document printed twice (a copy after it)"),
)


def _pdftotext(pdf: Path, language: str) -> str:
    run = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, timeout=120, check=True
    )
    return run.stdout.decode("utf-8", "replace")


def _pdfplumber(pdf: Path, language: str) -> str:
    import pdfplumber

    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # its warnings on odd PDFs are not the report's

    with pdfplumber.open(pdf) as document:
        return "\f".join(page.extract_text(layout=True) or "" for page in document.pages)


def _pypdf(pdf: Path, language: str) -> str:
    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)

    return "\f".join(page.extract_text(extraction_mode="layout") for page in pypdf.PdfReader(pdf).pages)


# Tesseract's names for the sets' languages whose data Debian packages (tesseract-ocr-deu…)
_TESSERACT_LANGUAGES = {
    "en": "eng",
    "de": "deu",
    "fr": "fra",
    "es": "spa",
    "pt": "por",
    "it": "ita",
    "nl": "nld",
    "pl": "pol",
}


def _tesseract(pdf: Path, language: str) -> str:
    """Every page rendered and read by vetq's own OCR (what a scan of the document gives),
    in the document's language where its data is installed, else English."""
    import pypdfium2 as pdfium

    from vetq.core.documents.ocr import read_page, unavailable
    from vetq.core.documents.pages import PdfText

    lang = _TESSERACT_LANGUAGES.get(language, "eng")
    if unavailable(lang) is not None:
        lang = "eng"
    document = pdfium.PdfDocument(pdf)
    try:
        return PdfText([read_page(document[i], i + 1, lang, timeout_s=120) for i in range(len(document))]).text
    finally:
        document.close()


def _ocr_missing() -> str | None:
    from vetq.core.documents.ocr import unavailable

    return unavailable("eng")


def _module_missing(module: str, install: str) -> Callable[[], str | None]:
    return lambda: None if importlib.util.find_spec(module) is not None else install


CONVERTERS: tuple[Converter, ...] = (
    Converter(
        "pdftotext",
        _pdftotext,
        "the PDF through poppler's pdftotext -layout",
        lambda: None if shutil.which("pdftotext") else "pdftotext (Debian's poppler-utils)",
    ),
    Converter(
        "tesseract",
        _tesseract,
        "the PDF's pages rendered and read by vetq's OCR (a scan of it; slow: some 3 s a page)",
        _ocr_missing,
        slow=True,
    ),
    Converter(
        "pdfplumber",
        _pdfplumber,
        "the PDF through pdfplumber's layout text (pdfminer.six)",
        _module_missing("pdfplumber", "pdfplumber (pip install 'vetq[dev]')"),
    ),
    Converter(
        "pypdf",
        _pypdf,
        "the PDF through pypdf's layout mode",
        _module_missing("pypdf", "pypdf (pip install 'vetq[dev]')"),
    ),
)
EVERY: tuple[Variant | Converter, ...] = (*VARIANTS, *CONVERTERS)
BY_NAME = {v.name: v for v in EVERY}


@dataclass
class VariantResult:
    variant: Variant | Converter
    documents: int = 0
    fields: int = 0
    added: dict[str, dict[str, str]] = field(default_factory=dict)  # doc id -> field -> reason
    lost: dict[str, dict[str, str]] = field(default_factory=dict)  # flags on values the text lost
    unread: dict[str, str] = field(default_factory=dict)  # doc id -> why the converter read nothing

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant.name,
            "neutral": self.variant.neutral,
            "what": self.variant.what,
            "documents": self.documents,
            "fields": self.fields,
            "documents_with_a_new_flag": len(self.added),
            "new_flags": sum(len(f) for f in self.added.values()),
            "added": self.added,
            "documents_with_a_lost_value": len(self.lost),
            "lost": self.lost,
            "unread": self.unread,
        }


class Validator:
    """Validation jobs run in this process, heuristics only: the pipeline a worker runs,
    with no model client (asking for one is a bug here)."""

    def __init__(self) -> None:
        from vetq.core.extraction.pipeline import ExtractionPipeline
        from vetq.core.llm.client import LLMClient, ModelSpec
        from vetq.core.settings import load_settings

        def no_model(spec: ModelSpec) -> LLMClient:
            raise RuntimeError(f"a heuristics-only validation asked for a model client ({spec})")

        self.pipeline = ExtractionPipeline(load_settings(log_level="WARNING"), client_factory=no_model)

    def flags(self, doc: Mapping[str, Any], text: str) -> dict[str, str]:
        """The fields flagged on the document's correct record read from `text`, with
        their reasons, less those the document itself earns (its expected flags)."""
        outcome = self.pipeline.validate(
            text,
            dict(doc["truth"]),
            schema=builtin(doc["schema"]),
            heuristics_only=True,
            trace_id=f"variant-{doc['id']}",
        )
        result = outcome.model_dump(mode="json")
        problem = error_of(result)
        if problem is not None:
            raise RuntimeError(f"{doc['id']}: the validation failed: {problem[0]}: {problem[1]}")
        allowed = doc.get("expected_flags") or {}
        return {name: str(f.get("reason") or "") for name, f in flags_by_field(result).items() if name not in allowed}


def measure(
    documents: Sequence[Mapping[str, Any]],
    variants: Iterable[Variant | Converter],
    validator: Validator | None = None,
) -> list[VariantResult]:
    validator = validator or Validator()
    before = {doc["id"]: validator.flags(doc, doc["text"]) for doc in documents}
    results = []
    for variant in variants:
        result = VariantResult(variant)
        for doc in documents:
            try:
                text = variant.text_of(doc)
            except ConversionError as exc:
                result.unread[doc["id"]] = str(exc)
                continue
            if text is None:
                continue
            result.documents += 1
            result.fields += sum(1 for value in doc["truth"].values() if value is not None and value != [])
            after = validator.flags(doc, text)
            added = {name: reason for name, reason in after.items() if name not in before[doc["id"]]}
            lost = {
                name: reason
                for name, reason in added.items()
                if isinstance(variant, Converter) and not _held(doc, name, text)
            }
            if lost:
                result.lost[doc["id"]] = lost
            if added.keys() - lost.keys():
                result.added[doc["id"]] = {name: reason for name, reason in added.items() if name not in lost}
        results.append(result)
    return results


def _held(doc: Mapping[str, Any], name: str, text: str) -> bool:
    """Whether `text` still holds the field's correct value as the real set's own test
    reads a value in a text (`value_in_text`); a field of many values, every one."""
    value = doc["truth"].get(name)
    values = value if isinstance(value, list) else [value]
    return all(value_in_text(doc["schema"], name, v, text) for v in values if v is not None)


def with_pdfs(documents: Iterable[Mapping[str, Any]], dataset: Path) -> list[dict[str, Any]]:
    """The documents of the set whose file is `dataset`, each with its kept PDF's path
    (its `pdf` folder, as the set's build.py keeps them) where there is one."""
    pdfs = dataset.parent / "pdf"
    out = []
    for doc in documents:
        pdf = pdfs / f"{doc['id']}.pdf"
        out.append({**doc, "pdf": str(pdf)} if pdf.is_file() else dict(doc))
    return out


def to_text(results: Sequence[VariantResult]) -> str:
    lines = ["variation              kind     documents with a new flag   new flags", ""]
    for r in results:
        kind = "neutral" if r.variant.neutral else "stress"
        lines.append(
            f"  {r.variant.name:<20} {kind:<8} {len(r.added):>4} / {r.documents:<5} "
            f"{sum(len(f) for f in r.added.values()):>10} / {r.fields:<5}  {r.variant.what}"
        )
        if isinstance(r.variant, Converter):
            lines.append(
                f"{'':33}{len(r.lost)} with a flag on a value the converter lost; {len(r.unread)} it read no text from"
            )
    for r in results:
        if r.added and r.variant.neutral:
            lines += ["", f"{r.variant.name} added (a neutral variation must add none):"]
            lines += [f"  {doc_id} {name}: {reason}" for doc_id, f in r.added.items() for name, reason in f.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.layout_variants", description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="real_set", choices=("tuned", "heldout", "both"), default="both")
    parser.add_argument("--variant", action="append", choices=sorted(BY_NAME), help="one variation (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = ("tuned", "heldout") if args.real_set == "both" else (args.real_set,)
    documents = [doc for name in names for doc in with_pdfs(load_documents(REAL_SETS[name]), REAL_SETS[name])]
    chosen = (
        [BY_NAME[n] for n in args.variant]
        if args.variant
        else [v for v in EVERY if not (isinstance(v, Converter) and v.slow)]
    )
    missing = {v.name: need for v in chosen if isinstance(v, Converter) and (need := v.missing()) is not None}
    if args.variant and missing:
        for name, need in missing.items():
            print(f"{name} cannot run here: install {need}", file=sys.stderr)
        return 2
    for name, need in missing.items():
        print(f"{name} not run: install {need}", file=sys.stderr)
    results = measure(documents, [v for v in chosen if v.name not in missing])
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2, ensure_ascii=False))
    else:
        print(to_text(results))
    return 1 if any(r.added for r in results if r.variant.neutral) else 0


if __name__ == "__main__":
    sys.exit(main())
