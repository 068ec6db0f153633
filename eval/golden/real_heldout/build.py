"""Rebuild the held-out set from its pinned sources, as eval/golden/real/build.py does
for the tuned set (the same converter, the same files; labels.jsonl comes from derive.py).

    python eval/golden/real_heldout/build.py [--sources DIR] [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
from vetq.eval.golden.real import build as real_build  # noqa: E402

# One builder for both sets: the tuned set's, pointed at this folder, so the held-out
# texts come from the very same conversion.
real_build.HERE = HERE
real_build.LABELS = HERE / "labels.jsonl"
real_build.DOCUMENTS = HERE / "documents.jsonl"
real_build.README = HERE / "README.md"
real_build.TEXTS = HERE / "texts"
real_build.PDFS = HERE / "pdf"

if __name__ == "__main__":
    sys.exit(real_build.main())
