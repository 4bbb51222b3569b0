"""From a request to a plan: one analysis or plot spec per clause, or questions to ask.

``plan_request`` reads the request (``parser``), decides what each clause
asks for (``vocab``) and builds a spec with the columns it names. Where
a default is sensible it is used and stated as an assumption; where it is not
(no metric among several numeric columns, no category to group by, ...) the
step carries a question instead of a spec.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import keiri_agent.agents.analysis.reasoning.offline.vocab as vocab
from keiri_agent.agents.analysis.reasoning.offline.parser import (
    Clause,
    ParsedRequest,
    normalize,
    parse_request,
)
from keiri_agent.agents.analysis.reasoning.offline.steps import (
    CATEGORY_KINDS,
    FREQ_EN,
    FREQ_JA,
    QUANTITY_ASKED,
    Step,
    StepBuilder,
    blanks_only,
    date_named_like,
    first,
)

__all__ = ["Plan", "Step", "plan_request"]

# A general word for an amount that named no column: 「金額」「コスト」「費用」, "amount", "cost".
_AMOUNT_WORD = re.compile(r"金額|コスト|費用|料金|(?<![a-z])(?:amounts?|costs?|spend)(?![a-z])")


_GENERIC_DATE = re.compile(r"日付|日時|年月日|(?<![a-z])dates?(?![a-z])")
# A column of a price or rate per unit (単価, 利率, 一人当たり額, rate_per_word, unit_price,
# avg_fee): its figure per period is an average.
_PER_UNIT_NAME = re.compile(
    r"単価|当たり|あたり|平均|率|(?<![a-z])(?:per|rate|avg|average|price|pct|percent)(?![a-z])"
)
"""A date said in general: names no date column of its own."""


@dataclass
class Plan:
    """The steps a request needs, in order, and what was out of scope."""

    lang: str
    steps: list[Step]
    out_of_scope: list[str]
    problems: list[str]
    assumptions: list[str]
    examples: list[str]


class _Builder(StepBuilder):
    """Builds the step of one clause: the plots, and which builder a clause needs."""

    # --- plots --------------------------------------------------------------------------
    def hist(self) -> Step:
        """A histogram of the numeric column asked about (``by`` a grouping)."""
        x = self.metric("分布を見る列", "histogram column")
        if x is None:
            return self.ask(
                self.t("分布", "Distribution"),
                "どの数値列の分布を見ますか？",
                "Distribution of which numeric column?",
            )
        spec: dict[str, Any] = {"kind": "hist", "x": x, "by": first(self.group)}
        if bins := vocab.BINS.search(self.c.text):
            spec["bins"] = min(max(int(bins.group(1)), 1), 500)
        by = f"（{spec['by']}別）" if spec["by"] else ""
        return self.step(self.t(f"{x}の分布{by}", f"Distribution of {x}"), spec)

    def box(self) -> Step:
        """A box plot of the numeric column, one box per category when named."""
        y = self.metric("箱ひげ図の数値列", "box plot column")
        if y is None:
            return self.ask(
                self.t("箱ひげ図", "Box plot"),
                "どの数値列の箱ひげ図を描きますか？",
                "Box plot of which numeric column?",
            )
        x = self.category()
        title = self.t(
            f"{x + '別の' if x else ''}{y}の箱ひげ図",
            f"Box plot of {y}" + (f" by {x}" if x else ""),
        )
        return self.step(title, {"kind": "box", "y": y, "x": x})

    def scatter(self) -> Step:
        """A scatter plot of two numeric columns (``hue`` a grouping)."""
        cols = list(dict.fromkeys(self.numeric + self.inherited))
        every = self.index.names("numeric")
        if len(cols) < 2 and len(every) == 2:
            cols = every
            self.assumptions.append(
                self.t(
                    f"数値列「{every[0]}」と「{every[1]}」を使用",
                    f"using the two numeric columns {every[0]}, {every[1]}",
                )
            )
        if len(cols) < 2:
            return self.ask(
                self.t("散布図", "Scatter plot"),
                "散布図のx軸・y軸にする数値列を2つ指定してください",
                "Which two numeric columns for the x and y axes?",
            )
        hue = first(self.group)
        return self.step(
            self.t(f"{cols[0]}と{cols[1]}の散布図", f"{cols[0]} vs {cols[1]}"),
            {"kind": "scatter", "x": cols[0], "y": cols[1], "hue": hue},
        )

    def line(self) -> Step:
        """A line of the metric per period of the date column (``hue`` a grouping)."""
        dates = self.dates or [
            m.column for m in self.c.mentions if self.index.kind(m.column) == "datetime"
        ]
        every = self.index.names("datetime")
        if not dates and len(every) > 1 and _GENERIC_DATE.search(self.c.text):
            # 「日付ごとの件数推移」 with 発注日 and 納期: which date is meant is asked
            return self.ask(
                self.t("推移", "Trend"),
                "どの日付の列を時間軸にしますか？",
                "Which date column is the time axis?",
                ("datetime",),
            )
        dates = dates or every
        if not dates:
            return self.ask(
                self.t("推移", "Trend"),
                "時系列の軸にする日付列が見つかりません。どの列を時間軸にしますか？",
                "There is no date column; which column is the time axis?",
                ("categorical", "text", "numeric"),
            )
        agg = next((a for a in self.aggs if a != "nunique"), None)
        y = self.metric("推移を見る指標", "trend metric")
        if y is None and agg == "count":
            y = self.index.columns[0].name
        if y is None:
            return self.ask(
                self.t("推移", "Trend"),
                "どの数値列の推移を見ますか？",
                "Trend of which numeric column?",
            )
        if agg is None and _PER_UNIT_NAME.search(normalize(y)):
            # 「買付単価の推移」: a price or rate per period is its average, never a sum
            agg = "mean"
            self.assumptions.append(self.t("期間ごとの平均と仮定", "period averages assumed"))
        if agg is None:
            self.assumptions.append(self.t("期間ごとの合計と仮定", "period totals assumed"))
        if not self.dates and len(dates) > 1 and (liked := date_named_like(dates, y)):
            dates = [liked]  # 「支払額の月別推移」 beside 請求日 and 支払日: over 支払日
        freq = self.freq
        if freq is None:
            freq = "M"
            self.assumptions.append(self.t("月次で集計と仮定", "monthly periods assumed"))
        self.unborrow_single_period(freq)
        hue = first(self.group)
        label = self.t("件数" if agg == "count" else y, "count" if agg == "count" else y)
        title = self.t(f"{FREQ_JA[freq]}の{label}推移", f"{FREQ_EN[freq]} {label} trend")
        return self.step(
            title,
            {"kind": "line", "x": dates[0], "y": y, "agg": agg or "sum", "freq": freq, "hue": hue},
        )

    def unborrow_single_period(self, freq: str) -> None:
        """A trend does not take another clause's single month or day
        (「2024年4月の部門別金額と、月別の推移」): one point is no trend."""
        if not self.borrowed or freq not in ("M", "Q", "Y"):
            return
        single = [
            f
            for f in self.filters
            if f["col"] in self.index.names("datetime")
            and f["op"] == "=="
            and len(str(f["value"])) >= 7
        ]
        if not single:
            return
        self.filters = [f for f in self.filters if f not in single]
        self.assumptions = [
            self.t(
                f"期間「{self.borrowed}」は推移には適用せず全期間を表示",
                f"period '{self.borrowed}' not applied to the trend: all periods shown",
            )
            if a.startswith(("期間「", "period '"))
            else a
            for a in self.assumptions
        ]

    def month_columns_grouped(self) -> list[str]:
        """Date columns that hold a month (請求月, 対象月) said with 別 / ごと: a grouping
        by the column as it is, a table (no trend word was said)."""
        return [
            m.column
            for m in self.c.mentions
            if self.index.kind(m.column) == "datetime"
            and m.column.endswith("月")
            and re.match(r"\s*(?:別|ごと|毎)", self.p.text[m.end :])
        ]

    def month_columns_said(self) -> list[str]:
        """Date columns grouped by that hold one month per value (計上月, billing_month:
        every example the first of a month), which a table can group by as they are."""
        return [
            c
            for c in self.dates
            if (examples := self.index.by_name[c].examples)
            and all(re.fullmatch(r"\d{4}-\d{2}-01(?:[ T]00:00(?::00)?)?", e) for e in examples)
        ]

    def bar(self) -> Step:
        """Bars of the metric (or row count) per category."""
        x = self.category()
        if x is None and self.freq:
            self.assumptions.append(self.t("期間別の比較は折れ線で表示", "periods shown as a line"))
            return self.line()
        if x is None:
            return self.ask(
                self.t("棒グラフ", "Bar chart"),
                "棒グラフの横軸にする列はどれですか？",
                "Which category for the bars?",
                CATEGORY_KINDS,
            )
        y = first(self.numeric, [] if "count" in self.aggs else self.inherited)
        value_aggs = {a for a in self.aggs if a not in ("count", "nunique")}
        if (
            y is None
            and "count" not in self.aggs
            and (_AMOUNT_WORD.search(self.values_said()) or value_aggs)
        ):
            # 「物件ごとの金額を比べたい」 with several amounts, "total annual contributions by
            # office" with none read: which one, never a row count
            return self.ask(
                self.t("棒グラフ", "Bar chart"),
                "どの金額の列を比べますか？",
                "Which amount column should be compared?",
                ("numeric",),
            )
        agg = next((a for a in self.aggs if a != "count"), "sum") if y else "count"
        spec: dict[str, Any] = {"kind": "bar", "x": x, "y": y, "agg": agg}
        if self.top_n:
            spec["top_k"] = self.top_n
        what = self.t(
            f"{y}{self.name_agg(agg)}" if y else "件数",
            f"{self.name_agg(agg).capitalize()} {y}" if y else "Row count",
        )
        return self.step(self.t(f"{x}別の{what}", f"{what} by {x}"), spec)

    def soft_scatter(self) -> Step | None:
        """「関係」/"vs": two numeric columns → scatter; a number and a category → box."""
        if len(set(self.numeric + self.inherited)) >= 2:
            return self.scatter()
        related = any(w in self.c.text for w in ("関係", "関連", "relation"))
        if related and self.numeric and self.category():
            return self.box()
        return None

    def soft_bar(self) -> Step | None:
        """「比べて」/"compare": bars of the categories, unless the clause says how each is
        aggregated (「雇用区分ごとに残業代の平均を比べたい」): then the figures side by side in a
        table, read exactly (a grouped aggregation)."""
        if self.group and self.aggs and not self.freq:
            return None
        return self.bar()

    def soft_overview(self) -> Step | None:
        """「ざっくり見たい」/"a quick look": the overview, unless columns are named."""
        return None if self.mentioned else self.overview()

    def build(self) -> Step | None:
        """The step for this clause, or None when the clause asks for nothing known."""
        if (question := self.vague_reference()) is not None:
            return question
        order: dict[str, Callable[[], Step | None]] = {
            "box": self.box,
            "scatter": self.scatter,
            "hist": self.hist,
            "line": self.line,
            "bar": self.bar,
            "correlation": self.correlation,
            "share": self.share,
            "missingness": self.missingness,
            "duplicate": self.duplicate,
            "summary": self.summary,
            "overview": self.overview,
            "hist_soft": self.hist,
            "line_soft": self.line,
            "scatter_soft": self.soft_scatter,
            "bar_soft": self.soft_bar,
        }
        for intent in self.intents:
            if intent in order and (step := order[intent]()) is not None:
                return step
        if (
            self.freq
            and not self.group
            and (self.numeric or self.inherited or "count" in self.aggs)
        ):
            months = self.month_columns_grouped()
            if months:  # 「請求月別の顧問料の合計を一覧で」: a table per month of the column
                self.group = months
                return self.groupby()
            return self.line()
        if self.group and (self.dates or vocab.frequency(self.c.text)):
            if months := self.month_columns_said():
                # 「委託区分と計上月ごとの支払金額」: a column of months groups like the others
                said = self.c.group_cols
                self.group = [c for c in said if c in self.group or c in months]
                return self.groupby()
            return self.line()  # 「委託区分別・月別の支払金額」: each category's line per period
        if {"ranking", "aggregate"} & set(self.intents) or self.aggs or self.group:
            return self.groupby()
        if self.numeric and self.per_group_said():
            return self.groupby()  # 「倉庫別の運賃は？」 naming no column: which one is asked
        if self.contrast and (self.numeric or self.inherited):
            return self.groupby()  # "East vs West sales": the two values side by side
        if "overview_soft" in self.intents and (step := self.soft_overview()) is not None:
            return step
        if QUANTITY_ASKED.search(self.c.text) and (self.mentioned or self.filters):
            return self.total()  # 「合計額、全部でいくら？」「仕入先って何社？」
        if self.counted_by_its_name():
            return self.total()  # 「何拠点で作業してる？」: how many 拠点
        if self.mentioned:
            self.assumptions.append(
                self.t("指定された列の要約統計を表示", "summary statistics of the named columns")
            )
            return self.step(
                self.t("列の要約統計", "Column summary"),
                {"op": "column_summary", "columns": self.mentioned},
            )
        return None


def _examples(parsed: ParsedRequest) -> list[str]:
    index, ja = parsed.index, parsed.lang == "ja"
    num = index.concept_column("sales") or next(iter(index.names("numeric")), None)
    cat = next(iter(index.names("categorical")), None)
    date = next(iter(index.names("datetime")), None)
    found = []
    if cat and num:
        found.append(f"「{cat}別の{num}合計」" if ja else f'"total {num} by {cat}"')
    if num:
        found.append(f"「{num}の分布」" if ja else f'"distribution of {num}"')
    if date and num:
        found.append(f"「月別の{num}推移」" if ja else f'"monthly {num} trend"')
    found.append("「欠損値の確認」" if ja else '"check missing values"')
    found.append("「相関行列」" if ja else '"correlation matrix"')
    return found


# Out-of-scope requests that change the data (fill in, rescale, edit): what the other
# parts of the request compute depends on them, so nothing is run.
_DATA_CHANGES = frozenset({"impute", "transform", "modify"})


def plan_request(
    text: str,
    summary: dict[str, Any],
    dataset_id: str | None = None,
    *,
    skip_out_of_scope: bool = False,
) -> Plan:
    """Plan the steps for a request.

    Args:
        text: The request (an answered question already joined to it).
        summary: The dataset summary.
        dataset_id: Put into each spec when given.
        skip_out_of_scope: Drop out-of-scope clauses instead of reporting them (they were
            already declined in this conversation).
    """
    parsed = parse_request(text, summary, vocab.family, vocab.phrase_spans)
    steps: list[Step] = []
    asked_by: dict[int, Clause] = {}  # id of a step that only asks → its clause
    declined: list[str] = []
    for clause in parsed.clauses:
        said = parsed.text[clause.start : clause.end]
        # "per km": the unit may name a column; 「解約日を…に更新しておいて」: so may the verb
        # of a data change (更新 of 更新日)
        said_raw = [
            label
            for label in vocab.out_of_scope(said)
            # 「督促状を郵送して」: an action on the thing a column counts (督促回数)
            if label in ("ratio", "action") or label in _DATA_CHANGES
        ]
        if vocab.WRITE_BACK.search(said):  # the verb may have been read as a column word
            said_raw = [*said_raw, "file"]
        if labels := vocab.out_of_scope(clause.text) or said_raw:
            declined += [label for label in labels if label not in declined]
            continue
        if blanks_only(clause) and len(parsed.clauses) > 1:
            continue  # "…? leave out blanks": said of the grouping of the other clauses
        step = _Builder(parsed, clause, dataset_id).build()
        if step is not None and all(step.spec is None or step.spec != s.spec for s in steps):
            steps.append(step)
            if step.spec is None:
                asked_by[id(step)] = clause
    steps, unread = _drop_unnamed_questions(parsed, steps, asked_by)
    if set(declined) & _DATA_CHANGES and not skip_out_of_scope:
        steps = []  # the other parts would run on data that was not changed as asked
    reasons = [vocab.OUT_OF_SCOPE_REASONS[label][parsed.lang != "ja"] for label in declined]
    return Plan(
        lang=parsed.lang,
        steps=steps,
        out_of_scope=[] if skip_out_of_scope else reasons,
        problems=parsed.problems,
        assumptions=parsed.assumptions + unread,
        examples=_examples(parsed),
    )


def _drop_unnamed_questions(
    parsed: ParsedRequest, steps: list[Step], asked_by: dict[int, Clause]
) -> tuple[list[Step], list[str]]:
    """A clause that names no column of the data and could only be asked about does not
    hold up the clauses that can run (「部門別の月給合計と、ボーナスの平均」 with no bonus
    column): it is left out and said so."""
    if all(s.spec is None for s in steps):
        return steps, []
    kept, unread = [], []
    for step in steps:
        clause = asked_by.get(id(step))
        if clause is not None and not clause.mentions and not clause.group_cols:
            said = parsed.text[clause.start : clause.end].strip(" 、,")
            unread.append(
                f"「{said}」はデータの列と対応づけられないため実行しません"
                if parsed.lang == "ja"
                else f"'{said}' names no column of the data and was not run"
            )
            continue
        kept.append(step)
    return kept, unread
