"""Which PDF library turns invoices into text best, and how fast: the measurement behind
vetq's choice of pypdfium2 (core/documents/pdf.py).

    python -m vetq.eval.bench_pdf DIR [DIR ...] --json [--truth gt.jsonl]

Every *.pdf under the directories is converted, in this process, by each library
installed: vetq's own conversion (pypdfium2's glyphs and boxes through
core/documents/layout.py), pypdfium2's plain text (PDFium's own reading order),
pdfplumber's layout text (pdfminer.six) and pypdf's layout mode. Per library:

- ms_per_page: conversion time over pages converted (opening the file included);
- rows_kept: of the visual rows that hold columns (two words on one baseline with a
  gap of more than three character widths between them, from pdfplumber's word
  geometry, or PDFium's when pdfplumber is absent), the share whose words on either
  side of the widest gap stand on one text line, left before right: a label and its
  amount, a table's row;
- amounts_intact: with --truth (JSONL: {"file": path ending, "subtotal", "tax",
  "total", "due"}, e.g. amounts read from the invoices' embedded XML), the share of
  those amounts vetq's own amount reader finds in the text, in whatever form printed.

Files a library cannot read (no text layer, an error) count in `failed`, not in the rates.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

Converter = Callable[[bytes], list[str]]

# A gap wider than this many character widths separates columns on a row.
COLUMN_GAP_CHARS = 3.0


def _vetq(data: bytes) -> list[str]:
    from vetq.core.documents.pdf import ConvertOptions, convert

    return [page.text for page in convert(data, ConvertOptions(max_pages=10_000, ocr="off")).pages]


def _pdfium_plain(data: bytes) -> list[str]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        texts = []
        for page in document:
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return texts
    finally:
        document.close()


def _pdfplumber(data: bytes) -> list[str]:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return [page.extract_text(layout=True) or "" for page in pdf.pages]


def _pypdf(data: bytes) -> list[str]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    return [page.extract_text(extraction_mode="layout") or "" for page in reader.pages]


LIBRARIES: dict[str, tuple[str, Converter]] = {
    "vetq (pypdfium2 + layout)": ("pypdfium2", _vetq),
    "pypdfium2 plain": ("pypdfium2", _pdfium_plain),
    "pdfplumber layout": ("pdfplumber", _pdfplumber),
    "pypdf layout": ("pypdf", _pypdf),
}


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# --------------------------------------------------------------------------- reference rows


def reference_rows(data: bytes) -> list[list[tuple[str, str]]]:
    """Per page, the (left word, right word) pair across the widest gap of every row
    that holds columns, from pdfplumber's word boxes (PDFium's without it)."""
    if _installed("pdfplumber"):
        import pdfplumber

        pages: list[list[tuple[str, float, float, float, float]]] = []
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for page in pdf.pages:
                pages.append([(w["text"], w["x0"], w["top"], w["x1"], w["bottom"]) for w in page.extract_words()])
    else:
        from vetq.core.documents.pdf import ConvertOptions, convert

        pages = [
            [(p.text[w.start : w.end], *w.box) for w in p.words]
            for p in convert(data, ConvertOptions(max_pages=10_000, ocr="off")).pages
        ]
    out: list[list[tuple[str, str]]] = []
    for words in pages:
        rows: list[list[tuple[str, float, float, float, float]]] = []
        for word in sorted(words, key=lambda w: ((w[2] + w[4]) / 2, w[1])):
            centre, height = (word[2] + word[4]) / 2, max(word[4] - word[2], 0.1)
            if rows:
                last = rows[-1][0]
                if abs(centre - (last[2] + last[4]) / 2) <= 0.3 * height:
                    rows[-1].append(word)
                    continue
            rows.append([word])
        pairs: list[tuple[str, str]] = []
        for row in rows:
            row.sort(key=lambda w: w[1])
            char_width = statistics.median((w[3] - w[1]) / max(len(w[0]), 1) for w in row)
            gaps = [(row[i + 1][1] - row[i][3], i) for i in range(len(row) - 1)]
            if not gaps:
                continue
            widest, at = max(gaps)
            if widest > COLUMN_GAP_CHARS * char_width:
                pairs.append((row[at][0], row[at + 1][0]))
        out.append(pairs)
    return out


def row_kept(text: str, left: str, right: str) -> bool:
    """Both words on one line, left first; spacing aside (one library splits "250g"
    from "Extra" where another does not)."""
    left, right = "".join(left.split()), "".join(right.split())
    for line in text.splitlines():
        line = "".join(line.split())
        i = line.find(left)
        if i >= 0 and line.find(right, i + len(left)) >= 0:
            return True
    return False


def amounts_found(text: str, amounts: list[Decimal]) -> int:
    from vetq.core.extraction.amounts import find_amounts

    present = {mention.value for mention in find_amounts(text)}
    return sum(1 for amount in amounts if amount in present)


def _truth(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _amounts_of(pdf: Path, truth: list[dict[str, Any]]) -> list[Decimal]:
    posix = pdf.as_posix()
    for entry in truth:
        if posix.endswith("/" + entry["file"]) or posix == entry["file"]:
            values = {Decimal(str(entry[k])) for k in ("subtotal", "tax", "total", "due") if entry.get(k)}
            return sorted(v for v in values if v != 0)
    return []


# --------------------------------------------------------------------------- the run


def run(dirs: Sequence[Path], *, truth_path: Path | None = None, max_files: int | None = None) -> dict[str, Any]:
    files = sorted({p for d in dirs for p in (d.rglob("*.pdf") if d.is_dir() else [d])})
    if max_files is not None:
        files = files[:max_files]
    truth = _truth(truth_path)
    libraries = {name: fn for name, (module, fn) in LIBRARIES.items() if _installed(module)}
    stats = {
        name: {"files": 0, "failed": 0, "pages": 0, "seconds": 0.0, "rows": 0, "rows_kept": 0, "amounts": 0, "found": 0}
        for name in libraries
    }
    for pdf in files:
        data = pdf.read_bytes()
        try:
            reference = reference_rows(data)
        except Exception:  # noqa: BLE001 - a file the reference cannot read is left out
            continue
        amounts = _amounts_of(pdf, truth)
        for name, convert in libraries.items():
            entry = stats[name]
            started = time.perf_counter()
            try:
                pages = convert(data)
            except Exception:  # noqa: BLE001 - counted, not fatal
                entry["failed"] += 1
                continue
            entry["seconds"] += time.perf_counter() - started
            entry["files"] += 1
            entry["pages"] += len(pages)
            for page_text, pairs in zip(pages, reference, strict=False):
                entry["rows"] += len(pairs)
                entry["rows_kept"] += sum(1 for left, right in pairs if row_kept(page_text, left, right))
            if amounts:
                entry["amounts"] += len(amounts)
                entry["found"] += amounts_found("\n".join(pages), amounts)
    report: dict[str, Any] = {"files": len(files), "libraries": {}}
    for name, entry in stats.items():
        report["libraries"][name] = {
            "files": entry["files"],
            "failed": entry["failed"],
            "pages": entry["pages"],
            "ms_per_page": round(1000 * entry["seconds"] / entry["pages"], 2) if entry["pages"] else None,
            "rows": entry["rows"],
            "rows_kept": round(entry["rows_kept"] / entry["rows"], 3) if entry["rows"] else None,
            "amounts": entry["amounts"],
            "amounts_intact": round(entry["found"] / entry["amounts"], 3) if entry["amounts"] else None,
        }
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.bench_pdf", description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="directories (searched for *.pdf) or PDF files")
    parser.add_argument("--truth", type=Path, help="JSONL of amounts per file (file, subtotal, tax, total, due)")
    parser.add_argument("--max-files", type=int, help="convert at most this many files")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    report = run(args.dirs, truth_path=args.truth, max_files=args.max_files)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['files']} files")
    print("| library | files | failed | pages | ms/page | rows kept | amounts intact |")
    print("|---|---|---|---|---|---|---|")
    for name, row in report["libraries"].items():
        print(
            f"| {name} | {row['files']} | {row['failed']} | {row['pages']} | {row['ms_per_page']} | "
            f"{row['rows_kept']} | {row['amounts_intact']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
