"""A model's cited claims checked against the passages they cite (``claims.check_claims``),
and through the agent with a scripted model: a claim its passage does not say is marked
and cites nothing; supported claims keep their citations."""

from __future__ import annotations

from helpdesk_support import FixedSearcher
from langchain_core.messages import AIMessage

from keiri_agent.agents.helpdesk import (
    HelpDeskAgent,
    ReflectionResult,
    SubtaskPlan,
    default_tools,
)
from keiri_agent.agents.helpdesk.claims import UNSUPPORTED_MARK, check_claims
from keiri_agent.agents.helpdesk.models import SearchOutput
from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel
from keiri_agent.search.models import Chunk, Source

LENGTH = SearchOutput(
    file_name="manual.pdf",
    page=4,
    heading="2.1 パスワードの条件",
    content="パスワードは12文字以上64文字以内で設定してください。有効期限は90日間です。",
)
LOCK = SearchOutput(
    file_name="manual.pdf",
    page=5,
    heading="2.2 アカウントロック",
    content="パスワードを5回続けて間違えると、アカウントが30分間ロックされます。",
)


def test_a_claim_its_cited_passage_does_not_say_is_marked_and_loses_its_marker() -> None:
    text = (
        "パスワードは12文字以上で設定します [1]。"
        "パスワードは毎月、情報システム部長の承認を受けて変更します [1]。\n"
        "- 5回続けて間違えるとロックされます。[2]"
    )
    checked = check_claims(text, {1: [LENGTH], 2: [LOCK]})
    assert checked.checked == 3
    assert checked.unsupported == ["パスワードは毎月、情報システム部長の承認を受けて変更します。"]
    assert checked.text == (
        "パスワードは12文字以上で設定します [1]。"
        f"パスワードは毎月、情報システム部長の承認を受けて変更します{UNSUPPORTED_MARK}。\n"
        "- 5回続けて間違えるとロックされます。[2]"
    )


def test_a_claim_citing_the_wrong_passage_or_no_passage_is_not_confirmed() -> None:
    text = "アカウントは30分間ロックされます [1]。有効期限は90日間です [9]。"
    checked = check_claims(text, {1: [LENGTH], 2: [LOCK]})
    assert len(checked.unsupported) == 2
    assert "[1]" not in checked.text and "[9]" not in checked.text
    assert checked.text.count(UNSUPPORTED_MARK) == 2


def test_sentences_without_markers_and_the_layout_are_kept() -> None:
    text = "## パスワード\n\n次のとおりです。\n\n- 有効期限は90日間です [1]\n"
    checked = check_claims(text, {1: [LENGTH]})
    assert checked.text == text
    assert checked.checked == 1 and checked.unsupported == []


MANUAL = [
    Chunk(
        id="m1",
        text=LENGTH.content,
        source=Source(document="manual.pdf", page=4, heading="2.1 パスワードの条件"),
    )
]


def test_the_agent_marks_an_unsupported_claim_of_the_model_and_cites_only_supported_ones() -> None:
    model = ScriptedChatModel(
        [
            SubtaskPlan(subtasks=["パスワードの条件"]),
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "search_xyz_manual", "args": {"query": "パスワード 条件"}, "id": "c1"}
                ],
            ),
            "パスワードは12文字以上64文字以内です [1]。記号を2文字以上含める必要があります [1]。",
            ReflectionResult(advice="", is_completed=True),
            "パスワードは12文字以上64文字以内です [1]。",
        ]
    )
    agent = HelpDeskAgent(
        Settings(),
        tools=default_tools(FixedSearcher(MANUAL), FixedSearcher([])),
        chat_model=model,
    )
    result = agent.run_agent("パスワードの条件は？")
    (subtask,) = result.subtasks
    assert subtask.subtask_answer == (
        "パスワードは12文字以上64文字以内です [1]。"
        f"記号を2文字以上含める必要があります{UNSUPPORTED_MARK}。"
    )
    assert subtask.sources == ["manual.pdf p.4 「2.1 パスワードの条件」"]


RULE = SearchOutput(
    file_name="travel.pdf",
    page=2,
    heading="3 日当",
    content=(
        "2025年4月1日から国内出張の日当は1日2,500円とする。"
        "在籍期間が3か月未満の場合は支給しない。"
        "申請書は経理部へ提出しなければならない。"
    ),
)


def _kept(claim: str) -> bool:
    return not check_claims(claim.rstrip("。") + " [1]。", {1: [RULE]}).unsupported


def test_a_value_the_passage_does_not_write_is_not_confirmed() -> None:
    assert _kept("国内出張の日当は1日2500円です。")  # the thousands separator aside
    assert not _kept("国内出張の日当は1日3,000円です。")
    assert not _kept("2025年10月1日から国内出張の日当は1日2,500円です。")


def test_a_thing_the_passage_does_not_name_is_not_confirmed() -> None:
    assert not _kept("2025年4月1日から国内出張と海外出張の日当は1日2,500円です。")
    assert _kept("国内出張の日当は、2025年4月1日から1日2,500円になります。")


def test_a_claim_that_says_no_where_its_passage_says_yes_or_the_reverse_is_not_confirmed() -> None:
    assert not _kept("在籍期間が3か月未満の場合も支給されます。")
    assert _kept("在籍期間が3か月未満の場合は支給されません。")
    # a must-do is written with a negation but says yes
    assert _kept("申請書は経理部へ提出する必要があります。")
    assert not _kept("申請書を経理部へ提出する必要はありません。")


def test_a_value_inside_a_longer_number_is_not_written() -> None:
    """「2文字」 is not written in 「12文字」."""
    checked = check_claims("パスワードは2文字以上64文字以内で設定します [1]。", {1: [LENGTH]})
    assert checked.unsupported
