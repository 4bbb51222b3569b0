"""LLM access: the configured chat model and embeddings, structured output, prompts.

Test doubles (``ScriptedChatModel``, ``StubOpenAIServer``) live in
``keiri_agent.llm.testing`` and are not imported here.
"""

from keiri_agent.llm.factory import chat_model, embeddings
from keiri_agent.llm.structured import (
    PromptRenderError,
    ainvoke_structured,
    invoke_structured,
    render_prompt,
    to_llm_error,
)

__all__ = [
    "PromptRenderError",
    "ainvoke_structured",
    "chat_model",
    "embeddings",
    "invoke_structured",
    "render_prompt",
    "to_llm_error",
]
