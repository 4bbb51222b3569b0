"""Conversation helpers: tagging the agent's questions so the next turn knows it answers one."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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


def request_start(
    messages: Sequence[BaseMessage], stands_alone: Callable[[str, str], bool] | None = None
) -> int:
    """Index of the first human message of the request the latest human message belongs to.

    A human message answers the agent's question (``ask``) just before it, and so
    continues the request that question was about, unless ``stands_alone(text,
    pending)`` says it is a new request complete by itself. The chain goes back only through such
    answers: the first message that stands alone, or that no ask precedes, starts it.
    """
    humans = [i for i, message in enumerate(messages) if isinstance(message, HumanMessage)]
    if not humans:
        return len(messages)
    index = humans[-1]
    while True:
        previous_ai = next(
            (messages[i] for i in range(index - 1, -1, -1) if isinstance(messages[i], AIMessage)),
            None,
        )
        earlier = [i for i in humans if i < index]
        if (
            previous_ai is None
            or not is_ask(previous_ai)
            or not earlier
            or (
                stands_alone is not None
                and stands_alone(
                    str(messages[index].content),
                    pending_request(messages[: earlier[-1] + 1], stands_alone),
                )
            )
        ):
            return index
        index = earlier[-1]


def pending_request(
    messages: Sequence[BaseMessage], stands_alone: Callable[[str, str], bool] | None = None
) -> str:
    """The request the latest human message belongs to (see ``request_start``): the
    request and the answers that complete it, each text once."""
    start = request_start(messages, stands_alone)
    parts = [
        str(message.content).strip()
        for message in list(messages)[start:]
        if isinstance(message, HumanMessage)
    ]
    return " ".join(dict.fromkeys(part for part in parts if part))


def is_japanese(text: str) -> bool:
    """True when the text contains kana or kanji (answer in Japanese then)."""
    return any(
        "\u3040" <= char <= "\u30ff" or "\u4e00" <= char <= "\u9fff" or "\uff66" <= char <= "\uff9f"
        for char in text
    )
