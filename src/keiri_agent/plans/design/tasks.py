"""Accounting tasks an instruction can name as a whole (issue 32 §6).

「銀行の入金明細と請求一覧で入金消込をして」 is not a chain of table steps: it is one
catalog block (``accounting.match_payments``) that takes its files as they are. A
``Task`` says, as data, how an instruction names such a job and what the block needs:

- ``words``: the phrase naming the task; ``context``: words that must also appear
  (「消込」 alone may be 買掛金の消込; with 入金・銀行・請求 it is 入金消込);
- ``files``: the block's file inputs — each asked in the upload form, named in the
  instruction or not (the block cannot run without it);
- ``parameters``: other required inputs — read from the instruction when it gives
  them (``pattern``), otherwise asked (never a default);
- ``sheets``: the block's tables written to one workbook, one sheet each;
  ``file_output``: a file the block makes, exported as it is;
- ``covers``: phrases the block's outputs already answer (「仕訳案も作って」).

The rules (``procedure_rules``) find a task in an instruction, the builder
(``procedure_plan``) makes its nodes and the coverage check looks for its block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class TaskFile:
    port: str
    """The block input the uploaded file goes to."""
    label: str
    """What the upload form asks for (Japanese)."""
    words: str
    """Regex: how an instruction names this file."""
    accept: str


@dataclass(frozen=True)
class TaskParameter:
    port: str
    """The block input; ``remitter.code`` is the ``code`` of the object input ``remitter``."""
    label: str
    """The parameter in words (Japanese), as the requirement checklist shows it."""
    question: str
    hint: str
    pattern: str | None = None
    """Regex with a ``value`` group: the parameter as an instruction gives it."""
    kind: str = "text"
    """``date``: the value is read as a date (written YYYY-MM-DD)."""
    optional: bool = False
    """The block has a documented rule when it is not given (a Plan var left empty,
    not a question): 振込指定日 is then the table's one 支払日, or the block says why not."""


@dataclass(frozen=True)
class Task:
    id: str
    block: str
    title: str
    words: str
    context: str | None
    files: tuple[TaskFile, ...]
    parameters: tuple[TaskParameter, ...] = ()
    sheets: tuple[tuple[str, str], ...] = ()
    """Block output → sheet name, in the workbook's order."""
    file_output: str | None = None
    output_names: tuple[str, str] = ("結果", "ファイル")
    """The exports' names when the instruction names none: the workbook, the file."""
    covers: str | None = None

    def parameter(self, port: str) -> TaskParameter | None:
        return next((item for item in self.parameters if item.port == port), None)

    def names_a_file(self, noun: str) -> bool:
        return any(re.fullmatch(item.words, noun.strip()) for item in self.files)

    def named_in(self, text: str) -> re.Match[str] | None:
        if self.context and not re.search(self.context, text):
            return None
        return re.search(self.words, text)


_DATE = r"\d{4}\s*[-/年]\s*\d{1,2}\s*[-/月]\s*\d{1,2}日?"
"""A whole date: a day without its year is asked, not guessed."""

TASKS: tuple[Task, ...] = (
    Task(
        id="payment_matching",
        block="accounting.match_payments",
        title="入金消込",
        words=r"入金\s*の?\s*消(?:し)?込み?|売掛金?\s*の?\s*消(?:し)?込み?|消(?:し)?込み?",
        context=r"入金|銀行|通帳|振込|売掛",
        files=(
            TaskFile(
                "bank",
                "銀行の入金明細（CSV・Excel・全銀形式）",
                r"(?:銀行|口座|通帳|預金)\s*の?\s*(?:入出?金)?\s*(?:明細|データ|履歴|記録)?"
                r"|入出?金\s*(?:明細|データ|履歴|一覧|記録)?|全銀\s*(?:ファイル|データ|形式)?"
                r"|振込入金通知",
                ".csv,.xlsx,.txt",
            ),
            TaskFile(
                "invoices",
                "請求一覧（CSV・Excel）",
                r"請求\s*(?:書)?\s*(?:一覧|データ|明細|リスト|台帳)?|売掛金?\s*(?:一覧|明細|残高|台帳)?",
                ".csv,.xlsx",
            ),
            TaskFile(
                "customers",
                "取引先マスタ（得意先名・カナ・振込名義）",
                r"(?:得意先|取引先|顧客)\s*(?:マスタ|マスター|一覧|台帳|リスト)?",
                ".csv,.xlsx",
            ),
        ),
        sheets=(
            ("matched", "消込結果"),
            ("review", "要確認"),
            ("open_invoices", "未入金請求"),
            ("journal", "仕訳案"),
        ),
        output_names=("入金消込結果", ""),
        covers=r"照合|突合|突き合わ?せ|照らし合わせ|付け合わせ|マッチング"
        r"|仕訳\s*案?\s*(?:も|を)?\s*(?:作|出|起こ|切|つく)[^、。]*|未入金\s*(?:の)?\s*(?:請求)?\s*(?:も|を)?\s*(?:出|一覧|洗い出)[^、。]*",
    ),
    Task(
        id="zengin_transfer",
        block="accounting.zengin_transfer",
        title="総合振込ファイルの作成",
        # 給与・賞与振込 is another 全銀 record layout; a 振込データ.csv read, or a 振込用の
        # CSV, is not the bank's file: only 総合振込, 全銀 or FB names it
        words=r"(?<!給与)(?<!賞与)総合振込"
        r"|(?:全銀|FB)\s*(?:形式|フォーマット)?\s*の?\s*(?:振込)?\s*(?:用\s*の?)?"
        r"\s*(?:データ|ファイル)\s*(?:を|に)?\s*(?:作|出力|書き出|変換)",
        context=None,
        files=(
            TaskFile(
                "payments",
                "支払予定表（CSV・Excel）",
                r"支払\s*(?:予定|一覧|明細|リスト)\s*表?|振込\s*(?:予定|一覧|先一覧)\s*表?",
                ".csv,.xlsx",
            ),
        ),
        parameters=(
            TaskParameter(
                "transfer_date",
                "振込指定日",
                "振込指定日は？（空欄なら支払予定表の支払日）",
                "2026-11-30 の形で書いてください",
                pattern=rf"(?:振込|支払)\s*(?:指定)?\s*日\s*(?:は|を|:)?\s*(?P<value>{_DATE})",
                kind="date",
                optional=True,
            ),
            TaskParameter(
                "remitter.code",
                "委託者コード",
                "委託者コード（銀行との総合振込の契約で決まる番号）は？",
                "10 桁以内の数字",
            ),
            TaskParameter("remitter.name", "依頼人名", "依頼人名（カナ）は？", "例: ｶ)ｹｲﾘｻﾝﾌﾟﾙ"),
            TaskParameter(
                "remitter.bank_code",
                "引落口座の銀行コード",
                "引落口座の銀行コードは？",
                "4 桁の数字",
            ),
            TaskParameter(
                "remitter.branch_code",
                "引落口座の支店コード",
                "引落口座の支店コードは？",
                "3 桁の数字",
            ),
            TaskParameter(
                "remitter.account_type",
                "引落口座の預金種目",
                "引落口座の預金種目は？",
                "普通 または 当座",
            ),
            TaskParameter(
                "remitter.number", "引落口座の口座番号", "引落口座の口座番号は？", "7 桁の数字"
            ),
        ),
        sheets=(("transfers", "振込一覧"), ("skipped", "対象外")),
        file_output="file",
        output_names=("振込一覧", "総合振込ファイル"),
    ),
)


def task_of_block(block: str | None) -> Task | None:
    return next((task for task in TASKS if task.block == block), None)


def task_of_id(task_id: str | None) -> Task | None:
    return next((task for task in TASKS if task.id == task_id), None)
