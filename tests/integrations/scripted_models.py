"""Scripted models (no network, no LLM) the README examples run with in tests, in place of the
real model names they show."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


class ScriptedChatModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> ScriptedChatModel:
        return self


def langchain_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": "send_email",
                            "id": "call_1",
                            "args": {"to": "bob@example.com", "body": "hi"},
                        }
                    ],
                ),
                AIMessage(content="mailed Bob"),
            ]
        )
    )


def openai_agents_model() -> Any:
    from oa_app import ScriptedModel

    return ScriptedModel()


def pydantic_ai_model() -> Any:
    from pa_app import scripted
    from pydantic_ai.models.function import FunctionModel

    return FunctionModel(scripted)
