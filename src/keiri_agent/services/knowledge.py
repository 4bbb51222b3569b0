"""Indexing a HelpDesk knowledge base from files on disk and from uploaded bytes.

``index_knowledge`` takes paths (files or folders), uploads as ``(name, bytes)``
pairs — manuals and FAQs (CSV, XLSX) — and/or the bundled sample, and indexes them with
``HelpDesk.index`` (incremental: unchanged documents are skipped). Uploads are
written to a temporary folder under their own names (one sub-folder each, so two
uploads with one name are reported as a clash, not silently merged) and the folder
is removed afterwards, whatever happened. Documents are named by their file name.

Progress is reported as ``on_progress(done, total, document)`` per collection.
``knowledge_status`` is what is indexed and how each collection is searched
(``helpdesk status --json``, the HTTP API).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.agents.helpdesk.desk import SAMPLE_DOCUMENTS, SAMPLE_FAQ
from keiri_agent.errors import UserInputError
from keiri_agent.services.exports import safe_name

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.desk import HelpDesk
    from keiri_agent.search.knowledge_base import IndexReport, ProgressCallback

Upload = tuple[str, bytes]
"""An uploaded file: its name (folders in it are dropped) and its content."""

TEMP_PREFIX = "keiri-helpdesk-"


def index_knowledge(
    desk: HelpDesk,
    *,
    documents: Sequence[Path | str] = (),
    qa: Sequence[Path | str] = (),
    uploads: Sequence[Upload] = (),
    qa_uploads: Sequence[Upload] = (),
    sample: bool = False,
    on_progress: ProgressCallback | None = None,
) -> dict[str, IndexReport]:
    """Index manuals (``documents``, ``uploads``) and FAQs (CSV, XLSX; ``qa``, ``qa_uploads``),
    plus the bundled XYZ sample when ``sample``; a report per collection given files."""
    manuals: list[Path | str] = [*documents, *([SAMPLE_DOCUMENTS] if sample else [])]
    faqs: list[Path | str] = [*qa, *([SAMPLE_FAQ] if sample else [])]
    if not uploads and not qa_uploads:
        return desk.index(manuals, qa=faqs, on_progress=on_progress)
    with tempfile.TemporaryDirectory(prefix=TEMP_PREFIX) as temporary:
        root = Path(temporary)
        manuals += _write(root / "manual", uploads)
        faqs += _write(root / "qa", qa_uploads)
        return desk.index(manuals, qa=faqs, on_progress=on_progress)


def _write(folder: Path, uploads: Sequence[Upload]) -> list[Path]:
    paths = []
    for number, (name, data) in enumerate(uploads, start=1):
        filename = safe_name(name)
        if not filename:
            raise UserInputError(
                f"アップロードされたファイルの名前 {name!r} を使えません",
                hint="拡張子つきのファイル名（例: manual.pdf）のファイルをアップロードしてください",
            )
        path = folder / str(number) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def knowledge_status(desk: HelpDesk) -> dict[str, Any]:
    """``{"stats": collection → numbers, "documents": collection → document → entry,
    "retrievers": collection → {"retriever": keyword|vector|hybrid, "reason": why not
    vectors (Japanese) or None}, "embeddings": the embeddings endpoint (no secret)}``."""
    knowledge_base = desk.knowledge_base
    stats = knowledge_base.stats()
    return {
        "stats": stats,
        "documents": {c: knowledge_base.documents(c) for c in stats},
        "retrievers": {c: status.to_dict() for c, status in desk.retrievers().items()},
        "embeddings": desk.settings.describe_embeddings(),
    }
