"""Conversation helpers: tagging the agent's questions so the next turn knows it answers one."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

_KIND_KEY = "keiri_kind"


def agent_message(text: str, kind: str) -> AIMessage:
    """An AIMessage from the agent tagged with what it is: ask, out_of_scope, report, note."""
    return AIMessage(content=text, additional_kwargs={_KIND_KEY: kind})


def message_kind(message: BaseMessage) -> str | None:
    """The tag set by ``agent_message``, or None."""
    return message.additional_kwargs.get(_KIND_KEY)


def is_ask(message: BaseMessage) -> bool:
    """True for a clarifying question the agent asked."""
    return isinstance(message, AIMessage) and message_kind(message) == "ask"


def latest_user_text(messages: Sequence[BaseMessage]) -> str:
    """Text of the most recent human message ('' when there is none)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text if isinstance(message.text, str) else str(message.content)
    return ""


def pending_request(messages: Sequence[BaseMessage]) -> str:
    """The request the latest human message belongs to.

    When the agent's last message before it was a question (``ask``), the user is
    answering, so the earlier request and the answer are joined; otherwise it is
    the latest human message alone.
    """
    humans = [i for i, message in enumerate(messages) if isinstance(message, HumanMessage)]
    if not humans:
        return ""
    last = humans[-1]
    parts = [str(messages[last].content)]
    index = last
    while True:
        previous_ai = next(
            (messages[i] for i in range(index - 1, -1, -1) if isinstance(messages[i], AIMessage)),
            None,
        )
        earlier = [i for i in humans if i < index]
        if previous_ai is None or not is_ask(previous_ai) or not earlier:
            break
        index = earlier[-1]
        parts.insert(0, str(messages[index].content))
    return " ".join(parts)


def is_japanese(text: str) -> bool:
    """True when the text contains kana or kanji (answer in Japanese then)."""
    return any(
        "\u3040" <= char <= "\u30ff" or "\u4e00" <= char <= "\u9fff" or "\uff66" <= char <= "\uff9f"
        for char in text
    )
