"""An asynchronous client for any OpenAI-compatible server, with retries and token accounting.

Every front end that talks to models (``llm_frontend``, rollouts, RL, the adapters, port)
does so through this module, a service below them all, so the rules about endpoints,
timeouts, retries and costs live in one place. It wraps
the official ``openai`` SDK (its own retries are switched off: the loop here
decides, and is tested against a scripted local server).

Configuration::

    config = LLMConfig.from_env_and_args(base_url=args.base_url, model=args.model)

``from_env_and_args`` takes what the command line gave and falls back on the
environment: ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (the SDK's own
variables) and ``WORLDSPEC_MODEL`` for the model name. With no base URL and no
key it raises :class:`LLMConfigError` with a message fit for the user. A local
server (vLLM, llama.cpp, Ollama, ...) needs no key.

Calls::

    async with LLMClient(config) as client:
        item = Usage()                                   # tokens of one work item
        reply = await client.chat(messages, usage=item)  # reply.text
        plan = await client.chat(messages, json_schema=Plan, usage=item)
        plan.parsed                                      # a validated Plan instance
        vectors = await client.embed(["first text", "second text"])
    client.usage                                         # totals over every call

- ``chat`` sends ``messages`` (``[{"role": "system"|"user"|"assistant",
  "content": str}]``) and returns a :class:`ChatResult` (``text``, ``parsed``,
  ``usage``, ``finish_reason``, ``attempts``). With ``json_schema`` (a pydantic
  model class) it asks for structured output (``response_format`` of type
  ``json_schema``, plus the schema in the prompt), extracts the JSON from the
  reply even when it is wrapped in prose or code fences, validates it, and when
  that fails asks again with the validation error (``parse_attempts`` times in
  all) before raising :class:`LLMOutputError`. A server that rejects
  ``response_format`` with status 400 is asked again without it, once; the
  client remembers and does not send it again.
- ``embed`` returns one vector per text, in order, in batches of
  ``embed_batch`` texts.
- At most ``concurrency`` requests are in flight per client; more callers wait.
- Each attempt fails after ``timeout`` seconds without progress (connecting,
  or waiting for the answer), and after ``2 * timeout + 1`` seconds in any
  case (a server that trickles bytes). Connection errors, timeouts
  and statuses 408, 409, 429 and 5xx are retried up to ``max_retries`` times
  with exponential backoff and jitter (``backoff_base * 2**n``, at most
  ``backoff_max`` seconds; a ``Retry-After`` header is honoured within that
  bound). Any other status fails at once. Giving up raises
  :class:`LLMRequestError`.
- Token accounting: every response's ``usage`` is added to ``client.usage`` and
  to the ``usage`` record passed in (one per work item), so a batch reports the
  cost of each item and of the whole run. Retries are counted too.

All errors this module raises derive from :class:`LLMError`; callers catch
that one class to turn any failure into a clear message (never a traceback).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, Literal, TypeVar, cast, overload

import httpx
import openai
from pydantic import BaseModel, ValidationError

from worldspec.services.reasoning import strip_reasoning

__all__ = [
    "DEFAULT_OPENAI_URL",
    "RETRY_STATUSES",
    "ChatResult",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "LLMOutputError",
    "LLMRequestError",
    "Message",
    "StructuredMode",
    "Usage",
    "extract_json",
    "strip_reasoning",
    "wire_safe",
]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def wire_safe(value: Any) -> Any:
    """``value`` (request parameters: messages, tools) with each lone surrogate in its texts
    replaced by U+FFFD, the replacement character.

    A model may answer with a lone surrogate (``"\\ud800"``: valid JSON, not Unicode); it is
    kept as it is in what worldspec records, but the SDK writes request bodies as UTF-8,
    which cannot hold one, so the conversation sent back carries U+FFFD in its place, as
    any UTF-8 decoder would show it.
    """
    if isinstance(value, str):
        return value if value.isascii() else _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {wire_safe(k): wire_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire_safe(v) for v in value]
    return value

#: Where requests go when only ``OPENAI_API_KEY`` is configured.
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"

#: HTTP statuses worth another try besides every 5xx: timeout, conflict, rate limit.
RETRY_STATUSES = frozenset({408, 409, 429})

#: ``json_schema``: send the schema as ``response_format`` (OpenAI, vLLM, SGLang);
#: ``json_object``: ask only for "some JSON object"; ``none``: rely on the prompt alone.
StructuredMode = Literal["json_schema", "json_object", "none"]

#: One chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``.
Message = Mapping[str, str]

ModelT = TypeVar("ModelT", bound=BaseModel)
ParsedT = TypeVar("ParsedT")
ResultT = TypeVar("ResultT")


class LLMError(Exception):
    """Anything that went wrong talking to the model; the message is meant for the user."""


class LLMConfigError(LLMError):
    """The endpoint, model or a limit is missing or invalid."""


class LLMRequestError(LLMError):
    """A request failed for good: a status that is not retried, or retries ran out."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class LLMOutputError(LLMError):
    """The model's reply could not be turned into the structured output asked for."""

    def __init__(self, message: str, *, text: str) -> None:
        super().__init__(message)
        self.text = text


# ------------------------------------------------------------------ config
def _positive_env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


@dataclass(frozen=True)
class LLMConfig:
    """Where the model is and how to talk to it. Build one with :meth:`from_env_and_args`."""

    base_url: str
    model: str
    api_key: str = field(default="EMPTY", repr=False)
    #: seconds one attempt may take, connection and reading included
    timeout: float = 120.0
    #: further attempts after the first for retryable failures
    max_retries: int = 4
    #: requests in flight at once through one client
    concurrency: int = 8
    #: the embedding model; ``None`` uses :attr:`model`
    embedding_model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    structured: StructuredMode = "json_schema"
    #: replies asked for in all when structured output does not parse
    parse_attempts: int = 3
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    embed_batch: int = 64

    def __post_init__(self) -> None:
        if not re.match(r"^https?://[^\s/]+", self.base_url):
            raise LLMConfigError(f"the base URL must start with http:// or https://, "
                                 f"not {self.base_url!r}")
        if not self.model.strip():
            raise LLMConfigError("the model name is empty")
        if not self.timeout > 0:
            raise LLMConfigError("the timeout must be a positive number of seconds")
        if self.max_retries < 0:
            raise LLMConfigError("the number of retries cannot be negative")
        if self.concurrency < 1:
            raise LLMConfigError("the concurrency must be at least 1")
        if self.parse_attempts < 1 or self.embed_batch < 1:
            raise LLMConfigError("parse_attempts and embed_batch must be at least 1")
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise LLMConfigError("backoff times cannot be negative")

    @classmethod
    def from_env_and_args(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        concurrency: int | None = None,
        embedding_model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        structured: StructuredMode | None = None,
        env: Mapping[str, str] | None = None,
    ) -> LLMConfig:
        """A config from explicit values, falling back on the environment.

        ``base_url``: argument, else ``OPENAI_BASE_URL``, else api.openai.com when
        ``OPENAI_API_KEY`` is set. ``model``: argument, else ``WORLDSPEC_MODEL``.
        ``api_key``: argument, else ``OPENAI_API_KEY``, else a placeholder (local
        servers ignore it). Arguments left ``None`` take the defaults above.
        """
        environ: Mapping[str, str] = os.environ if env is None else env
        key = api_key or _positive_env(environ, "OPENAI_API_KEY")
        url = base_url or _positive_env(environ, "OPENAI_BASE_URL")
        if url is None:
            if key is None:
                raise LLMConfigError(
                    "no model endpoint configured: pass --base-url URL (for example "
                    "http://localhost:8000/v1 for a vLLM server) or set OPENAI_BASE_URL; "
                    "or set OPENAI_API_KEY to use api.openai.com")
            url = DEFAULT_OPENAI_URL
        name = model or _positive_env(environ, "WORLDSPEC_MODEL")
        if name is None:
            raise LLMConfigError("no model named: pass --model NAME or set WORLDSPEC_MODEL")
        values: dict[str, Any] = {
            "timeout": timeout, "max_retries": max_retries, "concurrency": concurrency,
            "embedding_model": embedding_model, "temperature": temperature,
            "max_tokens": max_tokens, "seed": seed, "structured": structured,
        }
        given = {k: v for k, v in values.items() if v is not None}
        return cls(base_url=url.rstrip("/"), model=name, api_key=key or "EMPTY", **given)


# ------------------------------------------------------------------- usage
@dataclass
class Usage:
    """Tokens and requests spent: for one call, one work item, or a whole run."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: attempts that failed and were tried again
    retries: int = 0
    #: of ``prompt_tokens``, those the server read from its prompt cache (its
    #: ``usage.prompt_tokens_details.cached_tokens``; 0 when it does not say)
    cached_tokens: int = 0
    #: of ``requests`` and the tokens, those answered from a request journal (recorded by
    #: an earlier run, not spent in this one)
    replayed_requests: int = 0
    replayed_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def spent_tokens(self) -> int:
        """The tokens spent by this run: the total less those replayed from a journal."""
        return self.total_tokens - self.replayed_tokens

    def add(self, other: Usage) -> None:
        """Add ``other`` into this record."""
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.retries += other.retries
        self.cached_tokens += other.cached_tokens
        self.replayed_requests += other.replayed_requests
        self.replayed_tokens += other.replayed_tokens

    def __add__(self, other: Usage) -> Usage:
        total = Usage()
        total.add(self)
        total.add(other)
        return total

    def to_json(self) -> dict[str, int]:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "retries": self.retries,
                "cached_tokens": self.cached_tokens,
                "replayed_requests": self.replayed_requests,
                "replayed_tokens": self.replayed_tokens}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        """The inverse of :meth:`to_json`; missing or bad numbers count as 0."""
        def number(name: str) -> int:
            value = data.get(name, 0)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return cls(number("requests"), number("prompt_tokens"), number("completion_tokens"),
                   number("retries"), number("cached_tokens"), number("replayed_requests"),
                   number("replayed_tokens"))


@dataclass(frozen=True)
class ChatResult(Generic[ParsedT]):
    """One chat answer: its text, the parsed object (with ``json_schema``) and its cost."""

    text: str
    parsed: ParsedT
    usage: Usage
    finish_reason: str | None = None
    #: HTTP attempts made, retries and re-asks included
    attempts: int = 1


# ------------------------------------------------------------- extraction
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON object or array in a reply: bare, in a code fence, or inside prose.

    Raises ``ValueError`` when there is none. Only ``json.loads`` is used: the
    text is data, never code.
    """
    body = strip_reasoning(text)
    candidates = [body]
    candidates += [m.group(2) for m in _FENCE.finditer(body)
                   if m.group(1).lower() in ("", "json", "jsonc")]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", body):
        try:
            value, _ = decoder.raw_decode(body, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) or (isinstance(value, list) and value):
            return value
    raise ValueError("the reply holds no JSON object")


# ------------------------------------------------------------------ client
class LLMClient:
    """Chat and embedding calls with bounded concurrency, retries and token accounting.

    Use it as an async context manager, or call :meth:`aclose` when done. One
    client may be shared by many concurrent tasks of one event loop.
    """

    def __init__(self, config: LLMConfig, *, http_client: httpx.AsyncClient | None = None
                 ) -> None:
        self.config = config
        #: everything this client spent, over all calls
        self.usage = Usage()
        self._sdk = openai.AsyncOpenAI(base_url=config.base_url, api_key=config.api_key,
                                       timeout=config.timeout, max_retries=0,
                                       http_client=http_client)
        self._slots: asyncio.Semaphore | None = None
        self._response_format_ok = config.structured != "none"
        self._random = random.Random()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._sdk.close()

    # ------------------------------------------------------------ chat
    @overload
    async def chat(self, messages: Sequence[Message], *, json_schema: None = None,
                   usage: Usage | None = None, temperature: float | None = None,
                   max_tokens: int | None = None) -> ChatResult[None]: ...

    @overload
    async def chat(self, messages: Sequence[Message], *, json_schema: type[ModelT],
                   usage: Usage | None = None, temperature: float | None = None,
                   max_tokens: int | None = None) -> ChatResult[ModelT]: ...

    async def chat(self, messages: Sequence[Message], *,
                   json_schema: type[BaseModel] | None = None, usage: Usage | None = None,
                   temperature: float | None = None, max_tokens: int | None = None
                   ) -> ChatResult[Any]:
        """Send ``messages``; with ``json_schema``, parse and validate the reply as that model.

        ``usage`` (one record per work item) receives this call's tokens as
        well as :attr:`usage`. Raises :class:`LLMRequestError` when the server
        cannot be reached or keeps failing, :class:`LLMOutputError` when
        structured output never validates.
        """
        spent = Usage()
        try:
            if json_schema is None:
                text, finish, attempts = await self._complete(list(messages), None, spent,
                                                              temperature, max_tokens)
                return ChatResult(text, None, spent, finish, attempts)
            return await self._chat_structured(list(messages), json_schema, spent,
                                               temperature, max_tokens)
        finally:
            self.usage.add(spent)
            if usage is not None:
                usage.add(spent)

    async def _chat_structured(self, messages: list[Message], model: type[BaseModel],
                               spent: Usage, temperature: float | None,
                               max_tokens: int | None) -> ChatResult[Any]:
        schema = model.model_json_schema()
        instruction = ("Reply with one JSON object, and nothing else, that matches this JSON "
                       f"schema:\n{json.dumps(schema, sort_keys=True)}")
        conversation = _with_system_note(messages, instruction)
        attempts = 0
        text = ""
        problem = ""
        for _ in range(self.config.parse_attempts):
            text, finish, used = await self._complete(conversation, model, spent,
                                                      temperature, max_tokens)
            attempts += used
            try:
                parsed = model.model_validate(extract_json(text))
            except ValueError as exc:  # ValidationError is a ValueError
                problem = _describe_parse_error(exc)
            else:
                return ChatResult(text, parsed, spent, finish, attempts)
            conversation = [*conversation, {"role": "assistant", "content": text},
                            {"role": "user", "content":
                             f"That reply cannot be used: {problem}. Reply again with only the "
                             "JSON object, matching the schema exactly."}]
        raise LLMOutputError(f"the model gave no valid {model.__name__} in "
                             f"{self.config.parse_attempts} replies: {problem}", text=text)

    async def _complete(self, messages: list[Message], schema: type[BaseModel] | None,
                        spent: Usage, temperature: float | None, max_tokens: int | None
                        ) -> tuple[str, str | None, int]:
        """One completion, retried as configured: the text, finish reason and attempts."""
        cfg = self.config
        params: dict[str, Any] = {"model": cfg.model, "messages": messages}
        chosen_temperature = temperature if temperature is not None else cfg.temperature
        if chosen_temperature is not None:
            params["temperature"] = chosen_temperature
        chosen_max = max_tokens if max_tokens is not None else cfg.max_tokens
        if chosen_max is not None:
            params["max_tokens"] = chosen_max
        if cfg.seed is not None:
            params["seed"] = cfg.seed
        wants_format = schema is not None and self._response_format_ok
        if wants_format and schema is not None:
            params["response_format"] = _response_format(schema, cfg.structured)

        params = wire_safe(params)

        async def send() -> Any:
            return await self._sdk.chat.completions.create(**params)

        try:
            response, attempts = await self._with_retries("chat completion", send, spent)
        except LLMRequestError as exc:
            if not (wants_format and exc.status == 400):
                raise
            # The server does not take response_format: ask again on the prompt alone.
            self._response_format_ok = False
            params.pop("response_format", None)
            response, more = await self._with_retries("chat completion", send, spent)
            attempts = exc.attempts + more
        _count_tokens(getattr(response, "usage", None), spent)
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LLMRequestError("the server answered without any choice", attempts=attempts)
        message = choices[0].message
        text = getattr(message, "content", None) or ""
        if not text:
            text = getattr(message, "reasoning_content", None) or ""
        return str(text), choices[0].finish_reason, attempts

    # ------------------------------------------------------------ embed
    async def embed(self, texts: Sequence[str], *, usage: Usage | None = None
                    ) -> list[list[float]]:
        """One embedding vector per text, in the order given."""
        model = self.config.embedding_model or self.config.model
        spent = Usage()
        vectors: list[list[float]] = []
        try:
            for start in range(0, len(texts), self.config.embed_batch):
                batch = list(texts[start:start + self.config.embed_batch])

                async def send(batch: list[str] = batch) -> Any:
                    return await self._sdk.embeddings.create(model=model, input=batch,
                                                             encoding_format="float")

                response, _ = await self._with_retries("embedding", send, spent)
                _count_tokens(getattr(response, "usage", None), spent)
                rows = sorted(response.data, key=lambda row: row.index)
                if len(rows) != len(batch):
                    raise LLMRequestError(f"the server returned {len(rows)} embeddings for "
                                          f"{len(batch)} texts")
                vectors += [[float(x) for x in row.embedding] for row in rows]
        finally:
            self.usage.add(spent)
            if usage is not None:
                usage.add(spent)
        return vectors

    # ---------------------------------------------------------- retries
    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        cfg = self.config
        if retry_after is not None:
            return min(max(retry_after, 0.0), cfg.backoff_max)
        delay: float = min(cfg.backoff_base * (2 ** attempt), cfg.backoff_max)
        return delay * (0.5 + self._random.random() / 2)

    async def _with_retries(self, what: str, send: Callable[[], Awaitable[ResultT]],
                            spent: Usage) -> tuple[ResultT, int]:
        """``send()`` under the concurrency bound, retried on transient failures."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.config.concurrency)
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                async with self._slots:
                    spent.requests += 1
                    async with asyncio.timeout(self.config.timeout * 2 + 1):
                        return await send(), attempt + 1
            except openai.APIStatusError as exc:
                status = exc.status_code
                reason = f"status {status}: {_error_text(exc)}"
                retryable = status in RETRY_STATUSES or status >= 500
                retry_after = _retry_after(exc.response)
            except (openai.APITimeoutError, TimeoutError):
                status, retryable = None, True
                reason = f"no answer within {self.config.timeout:g} s"
            except openai.APIConnectionError as exc:
                status, reason, retryable = None, f"cannot connect: {_cause(exc)}", True
            except (openai.APIResponseValidationError, ValueError) as exc:
                status, reason, retryable = None, f"malformed response: {exc}", True
            if not retryable or attempt >= self.config.max_retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise LLMRequestError(f"{what} failed{tries} ({self.config.base_url}): {reason}",
                                      status=status, attempts=attempt + 1)
            spent.retries += 1
            await asyncio.sleep(self._backoff(attempt, retry_after))
            attempt += 1


# ---------------------------------------------------------------- helpers
def _with_system_note(messages: list[Message], note: str) -> list[Message]:
    """``messages`` with ``note`` appended to the system message (one is added if none)."""
    if messages and messages[0].get("role") == "system":
        first = {"role": "system", "content": f"{messages[0].get('content', '')}\n\n{note}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


def _response_format(schema: type[BaseModel], mode: StructuredMode) -> dict[str, Any]:
    if mode == "json_object":
        return {"type": "json_object"}
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "output"
    return {"type": "json_schema",
            "json_schema": {"name": name, "schema": schema.model_json_schema(), "strict": False}}


def _describe_parse_error(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for error in exc.errors()[:5]:
            where = ".".join(str(x) for x in error["loc"]) or "the object"
            parts.append(f"{where}: {error['msg']}")
        return "; ".join(parts)
    return str(exc)


def _count_tokens(reported: Any, spent: Usage) -> None:
    if reported is None:
        return
    prompt = getattr(reported, "prompt_tokens", 0) or 0
    completion = getattr(reported, "completion_tokens", 0) or 0
    details = getattr(reported, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", 0) or 0
    spent.prompt_tokens += int(prompt)
    spent.completion_tokens += int(completion)
    spent.cached_tokens += int(cached)


def _retry_after(response: httpx.Response | None) -> float | None:
    if response is None:
        return None
    value = response.headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if value:
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return cast(str, inner["message"])
        if isinstance(inner, str):
            return inner
    return exc.message


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return str(cause) if cause is not None and str(cause) else str(exc)
