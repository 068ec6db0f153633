"""Rebuild the real-document golden set from its pinned sources.

    python eval/golden/real/build.py                  # read the sources, write texts/, pdf/, documents.jsonl
    python eval/golden/real/build.py --sources DIR    # where the source repositories are
    python eval/golden/real/build.py --check          # convert again and compare; write nothing
    python eval/golden/real/build.py --keep-absent    # convert what is here, keep the rest as committed

labels.jsonl is the source of truth: per document its source (repository, commit, path,
licence), its format, the hand-checked record (`truth`), the flags the document itself
earns (`expected_flags`) and notes. This script reads every document at its pinned commit
from a git copy of its repository (DIR/owner+name/repo, DIR/owner+name or DIR/owner/name,
bare or not; DIR defaults to /work/.mirror), or a document a package registry published
inside a package (`registry`, `package`, `version`, `archive`: the archive's address,
`sha256`, `path` inside it) from the archive's copy at DIR/archives/<sha256>, or a document
rendered here from a repository's own example source (`repo`, `commit`, `path`: the file
rendered, `renderer`: the tool and its version, `sha256` of the PDF it made) from that PDF's
copy at DIR/renders/<sha256>, turns it into text
with one function, `document_text`, keeps the PDF when it is small (PDF_LIMIT), and derives
documents.jsonl (every label plus its text) with `documents_jsonl`, which reads only this
folder, and the README's table of documents: tests/test_real_eval.py checks that the
committed files are what they derive.

Formats: `pdf` (vetq's PDF converter: the text layer laid out in lines, pages joined by
form feeds), `cii-attached-pdf` (the PDF a
CII invoice carries in base64, then as `pdf`) and `textract-json` (AWS Textract's LINE
blocks in the order Textract returns them, one per line: the receipts' OCR as published).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree

HERE = Path(__file__).resolve().parent
LABELS = HERE / "labels.jsonl"
DOCUMENTS = HERE / "documents.jsonl"
README = HERE / "README.md"
TABLE_START, TABLE_END = "<!-- documents table: written by build.py -->", "<!-- end of the documents table -->"
TEXTS = HERE / "texts"
PDFS = HERE / "pdf"

PDF_LIMIT = 300_000  # bytes: a larger PDF is not committed (its text is; build.py fetches it again)
PDF_TOTAL_LIMIT = 30_000_000  # per set: the held-out set grows by a round at a time (22 MB at 438 documents)
DEFAULT_SOURCES = "/work/.mirror"
ARCHIVES = "archives"  # under the sources: package registries' archives, each named by its SHA-256
RENDERS = "renders"  # under the sources: PDFs rendered here from a repository's example source, by SHA-256

# What produced texts/: recorded in every row of documents.jsonl.
CONVERTER = (
    "vetq.core.documents.pdf.convert (text layer with its layout, OCR off), pages joined by \\f; "
    "Textract LINE blocks joined by \\n"
)

FORMATS = ("pdf", "cii-attached-pdf", "textract-json")


# --- the conversion: the one place to switch converters ------------------------------------
def pdf_to_text(data: bytes) -> str:
    """A PDF's text as vetq reads a PDF job: its converter, pages joined by form feeds.
    OCR is off: every PDF here has a text layer, and the text must not depend on whether
    Tesseract is installed."""
    from vetq.core.documents.pdf import ConvertOptions, convert

    return convert(data, ConvertOptions(ocr="off")).text


def textract_text(data: bytes) -> str:
    """AWS Textract's LINE blocks, in the order Textract returns them, one per line."""
    blocks = json.loads(data)
    return "\n".join(str(block["Text"]) for block in blocks if block.get("BlockType") == "LINE")


def attached_pdf(data: bytes) -> bytes:
    """The PDF a CII invoice carries as an AttachmentBinaryObject (base64)."""
    root = ElementTree.fromstring(data)
    for element in root.iter():
        if str(element.tag).endswith("}AttachmentBinaryObject") and element.get("mimeCode") == "application/pdf":
            return base64.b64decode("".join((element.text or "").split()))
    raise ValueError("the CII document carries no PDF attachment")


def document_text(fmt: str, data: bytes) -> tuple[str, bytes | None]:
    """(text, the PDF it was read from or None) for a source file in a format of FORMATS."""
    if fmt == "pdf":
        return pdf_to_text(data), data
    if fmt == "cii-attached-pdf":
        pdf = attached_pdf(data)
        return pdf_to_text(pdf), pdf
    if fmt == "textract-json":
        return textract_text(data), None
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


# --- the files -------------------------------------------------------------------------------
def load_labels(path: Path | None = None) -> list[dict[str, Any]]:
    # LABELS read at call time: the held-out set's build.py points this module elsewhere
    with open(path or LABELS, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def text_path(doc_id: str) -> Path:
    return TEXTS / f"{doc_id}.txt"


def pdf_path(doc_id: str) -> Path:
    return PDFS / f"{doc_id}.pdf"


def read_text(doc_id: str) -> str:
    with open(text_path(doc_id), encoding="utf-8", newline="") as handle:
        return handle.read()


def source_name(source: Mapping[str, Any]) -> str:
    """What a source is cited by: its repository ("owner/name"), or for a file inside a
    package registry's archive the registry and package ("pypi:name")."""
    return str(source["repo"]) if "repo" in source else f"{source['registry']}:{source['package']}"


def source_pin(source: Mapping[str, Any]) -> str:
    """The version of the source read: a commit (abbreviated) or a package's version."""
    return str(source["commit"])[:10] if "commit" in source else str(source["version"])


REGISTRY_PAGES = {
    "pypi": "https://pypi.org/project/{package}/{version}/",
    "npm": "https://www.npmjs.com/package/{package}/v/{version}",
    # a Debian binary package (CTAN's examples ship in TeX Live's -doc packages): the
    # snapshot archive's page of it lists every version, the row names the one rendered
    "debian": "https://snapshot.debian.org/binary/{package}/",
}


def source_url(source: Mapping[str, Any]) -> str:
    if "archive" in source:
        return str(source["archive"])  # the file is `path` inside it
    if "repo" not in source:  # rendered here from a file of a package's release
        page = REGISTRY_PAGES.get(str(source.get("registry")))
        if page is None:
            raise ValueError(
                f"{source.get('registry')!r} is no registry this set cites (one of {sorted(REGISTRY_PAGES)})"
            )
        return page.format(package=source["package"], version=source["version"])
    return f"https://github.com/{source['repo']}/blob/{source['commit']}/{quote(str(source['path']))}"


def document_row(label: Mapping[str, Any], text: str, pdf_kept: bool) -> dict[str, Any]:
    """One line of documents.jsonl: the label, its source's address, and its text."""
    row = dict(label)
    row["source"] = {**label["source"], "url": source_url(label["source"])}
    row["converter"] = CONVERTER
    row["text_file"] = f"texts/{label['id']}.txt"
    row["pdf_file"] = f"pdf/{label['id']}.pdf" if pdf_kept else None
    row["text"] = text
    return row


def documents_jsonl(labels: Iterable[Mapping[str, Any]]) -> str:
    """documents.jsonl as this folder's labels, texts and PDFs make it."""
    rows = [document_row(label, read_text(label["id"]), pdf_path(label["id"]).exists()) for label in labels]
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def readme_table(labels: Iterable[Mapping[str, Any]]) -> str:
    """The README's table of documents (between TABLE_START and TABLE_END)."""
    lines = [
        "| id | source (repository @ commit, or package @ version) | path | licence | language | currency | kind |",
        "|---|---|---|---|---|---|---|",
    ]
    for label in labels:
        source = label["source"]
        rendered = f" (rendered by {source['renderer']})" if "renderer" in source else ""
        lines.append(
            f"| `{label['id']}` | [{source_name(source)}@{source_pin(source)}]({source_url(source)}) | "
            f"`{source['path']}`{rendered} | {source['licence']} | {label['language']} | {label['currency']} | {label['kind']} |"
        )
    return "\n".join(lines)


def readme_with_table(readme: str, labels: Iterable[Mapping[str, Any]]) -> str:
    head, rest = readme.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    return f"{head}{TABLE_START}\n{readme_table(labels)}\n{TABLE_END}{tail}"


# --- the sources -----------------------------------------------------------------------------
def git_dir(sources: Path, repo: str) -> Path:
    owner, name = repo.split("/", 1)
    for candidate in (
        sources / f"{owner}+{name}" / "repo" / ".git",
        sources / f"{owner}+{name}" / "repo",
        sources / f"{owner}+{name}" / ".git",
        sources / f"{owner}+{name}",
        sources / owner / name / ".git",
        sources / owner / name,
    ):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    raise FileNotFoundError(f"no git copy of {repo} under {sources}")


def kept_copy_path(sources: Path, source: Mapping[str, Any]) -> Path:
    """Where a package archive's copy, or a PDF rendered here, is kept: named by its SHA-256,
    which pins it as a commit does."""
    return sources / (RENDERS if "renderer" in source else ARCHIVES) / str(source["sha256"])


def _has_copy(sources: Path, source: Mapping[str, Any]) -> bool:
    if "archive" in source or "renderer" in source:
        return kept_copy_path(sources, source).is_file()
    try:
        git_dir(sources, source["repo"])
    except FileNotFoundError:
        return False
    return True


def archive_member(data: bytes, member: str) -> bytes:
    """One file of a package archive: a zip (a wheel) or a tar (an sdist, compressed or not)."""
    try:
        if zipfile.is_zipfile(io.BytesIO(data)):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                return archive.read(member)
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            handle = archive.extractfile(member)
            if handle is None:
                raise KeyError(member)
            return handle.read()
    except KeyError:
        raise FileNotFoundError(f"the archive holds no file {member}") from None
    except (tarfile.TarError, zipfile.BadZipFile) as exc:
        raise ValueError(f"an unreadable archive: {exc}") from None


def read_source(sources: Path, source: Mapping[str, Any]) -> bytes:
    """The file at its pinned commit, inside its pinned package archive, or the PDF rendered
    here from the file at its pinned commit."""
    if "archive" in source or "renderer" in source:
        what = source.get("archive") or f"{source['path']} rendered by {source.get('renderer')}"
        try:
            data = kept_copy_path(sources, source).read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{source_name(source)} {source_pin(source)}: no copy of {what} at {kept_copy_path(sources, source)}"
            ) from None
        if hashlib.sha256(data).hexdigest() != source["sha256"]:
            raise ValueError(f"{kept_copy_path(sources, source)} is not the file its SHA-256 pins")
        return data if "renderer" in source else archive_member(data, str(source["path"]))
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir(sources, source["repo"])), "show", f"{source['commit']}:{source['path']}"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise FileNotFoundError(
            f"{source['repo']}@{source['commit'][:12]}:{source['path']}: {done.stderr.decode(errors='replace')[:200]}"
        )
    return done.stdout


def build(sources: Path, *, check: bool = False, keep_absent: bool = False) -> list[str]:
    """Convert every labelled document again; write texts/, pdf/ and documents.jsonl, or
    with `check` only compare. Returns the problems found (empty: all agree).

    With `keep_absent`, a document whose source repository (or package archive) has no copy under `sources`
    keeps the text and PDF committed here (and is not compared): a session that fetched
    only a new round's sources converts those, and the table and documents.jsonl are still
    written from every label."""
    labels = load_labels()
    problems: list[str] = []
    ids = [label["id"] for label in labels]
    if len(set(ids)) != len(ids):
        problems.append("labels.jsonl repeats an id")
    texts: dict[str, str] = {}
    pdfs: dict[str, bytes | None] = {}
    absent: set[str] = set()
    for label in labels:
        try:
            data = read_source(sources, label["source"])
        except FileNotFoundError:
            if not keep_absent or _has_copy(sources, label["source"]):
                raise
            absent.add(label["id"])
            texts[label["id"]] = read_text(label["id"])
            pdfs[label["id"]] = pdf_path(label["id"]).read_bytes() if pdf_path(label["id"]).exists() else None
            continue
        text, pdf = document_text(label["format"], data)
        texts[label["id"]] = text
        pdfs[label["id"]] = pdf if pdf is not None and len(pdf) <= PDF_LIMIT else None
    if absent:
        print(f"{len(absent)} documents kept as committed (no copy of their repository or archive)", file=sys.stderr)
    total = sum(len(pdf) for pdf in pdfs.values() if pdf is not None)
    if total > PDF_TOTAL_LIMIT:
        problems.append(f"the kept PDFs take {total} bytes, more than {PDF_TOTAL_LIMIT}")
    if check:
        for doc_id, text in texts.items():
            if doc_id in absent:
                continue
            if not text_path(doc_id).exists() or read_text(doc_id) != text:
                problems.append(f"texts/{doc_id}.txt differs from a fresh conversion")
            kept = pdfs[doc_id]
            if (kept is not None) != pdf_path(doc_id).exists() or (
                kept is not None and pdf_path(doc_id).read_bytes() != kept
            ):
                problems.append(f"pdf/{doc_id}.pdf differs from the source")
        if DOCUMENTS.read_text(encoding="utf-8") != documents_jsonl(labels):
            problems.append("documents.jsonl is stale")
        readme = README.read_text(encoding="utf-8")
        if readme != readme_with_table(readme, labels):
            problems.append("the README's table is stale")
        return problems
    TEXTS.mkdir(exist_ok=True)
    PDFS.mkdir(exist_ok=True)
    wanted = set(ids)
    for stale in [*TEXTS.glob("*.txt"), *PDFS.glob("*.pdf")]:
        if stale.stem not in wanted:
            stale.unlink()
    for doc_id, text in texts.items():
        with open(text_path(doc_id), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        kept = pdfs[doc_id]
        if kept is not None:
            pdf_path(doc_id).write_bytes(kept)
        elif pdf_path(doc_id).exists():
            pdf_path(doc_id).unlink()
    DOCUMENTS.write_text(documents_jsonl(labels), encoding="utf-8")
    README.write_text(readme_with_table(README.read_text(encoding="utf-8"), labels), encoding="utf-8")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python eval/golden/real/build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sources",
        default=DEFAULT_SOURCES,
        help="folder holding a git copy of every source repository, archives/ and renders/ (default %(default)s)",
    )
    parser.add_argument("--check", action="store_true", help="convert again and compare with the files; write nothing")
    parser.add_argument(
        "--keep-absent",
        action="store_true",
        help="a document whose repository is not under --sources keeps its committed text and PDF (not rechecked)",
    )
    args = parser.parse_args(argv)
    try:
        problems = build(Path(args.sources), check=args.check, keep_absent=args.keep_absent)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{'checked' if args.check else 'wrote'} {len(load_labels())} documents in {HERE}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
