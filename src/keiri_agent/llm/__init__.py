"""LLM access: the configured chat model and embeddings, structured output, prompts.

Test doubles (``ScriptedChatModel``, ``StubOpenAIServer``) live in
``keiri_agent.llm.testing`` and are not imported here.
"""

from typing import TYPE_CHECKING

from keiri_agent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.llm.factory import chat_model, embeddings
    from keiri_agent.llm.structured import (
        PromptRenderError,
        ainvoke_structured,
        invoke_structured,
        render_prompt,
        to_llm_error,
    )

# The factory imports langchain_openai/openai: only when a provider is built.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "chat_model": ".factory",
        "embeddings": ".factory",
        "PromptRenderError": ".structured",
        "ainvoke_structured": ".structured",
        "invoke_structured": ".structured",
        "render_prompt": ".structured",
        "to_llm_error": ".structured",
    },
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
