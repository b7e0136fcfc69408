"""The agent's model calls: one assistant message with tool calls, over either OpenAI API.

:class:`AgentClient` is :class:`~worldspec.services.model_client.LLMClient` (the same retries,
timeouts, concurrency bound and token accounting) with one more call, :meth:`respond`: the
conversation so far and the world's tools in, the next assistant message out, always in the
Chat Completions message format, so that a trajectory reads the same whichever API produced
it. ``api="chat"`` sends ``chat.completions.create(messages=..., tools=...)``;
``api="responses"`` sends ``responses.create(instructions=..., input=..., tools=...)`` with
the messages turned into Responses items (``function_call`` / ``function_call_output``) and
the tools in the Responses shape (``episode.tools("responses")``), and turns the output items
back into one assistant message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from worldspec.services.model_client import LLMClient, LLMRequestError, Usage, wire_safe

__all__ = ["API", "AgentClient", "chat_to_responses_input", "responses_tools"]

#: Which OpenAI API the agent is called through.
API = Literal["chat", "responses"]


def responses_tools(chat_tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tool definitions in the Responses shape (the function body lifted)."""
    return [{"type": "function", **dict(t["function"])} for t in chat_tools]


def chat_to_responses_input(messages: Sequence[Mapping[str, Any]]
                            ) -> tuple[str | None, list[dict[str, Any]]]:
    """The system text (``instructions``) and the Responses input items of a chat history."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "system":
            instructions.append(text)
        elif role in ("user", "assistant"):
            if text:
                items.append({"role": role, "content": text})
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                items.append({"type": "function_call", "call_id": call.get("id", ""),
                              "name": function.get("name", ""),
                              "arguments": function.get("arguments", "")})
        elif role == "tool":
            items.append({"type": "function_call_output",
                          "call_id": message.get("tool_call_id", ""), "output": text})
    return ("\n\n".join(instructions) or None), items


def _tokens(reported: Any, spent: Usage) -> None:
    """Add a response's token counts (chat: prompt/completion; responses: input/output)."""
    if reported is None:
        return
    prompt = getattr(reported, "prompt_tokens", None)
    completion = getattr(reported, "completion_tokens", None)
    if prompt is None and completion is None:
        prompt = getattr(reported, "input_tokens", 0)
        completion = getattr(reported, "output_tokens", 0)
    spent.prompt_tokens += int(prompt or 0)
    spent.completion_tokens += int(completion or 0)


class AgentClient(LLMClient):
    """An :class:`LLMClient` that also asks for tool-calling assistant turns."""

    async def __aenter__(self) -> AgentClient:
        return self

    async def respond(self, messages: Sequence[Mapping[str, Any]],
                      tools: Sequence[Mapping[str, Any]], *, api: API = "chat",
                      usage: Usage | None = None, seed: int | None = None
                      ) -> dict[str, Any]:
        """The model's next assistant message (chat format: ``content``, ``tool_calls``).

        Raises :class:`~worldspec.services.model_client.LLMRequestError` when the server
        cannot be reached, keeps failing, or answers with nothing usable.
        """
        spent = Usage()
        try:
            if api == "responses":
                return await self._respond_responses(messages, tools, spent, seed)
            return await self._respond_chat(messages, tools, spent, seed)
        finally:
            self.usage.add(spent)
            if usage is not None:
                usage.add(spent)

    def _sampling(self, seed: int | None) -> dict[str, Any]:
        cfg = self.config
        params: dict[str, Any] = {"model": cfg.model}
        if cfg.temperature is not None:
            params["temperature"] = cfg.temperature
        chosen = seed if seed is not None else cfg.seed
        if chosen is not None:
            params["seed"] = chosen
        return params

    async def _respond_chat(self, messages: Sequence[Mapping[str, Any]],
                            tools: Sequence[Mapping[str, Any]], spent: Usage,
                            seed: int | None) -> dict[str, Any]:
        params = self._sampling(seed)
        params["messages"] = [dict(m) for m in messages]
        if tools:
            params["tools"] = [dict(t) for t in tools]
        if self.config.max_tokens is not None:
            params["max_tokens"] = self.config.max_tokens

        params = wire_safe(params)

        async def send() -> Any:
            return await self._sdk.chat.completions.create(**params)

        response, attempts = await self._with_retries("chat completion", send, spent)
        _tokens(getattr(response, "usage", None), spent)
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LLMRequestError("the server answered without any choice", attempts=attempts)
        message = choices[0].message
        out: dict[str, Any] = {"role": "assistant",
                               "content": getattr(message, "content", None) or None}
        calls = []
        for call in getattr(message, "tool_calls", None) or []:
            function = getattr(call, "function", None)
            calls.append({"id": getattr(call, "id", None) or "", "type": "function",
                          "function": {"name": getattr(function, "name", None) or "",
                                       "arguments": getattr(function, "arguments", None)
                                       or ""}})
        if calls:
            out["tool_calls"] = calls
        return out

    async def _respond_responses(self, messages: Sequence[Mapping[str, Any]],
                                 tools: Sequence[Mapping[str, Any]], spent: Usage,
                                 seed: int | None) -> dict[str, Any]:
        params = self._sampling(None)  # the Responses API takes no seed
        instructions, items = chat_to_responses_input(messages)
        if instructions is not None:
            params["instructions"] = instructions
        params["input"] = items
        if tools:
            params["tools"] = responses_tools(tools)
        if self.config.max_tokens is not None:
            params["max_output_tokens"] = self.config.max_tokens

        params = wire_safe(params)

        async def send() -> Any:
            return await self._sdk.responses.create(**params)

        response, attempts = await self._with_retries("response", send, spent)
        _tokens(getattr(response, "usage", None), spent)
        output = getattr(response, "output", None)
        if output is None:
            raise LLMRequestError("the server answered without any output", attempts=attempts)
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for item in output:
            kind = getattr(item, "type", None)
            if kind == "function_call":
                calls.append({"id": getattr(item, "call_id", None) or "", "type": "function",
                              "function": {"name": getattr(item, "name", None) or "",
                                           "arguments": getattr(item, "arguments", None)
                                           or ""}})
            elif kind == "message":
                for part in getattr(item, "content", None) or []:
                    if getattr(part, "type", None) == "output_text":
                        texts.append(str(getattr(part, "text", "") or ""))
        out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
        if calls:
            out["tool_calls"] = calls
        return out
