"""The HelpDesk agent's prompts (seed 001 §7.2), overridable by subclass or configuration.

Every prompt is a ``str.format`` template rendered with
:func:`keiri_agent.llm.structured.render_prompt` (strict: a missing or unused
placeholder fails loudly). The placeholders each prompt receives are listed in
:data:`PLACEHOLDERS`; an override must use exactly the same ones.

Customise in one of three ways::

    class MyPrompts(HelpDeskAgentPrompts):            # subclass (seed §11.2)
        planner_system_prompt = "..."

    HelpDeskAgentPrompts(planner_system_prompt="...")  # keyword overrides
    HelpDeskAgentPrompts.from_yaml("prompts.yaml")     # a YAML mapping name -> text
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from keiri_agent.errors import ConfigurationError
from keiri_agent.llm.structured import render_prompt

PLANNER_SYSTEM_PROMPT = """\
# 役割
あなたはシステムのヘルプデスク担当者です。ユーザーの質問に回答するために、調べるべきことを
サブタスクに分解して計画を立ててください。

# 指示
- 各サブタスクは、マニュアルやFAQを検索して1つの回答にまとめられる、
  具体的で独立した問いにしてください。
- 質問に答えるために必要なサブタスクだけを挙げ、重複させないでください（多くても5個程度）。
- 質問が単純な場合は、サブタスクは1つで構いません。
- 質問に複数の問いが含まれている場合は、それぞれを別のサブタスクにしてください。
- サブタスクは質問と同じ言語で書いてください。
"""

PLANNER_USER_PROMPT = """\
次の質問に回答するための計画（サブタスクのリスト）を作成してください。

質問:
{question}
"""

SUBTASK_SYSTEM_PROMPT = """\
# 役割
あなたはシステムのヘルプデスクで、1つのサブタスクの調査と回答を担当するエージェントです。
全体の流れは 計画立案 → サブタスク実行（ツール選択・実行 → サブタスク回答 → 内省）→ 最終回答 です。
最終回答は、すべてのサブタスクの結果をもとに別のエージェントが作成します。

# ユーザーの質問
{question}

# 計画（全サブタスク）
{plan}

# あなたが担当するサブタスク
{subtask}

# 守ること
- 指示されたステップだけを実行し、複数のステップを同時に行わないでください。
- 回答は検索結果に書かれていることだけを根拠にし、推測で補わないでください。
- 検索結果に答えがない場合は、見つからなかったと正直に書いてください。
- ユーザーの質問と同じ言語で書いてください。
"""

SUBTASK_TOOL_SELECTION_USER_PROMPT = """\
ステップ1: ツール選択・実行
サブタスク「{subtask}」に回答するために、検索ツールを呼び出してください。
- 必ず1つ以上の検索ツールを呼び出してください（文章で回答しないでください）。
- 検索語は、機能名・画面名・エラーメッセージなど具体的なキーワードにしてください。
- 必要であれば複数のツールや複数の検索語を使って構いません。
"""

SUBTASK_RETRY_USER_PROMPT = """\
前回の回答は不十分と評価されました。次のアドバイスを踏まえて、もう一度ステップ1（ツール選択・実行）から
やり直してください。前回とは異なる検索語やツールを試してください。

アドバイス:
{advice}
"""

SUBTASK_ANSWER_USER_PROMPT = """\
ステップ2: サブタスク回答
上の検索結果だけを根拠に、サブタスク「{subtask}」への回答を作成してください。
- 根拠にした箇所には、検索結果の番号を [1] のように付けてください（複数なら [1][2]）。
- 検索結果にないことは書かないでください。
  答えが見つからない場合は、見つからなかったと書いてください。
- 簡潔に、手順がある場合は順番どおりに書いてください。

使える出典:
{sources}
"""

SUBTASK_REFLECTION_USER_PROMPT = """\
ステップ3: 内省
サブタスク「{subtask}」に対するあなたの直前の回答を評価してください。
- 回答が検索結果に基づいており、サブタスクに十分に答えていれば is_completed を true にしてください。
- 検索結果に答えがない、根拠が不足している、サブタスクの一部にしか答えていない場合は
  is_completed を false にし、advice に改善策（別のツール、別の検索語、観点など）を
  具体的に書いてください。
"""

FINAL_ANSWER_SYSTEM_PROMPT = """\
# 役割
あなたはシステムのヘルプデスク担当者です。サブタスクの調査結果をまとめて、ユーザーの質問への最終回答を作成します。

# 守ること
- サブタスクの回答に書かれていることだけを根拠にし、推測で補わないでください。
- 根拠には、サブタスクの回答に付いている出典番号 [1] などをそのまま付けてください。
- 出典の一覧はシステムが自動で末尾に付けるので、あなたは書かないでください。
- 調べても分からなかった点がある場合は、回答の最後に「## 見つからなかった点」という見出しを付けて、
  何が分からなかったのかをはっきり書いてください。分からなかったことを推測で埋めないでください。
- ユーザーの質問と同じ言語で、丁寧かつ簡潔に書いてください。
"""

FINAL_ANSWER_USER_PROMPT = """\
ユーザーの質問:
{question}

サブタスクの調査結果:
{subtask_results}

十分な回答が見つからなかったサブタスク:
{unanswered}

以上をもとに、ユーザーの質問への最終回答を作成してください。
"""

PLACEHOLDERS: dict[str, frozenset[str]] = {
    "planner_system_prompt": frozenset(),
    "planner_user_prompt": frozenset({"question"}),
    "subtask_system_prompt": frozenset({"question", "plan", "subtask"}),
    "subtask_tool_selection_user_prompt": frozenset({"subtask"}),
    "subtask_retry_user_prompt": frozenset({"advice"}),
    "subtask_answer_user_prompt": frozenset({"subtask", "sources"}),
    "subtask_reflection_user_prompt": frozenset({"subtask"}),
    "final_answer_system_prompt": frozenset(),
    "final_answer_user_prompt": frozenset({"question", "subtask_results", "unanswered"}),
}
"""Each prompt's name and the placeholders it is rendered with."""


def placeholders(template: str) -> set[str]:
    """The named ``{placeholders}`` of a ``str.format`` template."""
    names = set()
    for _literal, field, _spec, _conversion in string.Formatter().parse(template):
        if field is not None:
            names.add(field.split(".", 1)[0].split("[", 1)[0])
    return names


class HelpDeskAgentPrompts:
    """The prompt texts, one attribute per prompt (names in :data:`PLACEHOLDERS`).

    Args:
        **overrides: Replacement texts by prompt name. Each must use exactly the
            placeholders of the prompt it replaces.

    Raises:
        ConfigurationError: An unknown prompt name, a malformed template, or a
            template whose placeholders differ from the expected ones.
    """

    planner_system_prompt: str = PLANNER_SYSTEM_PROMPT
    planner_user_prompt: str = PLANNER_USER_PROMPT
    subtask_system_prompt: str = SUBTASK_SYSTEM_PROMPT
    subtask_tool_selection_user_prompt: str = SUBTASK_TOOL_SELECTION_USER_PROMPT
    subtask_retry_user_prompt: str = SUBTASK_RETRY_USER_PROMPT
    subtask_answer_user_prompt: str = SUBTASK_ANSWER_USER_PROMPT
    subtask_reflection_user_prompt: str = SUBTASK_REFLECTION_USER_PROMPT
    final_answer_system_prompt: str = FINAL_ANSWER_SYSTEM_PROMPT
    final_answer_user_prompt: str = FINAL_ANSWER_USER_PROMPT

    def __init__(self, **overrides: str) -> None:
        unknown = sorted(set(overrides) - PLACEHOLDERS.keys())
        if unknown:
            raise ConfigurationError(
                f"ヘルプデスクのプロンプト名 {', '.join(unknown)} はありません",
                hint=f"指定できる名前: {', '.join(PLACEHOLDERS)}",
            )
        for name, text in overrides.items():
            setattr(self, name, text)
        for name in PLACEHOLDERS:
            self._check(name, getattr(self, name))

    def texts(self) -> dict[str, str]:
        """Every prompt's text by name (what a YAML override file may contain)."""
        return {name: getattr(self, name) for name in PLACEHOLDERS}

    @classmethod
    def from_mapping(cls, texts: Mapping[str, Any]) -> HelpDeskAgentPrompts:
        """Prompts with the texts of ``texts`` (name -> template) replacing the defaults."""
        bad = sorted(str(name) for name, text in texts.items() if not isinstance(text, str))
        if bad:
            raise ConfigurationError(
                f"ヘルプデスクのプロンプト {', '.join(bad)} は文字列で書いてください",
                hint='YAML の値を引用符（"..."）で囲んでください',
            )
        return cls(**{str(name): text for name, text in texts.items()})

    @classmethod
    def from_yaml(cls, path: str | Path) -> HelpDeskAgentPrompts:
        """Prompts overridden by a YAML file mapping prompt names to texts."""
        path = Path(path)
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigurationError(
                f"ヘルプデスクのプロンプトファイル {path} を読み込めません: {exc}",
                hint="プロンプト名と本文の組を書いた YAML ファイルを指定してください",
            ) from exc
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, Mapping):
            raise ConfigurationError(
                f"{path} はプロンプト名と本文の組（YAML のマッピング）で書いてください",
                hint=f"指定できる名前: {', '.join(PLACEHOLDERS)}",
            )
        return cls.from_mapping(loaded)

    def render(self, name: str, **values: Any) -> str:
        """The prompt ``name`` with its placeholders filled (strictly)."""
        return render_prompt(getattr(self, name), **values)

    @staticmethod
    def _check(name: str, text: str) -> None:
        try:
            found = placeholders(text)
        except ValueError as exc:
            raise ConfigurationError(
                f"ヘルプデスクのプロンプト {name!r} の書き方が正しくありません: {exc}",
                hint="波かっこそのものは {{ と }} のように二重にして書いてください",
            ) from exc
        expected = PLACEHOLDERS[name]
        if found != expected:
            shown = ", ".join("{" + item + "}" for item in sorted(expected)) or "none"
            raise ConfigurationError(
                f"ヘルプデスクのプロンプト {name!r} の差し込み項目 "
                f"{sorted(found) or '（なし）'} が違います。必要な差し込み項目: {shown}",
                hint="既定のプロンプトと同じ差し込み項目を使い、"
                "波かっこそのものは {{ と }} のように二重にして書いてください",
            )
