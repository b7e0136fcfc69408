"""The LLM client against the scripted local server: retries, timeouts, parsing, accounting."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer, hashed_embedding
from pydantic import BaseModel

from worldspec.services.model_client import (
    ChatResult,
    LLMClient,
    LLMConfig,
    LLMConfigError,
    LLMOutputError,
    LLMRequestError,
    Usage,
    extract_json,
)

USER = [{"role": "user", "content": "hello"}]


class Plan(BaseModel):
    name: str
    steps: list[str]


def chat(config: LLMConfig, **kwargs: Any) -> tuple[ChatResult[Any], Usage]:
    async def go() -> tuple[ChatResult[Any], Usage]:
        async with LLMClient(config) as client:
            result = await client.chat(USER, **kwargs)
            return result, client.usage
    return asyncio.run(go())


# ----------------------------------------------------------------- config
def test_config_from_arguments_wins_over_environment() -> None:
    env = {"OPENAI_BASE_URL": "http://env:1/v1", "OPENAI_API_KEY": "sk-secret",
           "WORLDSPEC_MODEL": "m"}
    config = LLMConfig.from_env_and_args(base_url="http://arg:2/v1/", model="x", env=env,
                                         concurrency=3)
    assert (config.base_url, config.model, config.api_key, config.concurrency) == \
        ("http://arg:2/v1", "x", "sk-secret", 3)
    assert "sk-secret" not in repr(config)


def test_config_from_environment_only() -> None:
    env = {"OPENAI_BASE_URL": "http://localhost:8000/v1", "WORLDSPEC_MODEL": "qwen"}
    config = LLMConfig.from_env_and_args(env=env)
    assert config.base_url == "http://localhost:8000/v1" and config.api_key == "EMPTY"


def test_a_key_alone_means_the_openai_endpoint() -> None:
    config = LLMConfig.from_env_and_args(model="gpt", env={"OPENAI_API_KEY": "sk"})
    assert config.base_url == "https://api.openai.com/v1"


@pytest.mark.parametrize(("args", "env", "words"), [
    ({}, {}, "no model endpoint configured"),
    ({"base_url": "http://h/v1"}, {}, "no model named"),
    ({"base_url": "ftp://h", "model": "m"}, {}, "http://"),
    ({"base_url": "http://h", "model": "m", "concurrency": 0}, {}, "concurrency"),
    ({"base_url": "http://h", "model": "m", "timeout": 0.0}, {}, "timeout"),
])
def test_bad_configuration_is_a_clear_error(args: dict[str, Any], env: dict[str, str],
                                            words: str) -> None:
    with pytest.raises(LLMConfigError, match=words):
        LLMConfig.from_env_and_args(env=env, **args)


# ------------------------------------------------------------------- chat
def test_chat_in_the_real_wire_format(llm_server: ScriptedLLMServer,
                                      llm_config: LLMConfig) -> None:
    llm_server.push(Reply("hi there", prompt_tokens=5, completion_tokens=3))
    result, total = chat(llm_config)
    assert result.text == "hi there" and result.parsed is None
    assert result.usage.to_json() == {"requests": 1, "prompt_tokens": 5, "completion_tokens": 3,
                                      "total_tokens": 8, "retries": 0, "cached_tokens": 0,
                                      "replayed_requests": 0, "replayed_tokens": 0}
    assert total.total_tokens == 8
    request = llm_server.chat_requests[0]
    assert request.body["model"] == "scripted-model" and request.messages == USER
    assert request.headers["authorization"] == "Bearer test-key"


def test_chat_reads_the_cached_prompt_tokens_the_server_reports(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.push(Reply("cached", prompt_tokens=50, completion_tokens=3, cached_tokens=40),
                    Reply("not said", prompt_tokens=50, completion_tokens=3))
    first, _ = chat(llm_config)
    assert first.usage.cached_tokens == 40 and first.usage.prompt_tokens == 50
    second, _ = chat(llm_config)  # no prompt_tokens_details in the answer: 0
    assert second.usage.cached_tokens == 0 and second.usage.prompt_tokens == 50


def test_429_then_success_is_retried(llm_server: ScriptedLLMServer,
                                     llm_config: LLMConfig) -> None:
    llm_server.push(Reply(status=429, headers={"retry-after": "0"}), Reply(status=503), "ok")
    result, total = chat(llm_config)
    assert result.text == "ok" and result.attempts == 3
    assert total.retries == 2 and total.requests == 3
    assert len(llm_server.chat_requests) == 3


@pytest.mark.parametrize("status", [408, 409, 500, 502])
def test_transient_statuses_are_retried(llm_server: ScriptedLLMServer, llm_config: LLMConfig,
                                        status: int) -> None:
    llm_server.push(Reply(status=status), "fine")
    assert chat(llm_config)[0].text == "fine"


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_statuses_fail_at_once(llm_server: ScriptedLLMServer, llm_config: LLMConfig,
                                     status: int) -> None:
    llm_server.push(Reply(status=status, error="go away"), "never")
    with pytest.raises(LLMRequestError, match="go away") as caught:
        chat(llm_config)
    assert caught.value.status == status and len(llm_server.chat_requests) == 1


def test_retries_are_bounded(llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.push(*[Reply(status=500, error="down")] * 10)
    with pytest.raises(LLMRequestError, match="after 4 attempts") as caught:
        chat(llm_config)
    assert caught.value.attempts == 4 and len(llm_server.chat_requests) == 4


def test_a_timeout_is_retried(llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    config = replace(llm_config, timeout=0.3)
    llm_server.push(Reply("late", delay=2.0), "in time")
    started = time.monotonic()
    result, total = chat(config)
    assert result.text == "in time" and total.retries == 1
    assert time.monotonic() - started < 1.8


def test_a_timeout_every_time_gives_up(llm_server: ScriptedLLMServer,
                                       llm_config: LLMConfig) -> None:
    config = replace(llm_config, timeout=0.2, max_retries=1)
    llm_server.push(Reply("late", delay=2.0), Reply("late", delay=2.0))
    with pytest.raises(LLMRequestError, match=r"no answer within 0\.2 s"):
        chat(config)


def test_connection_refused_is_retried_then_reported() -> None:
    server = ScriptedLLMServer().start()
    url = server.url
    server.close()
    config = LLMConfig(base_url=url, model="m", timeout=1.0, max_retries=2, backoff_base=0.01)
    with pytest.raises(LLMRequestError, match="cannot connect"):
        chat(config)


def test_malformed_response_body_is_retried(llm_server: ScriptedLLMServer,
                                            llm_config: LLMConfig) -> None:
    llm_server.push(Reply(raw=b'{"choices": [ broken'), "good")
    assert chat(llm_config)[0].text == "good"


# ------------------------------------------------------------- structured
def test_structured_output_with_prose_and_fences(llm_server: ScriptedLLMServer,
                                                 llm_config: LLMConfig) -> None:
    llm_server.push("Sure! Here is the plan:\n```json\n{\"name\": \"p\", \"steps\": [\"a\"]}\n"
                    "```\nHope it helps.")
    result, _ = chat(llm_config, json_schema=Plan)
    assert result.parsed == Plan(name="p", steps=["a"])
    body = llm_server.chat_requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["title"] == "Plan"
    assert "JSON schema" in body["messages"][0]["content"]


def test_malformed_json_is_asked_again(llm_server: ScriptedLLMServer,
                                       llm_config: LLMConfig) -> None:
    llm_server.push('{"name": "p", "steps": [', '{"name": "p"}',
                    '<think>hmm</think>{"name": "p", "steps": []}')
    result, total = chat(llm_config, json_schema=Plan)
    assert result.parsed == Plan(name="p", steps=[]) and result.attempts == 3
    second, third = llm_server.chat_requests[1], llm_server.chat_requests[2]
    assert "no JSON object" in second.last_user
    assert "steps: Field required" in third.last_user
    assert total.requests == 3


def test_structured_output_that_never_parses(llm_server: ScriptedLLMServer,
                                             llm_config: LLMConfig) -> None:
    llm_server.push("no", "still no", "never")
    with pytest.raises(LLMOutputError, match="no valid Plan in 3 replies") as caught:
        chat(llm_config, json_schema=Plan)
    assert caught.value.text == "never"


def test_a_server_without_response_format_is_asked_on_the_prompt(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    def answer(request: RecordedRequest) -> Reply | str:
        if "response_format" in request.body:
            return Reply(status=400, error="response_format is not supported")
        return '{"name": "x", "steps": ["y"]}'

    llm_server.responder = answer

    async def go() -> list[Plan]:
        async with LLMClient(llm_config) as client:
            first = await client.chat(USER, json_schema=Plan)
            second = await client.chat(USER, json_schema=Plan)
            assert first.parsed is not None and second.parsed is not None
            return [first.parsed, second.parsed]

    assert asyncio.run(go()) == [Plan(name="x", steps=["y"])] * 2
    assert ["response_format" in r.body for r in llm_server.chat_requests] == \
        [True, False, False]


@pytest.mark.parametrize(("text", "value"), [
    ('{"a": 1}', {"a": 1}),
    ('Here:\n```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
    ('```\n{"a": 2}\n```', {"a": 2}),
    ('The answer is {"a": 3} as requested. {"b": 4}', {"a": 3}),
    ('<think>{"no": 1}</think>\n{"yes": 1}', {"yes": 1}),
    ('```json\n{"unclosed fence": true}', {"unclosed fence": True}),
])
def test_extract_json(text: str, value: Any) -> None:
    assert extract_json(text) == value


def test_extract_json_without_json() -> None:
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("I cannot do that.")


# -------------------------------------------------------- usage, embeddings
def test_usage_per_item_and_in_total(llm_server: ScriptedLLMServer,
                                     llm_config: LLMConfig) -> None:
    llm_server.push(*[Reply("x", prompt_tokens=10, completion_tokens=1)] * 3)

    async def go() -> tuple[Usage, Usage, Usage]:
        first, second = Usage(), Usage()
        async with LLMClient(llm_config) as client:
            await client.chat(USER, usage=first)
            await client.chat(USER, usage=second)
            await client.chat(USER, usage=second)
            return first, second, client.usage

    first, second, total = asyncio.run(go())
    assert (first.total_tokens, second.total_tokens, total.total_tokens) == (11, 22, 33)
    assert Usage.from_json(json.loads(json.dumps(total.to_json()))) == total
    assert first + second == total


def test_concurrency_is_bounded(llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    config = replace(llm_config, concurrency=2)
    active = 0
    peak = 0

    def answer(request: RecordedRequest) -> Reply | str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        llm_server.wait(0.05)
        active -= 1
        return "done"

    llm_server.responder = answer

    async def go() -> list[str]:
        async with LLMClient(config) as client:
            results = await asyncio.gather(*[client.chat(USER) for _ in range(6)])
            return [r.text for r in results]

    assert asyncio.run(go()) == ["done"] * 6
    assert peak == 2


def test_embeddings_in_order_and_in_batches(llm_server: ScriptedLLMServer,
                                            llm_config: LLMConfig) -> None:
    config = replace(llm_config, embed_batch=2, embedding_model="embedder")
    llm_server.push_embedding(Reply(status=429))
    texts = ["alpha", "beta", "gamma"]

    async def go() -> tuple[list[list[float]], Usage]:
        async with LLMClient(config) as client:
            item = Usage()
            return await client.embed(texts, usage=item), item

    vectors, usage = asyncio.run(go())
    assert vectors == [hashed_embedding(t) for t in texts]
    calls = [r for r in llm_server.requests if r.path.endswith("/embeddings")]
    assert [c.body["input"] for c in calls] == [["alpha", "beta"], ["alpha", "beta"], ["gamma"]]
    assert calls[0].body["model"] == "embedder" and usage.retries == 1
    assert usage.prompt_tokens == 3
