"""One OpenAI-compatible chat-completions endpoint, behind a call that never raises.

The evolver's engine speaks to models only through `complete(LlmRequest) -> LlmOutcome`. Whatever the
server does (rate limits, errors, hangs, dropped connections, bodies that are not completions,
answers far too long, tool calls that do not fit the tools offered), the engine gets an outcome
that says what happened and what it cost, so one bad answer costs at most that call.

Retries: 429, 5xx, 408, timeouts and dropped connections are retried with exponential backoff and
jitter (Retry-After honoured, up to a cap); other 4xx and unusable 200 answers are not.

Money: the client keeps no books. Before every attempt it asks the `Budget` whether the worst case
(prompt characters / 4 input tokens plus `max_tokens` output, at the model's price, plus what this
call already spent) may go ahead, and records the final outcome once per call. An attempt costs
what the server's usage says; a 200 answer without usage is estimated from characters / 4 (and the
outcome says so); a failed HTTP status or a transport failure costs nothing.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol, cast

import httpx

from services.evolver.llm.prices import Price, PriceLike, price_for
from services.evolver.llm.schema import validate
from shared.jsonsafe import safe_text
from shared.states import LlmRole as LlmRole  # re-exported: callers take it from the LLM layer

logger = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 4
DEFAULT_MAX_CHARS = 200_000
"""Longest answer text kept; a longer one is cut and marked truncated."""
DEFAULT_MAX_BODY_BYTES = 8_000_000
"""A response body past this is not read further (the answer text is capped far below it anyway)."""
DEFAULT_MAX_TOOL_CALLS = 16
"""Tool calls past this many in one answer are rejected, not executed."""
CHARS_PER_TOKEN = 4
_NO_KEY = "arena-no-key"
"""Sent when no key is configured: local servers accept anything, a real provider answers 401."""


class OutcomeStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"


class FailureKind(StrEnum):
    BUDGET = "budget"
    RATE_LIMITED = "rate_limited"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    SERVER_ERROR = "server_error"
    BAD_RESPONSE = "bad_response"
    CLIENT_ERROR = "client_error"


@dataclass(frozen=True)
class LlmRequest:
    """One model call. `key` names it stably within a run (e.g. "root:3:5") for logs and the books."""

    key: str
    role: LlmRole
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    max_tokens: int = 4096
    temperature: float | None = None
    timeout_s: float = 120.0

    def prompt_chars(self) -> int:
        chars = len(json.dumps(self.messages, ensure_ascii=False, default=str))
        if self.tools:
            chars += len(json.dumps(self.tools, ensure_ascii=False, default=str))
        return chars

    def estimated_prompt_tokens(self) -> int:
        return math.ceil(self.prompt_chars() / CHARS_PER_TOKEN)

    def tool_schemas(self) -> dict[str, dict[str, Any]]:
        """Function name -> JSON schema of its arguments, for the tools this request offers."""
        schemas: dict[str, dict[str, Any]] = {}
        for tool in self.tools or ():
            function = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                parameters = function.get("parameters")
                schemas[function["name"]] = parameters if isinstance(parameters, dict) else {}
        return schemas


@dataclass(frozen=True)
class ToolCall:
    """A tool call whose name is one of the tools offered and whose arguments fit its schema."""

    id: str
    name: str
    arguments: dict[str, Any]

    def to_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }


@dataclass(frozen=True)
class RejectedToolCall:
    """A tool call the model made that cannot be executed, and why (to tell the model)."""

    id: str
    name: str
    arguments: str
    reason: str

    def to_message(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}


@dataclass(frozen=True)
class LlmOutcome:
    status: OutcomeStatus
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    rejected_tool_calls: list[RejectedToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    usage_estimated: bool = False
    latency_ms: int = 0
    attempts: int = 0
    error: str | None = None
    failure: FailureKind | None = None
    truncated: bool = False
    """The text was cut: by the server's token limit (finish_reason "length") or by the client's cap."""
    finish_reason: str | None = None
    model: str | None = None
    """The model the server says answered (may differ from the one asked for)."""

    @property
    def ok(self) -> bool:
        return self.status is OutcomeStatus.OK

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def assistant_message(self) -> dict[str, Any]:
        """The assistant turn to append to the conversation: every tool call the model made,
        rejected ones included, since each needs a tool message answering its id."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        calls = [call.to_message() for call in self.tool_calls]
        calls += [call.to_message() for call in self.rejected_tool_calls]
        if calls:
            message["tool_calls"] = calls
        return message


class Budget(Protocol):
    """Keeps a run's books; the client asks before each attempt and reports once per call."""

    def check(self, request: LlmRequest, projected_cost_usd: float, projected_tokens: int) -> str | None:
        """A reason to refuse an attempt that could cost this much (worst case), or None."""
        ...

    def record(self, request: LlmRequest, outcome: LlmOutcome) -> None:
        """The final outcome of one call (tokens and cost summed over its attempts)."""
        ...


class MemoryBudget:
    """A budget kept in memory: a ceiling in USD and/or tokens (None: no ceiling)."""

    def __init__(self, max_usd: float | None = None, max_tokens: int | None = None) -> None:
        self.max_usd = max_usd
        self.max_tokens = max_tokens
        self.spent_usd = 0.0
        self.tokens = 0
        self.calls = 0
        self._lock = threading.Lock()

    def check(self, _request: LlmRequest, projected_cost_usd: float, projected_tokens: int) -> str | None:
        with self._lock:
            if self.max_usd is not None and self.spent_usd + projected_cost_usd > self.max_usd:
                return (
                    f"spending up to ${projected_cost_usd:.4f} more would pass the budget of "
                    f"${self.max_usd:.4f} (${self.spent_usd:.4f} spent)"
                )
            if self.max_tokens is not None and self.tokens + projected_tokens > self.max_tokens:
                return (
                    f"up to {projected_tokens} more tokens would pass the budget of {self.max_tokens} "
                    f"({self.tokens} used)"
                )
            return None

    def record(self, _request: LlmRequest, outcome: LlmOutcome) -> None:
        with self._lock:
            self.spent_usd += outcome.cost_usd
            self.tokens += outcome.total_tokens
            self.calls += 1


# ---------------------------------------------------------------- reading an answer


@dataclass
class Reply:
    """What one attempt got back from a transport."""

    body: object = None
    """The decoded JSON of a 200 answer (None with `failure` set when there is none usable)."""
    answered: bool = False
    """A 200 answer arrived, usable or not: the model ran, so the attempt costs something."""
    answer_chars: int = 0
    failure: FailureKind | None = None
    error: str | None = None
    retryable: bool = False
    retry_after_s: float | None = None
    adapt: dict[str, Any] | None = None
    """Request parameters to change and retry with at once (a server that wants other names)."""


@dataclass
class ParsedAnswer:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    rejected_tool_calls: list[RejectedToolCall] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    finish_reason: str | None = None
    truncated: bool = False
    model: str | None = None
    error: str | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _usage(body: dict[str, Any]) -> tuple[int, int] | None:
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if isinstance(prompt, int) and isinstance(completion, int) and not isinstance(prompt, bool):
        return max(prompt, 0), max(completion, 0)
    return None


def _content_text(content: object) -> str | None:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Some servers answer with content parts; the text parts are the answer.
        parts = [
            part.get("text", "") if isinstance(part, dict) else part if isinstance(part, str) else None
            for part in content
        ]
        if all(isinstance(part, str) for part in parts):
            return "".join(p for p in parts if isinstance(p, str))
    return None


def _parse_tool_call(
    index: int, raw: object, schemas: dict[str, dict[str, Any]] | None, max_chars: int
) -> ToolCall | RejectedToolCall:
    if not isinstance(raw, dict):
        return RejectedToolCall(f"call_{index}", "", "", f"tool call {index} is a {_type_name(raw)}")
    call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else f"call_{index}"
    function = raw.get("function")
    if not isinstance(function, dict):
        return RejectedToolCall(str(call_id), "", "", "the tool call has no function object")
    name = function.get("name")
    arguments = function.get("arguments")
    raw_text = (
        arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
    )[:max_chars]
    if not isinstance(name, str) or not name:
        return RejectedToolCall(str(call_id), "", raw_text, "the tool call names no function")
    if len(name) > 200:
        return RejectedToolCall(str(call_id), name[:200], raw_text, "the function name is too long")

    def reject(reason: str) -> RejectedToolCall:
        return RejectedToolCall(str(call_id), name, raw_text, reason)

    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        parsed: object = {}
    elif isinstance(arguments, dict):
        parsed = arguments
    elif isinstance(arguments, str):
        if len(arguments) > max_chars:
            return reject(f"the arguments are longer than {max_chars} characters")
        try:
            parsed = _loads(arguments)
        except ValueError as exc:
            return reject(f"the arguments are not valid JSON ({exc})")
    else:
        return reject(f"the arguments are a {_type_name(arguments)}, not a JSON string")
    if not isinstance(parsed, dict):
        return reject(f"the arguments are a JSON {_type_name(parsed)}, not an object")
    if not schemas:
        return reject("no tools were offered in this request")
    if name not in schemas:
        return reject(f"unknown tool {name!r}; the tools are: {', '.join(sorted(schemas))}")
    problem = validate(parsed, schemas[name])
    if problem:
        return reject(f"invalid arguments for {name}: {problem}")
    return ToolCall(str(call_id), name, parsed)


def parse_completion(
    body: object,
    request: LlmRequest,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
) -> ParsedAnswer:
    """Read a decoded chat.completion body; `error` says why it is unusable, if it is."""
    if not isinstance(body, dict):
        return ParsedAnswer(error=f"the answer is a JSON {_type_name(body)}, not a chat completion object")
    answer = ParsedAnswer(usage=_usage(body))
    if isinstance(body.get("model"), str):
        answer.model = body["model"][:200]
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        answer.error = _no_choices_error(body)
        return answer
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        answer.error = "the answer's first choice has no message"
        return answer
    if isinstance(choice.get("finish_reason"), str):
        answer.finish_reason = choice["finish_reason"]
    text = _content_text(message.get("content"))
    if text is None:
        answer.error = f"the message content is a {_type_name(message.get('content'))}, not text"
        return answer
    if len(text) > max_chars:
        text = text[:max_chars]
        answer.truncated = True
    if answer.finish_reason == "length":
        answer.truncated = True
    answer.text = text
    _add_tool_calls(answer, message, request, max_chars=max_chars, max_tool_calls=max_tool_calls)
    if not answer.text.strip() and not answer.tool_calls and not answer.rejected_tool_calls:
        answer.error = "empty answer: no text and no tool calls" + (
            f" (finish_reason {answer.finish_reason})" if answer.finish_reason else ""
        )
    return answer


def _no_choices_error(body: dict[str, Any]) -> str:
    """Why an answer without choices is unusable: the server's own error message when it sent one."""
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        said = _CONTROL.sub(" ", _KEYLIKE.sub("***", error["message"])).strip()
        return f"the server answered with an error: {safe_text(said, MAX_ERROR_CHARS)}"
    if "choices" not in body:
        return "the answer is not a chat completion (it has no choices)"
    return "the answer has no choices"


def _add_tool_calls(
    answer: ParsedAnswer,
    message: dict[str, Any],
    request: LlmRequest,
    *,
    max_chars: int,
    max_tool_calls: int,
) -> None:
    """Parse the message's tool calls (or legacy function_call) into the answer's accepted and
    rejected calls, with unique ids and at most max_tool_calls accepted."""
    raw_calls = message.get("tool_calls")
    if raw_calls is None and isinstance(message.get("function_call"), dict):
        raw_calls = [{"id": "call_function", "function": message["function_call"]}]
    if raw_calls is not None and not isinstance(raw_calls, list):
        answer.rejected_tool_calls.append(
            RejectedToolCall("call_0", "", "", f"tool_calls is a {_type_name(raw_calls)}, not a list")
        )
        raw_calls = []
    schemas = request.tool_schemas() if request.tools else None
    seen: set[str] = set()
    for index, raw in enumerate(raw_calls or []):
        parsed = _parse_tool_call(index, raw, schemas, max_chars)
        if parsed.id in seen:
            parsed = replace(parsed, id=f"{parsed.id}_{index}")
        seen.add(parsed.id)
        if isinstance(parsed, ToolCall) and len(answer.tool_calls) >= max_tool_calls:
            parsed = RejectedToolCall(
                parsed.id,
                parsed.name,
                json.dumps(parsed.arguments, ensure_ascii=False),
                f"more than {max_tool_calls} tool calls in one answer",
            )
        if isinstance(parsed, ToolCall):
            answer.tool_calls.append(parsed)
        else:
            answer.rejected_tool_calls.append(parsed)


# ---------------------------------------------------------------- the call loop


def _completion_chars(answer: ParsedAnswer) -> int:
    chars = len(answer.text)
    for call in answer.tool_calls:
        chars += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
    for rejected in answer.rejected_tool_calls:
        chars += len(rejected.name) + len(rejected.arguments)
    return chars


class BaseTransport:
    """The attempt loop shared by every transport: budget checks, retries with backoff, parsing,
    cost. A transport supplies `_exchange`, one attempt that returns a `Reply` and never raises."""

    def __init__(
        self,
        *,
        budget: Budget | None = None,
        price_overrides: Mapping[str, PriceLike] | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        retry_after_cap_s: float = 60.0,
        max_chars: int = DEFAULT_MAX_CHARS,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.budget = budget
        self.price_overrides = dict(price_overrides) if price_overrides else None
        self.max_attempts = max_attempts
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_cap_s = retry_after_cap_s
        self.max_chars = max_chars
        self.max_tool_calls = max_tool_calls
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._adapted: dict[str, dict[str, Any]] = {}

    def price(self, model: str) -> Price:
        return price_for(model, self.price_overrides)

    def _exchange(self, request: LlmRequest, params: dict[str, Any]) -> Reply:
        raise NotImplementedError

    def backoff_delay(self, attempt: int, retry_after_s: float | None) -> float:
        """Exponential backoff with equal jitter; at least the server's Retry-After (capped)."""
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (attempt - 1))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)
        if retry_after_s is not None:
            delay = max(delay, min(max(retry_after_s, 0.0), self.retry_after_cap_s))
        return delay

    def complete(self, call: LlmRequest, budget: Budget | None = None) -> LlmOutcome:
        """Run one call to the end; every failure becomes a FAILED outcome, never an exception."""
        books = budget if budget is not None else self.budget
        started = time.monotonic()
        try:
            outcome = self._complete(call, books)
        except Exception as exc:  # a bug here must not take the engine down with it
            logger.exception("llm call %s failed inside the client", call.key)
            outcome = LlmOutcome(
                OutcomeStatus.FAILED,
                error=f"internal error in the LLM client: {type(exc).__name__}: {exc}",
                failure=FailureKind.CLIENT_ERROR,
            )
        outcome = replace(outcome, latency_ms=round((time.monotonic() - started) * 1000))
        if books is not None:
            try:
                books.record(call, outcome)
            except Exception:
                logger.exception("recording llm call %s failed", call.key)
        return outcome

    def _complete(self, call: LlmRequest, budget: Budget | None) -> LlmOutcome:
        price = self.price(call.model)
        prompt_estimate = call.estimated_prompt_tokens()
        params = dict(self._adapted.get(call.model, {}))
        prompt_tokens = completion_tokens = 0
        cost = 0.0
        estimated = False
        attempts = 0
        reply: Reply | None = None

        def failed(kind: FailureKind, error: str) -> LlmOutcome:
            return LlmOutcome(
                OutcomeStatus.FAILED,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost,
                usage_estimated=estimated,
                attempts=attempts,
                error=error,
                failure=kind,
            )

        while attempts < self.max_attempts:
            if budget is not None:
                projected_cost = cost + price.cost(prompt_estimate, call.max_tokens)
                projected_tokens = prompt_tokens + completion_tokens + prompt_estimate + call.max_tokens
                refusal = budget.check(call, projected_cost, projected_tokens)
                if refusal:
                    return failed(FailureKind.BUDGET, f"budget: {refusal}")
            attempts += 1
            reply = self._exchange(call, params)
            if reply.answered:
                answer = (
                    parse_completion(
                        reply.body, call, max_chars=self.max_chars, max_tool_calls=self.max_tool_calls
                    )
                    if reply.failure is None
                    else ParsedAnswer(error=reply.error)
                )
                if answer.usage is not None:
                    used_prompt, used_completion = answer.usage
                else:
                    estimated = True
                    used_prompt = prompt_estimate
                    chars = _completion_chars(answer) if answer.error is None else reply.answer_chars
                    used_completion = min(math.ceil(chars / CHARS_PER_TOKEN), call.max_tokens)
                prompt_tokens += used_prompt
                completion_tokens += used_completion
                cost += price.cost(used_prompt, used_completion)
                if answer.error is not None:
                    logger.warning("llm call %s: unusable answer: %s", call.key, answer.error)
                    return failed(FailureKind.BAD_RESPONSE, answer.error)
                return LlmOutcome(
                    OutcomeStatus.OK,
                    text=answer.text,
                    tool_calls=answer.tool_calls,
                    rejected_tool_calls=answer.rejected_tool_calls,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    cost_usd=cost,
                    usage_estimated=estimated,
                    attempts=attempts,
                    truncated=answer.truncated,
                    finish_reason=answer.finish_reason,
                    model=answer.model,
                )
            if reply.adapt is not None and any(params.get(k) != v for k, v in reply.adapt.items()):
                params.update(reply.adapt)
                self._adapted[call.model] = dict(params)
                logger.info("llm call %s: retrying with %s", call.key, reply.adapt)
                continue
            if not reply.retryable or attempts >= self.max_attempts:
                break
            delay = self.backoff_delay(attempts, reply.retry_after_s)
            logger.info(
                "llm call %s: attempt %d failed (%s: %s); retrying in %.2fs",
                call.key,
                attempts,
                reply.failure,
                reply.error,
                delay,
            )
            self._sleep(delay)

        assert reply is not None
        error = reply.error or "the call failed"
        if attempts > 1:
            error = f"{error} (after {attempts} attempts)"
        return failed(reply.failure or FailureKind.CLIENT_ERROR, error)


# ---------------------------------------------------------------- the HTTP transport


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - datetime.now(UTC)).total_seconds()


def _is_timeout(exc: BaseException) -> bool:
    # The HTTP library under the openai client changes between releases; its timeout errors all
    # carry "Timeout" in a class name.
    return isinstance(exc, TimeoutError) or any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


_KEYLIKE = re.compile(r"\b(sk|key)-[A-Za-z0-9_\-*.]{6,}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
MAX_ERROR_CHARS = 200
"""The longest text of a server's error kept in the call log."""


MAX_ERROR_BODY_BYTES = 64 * 1024
"""An error body longer than this is not read for a message."""


def _error_object_message(response: Any) -> str | None:
    """The message of a model server's error body (`{"error": {"message": "..."}}`, or
    `{"error": "..."}` as some local servers write it); None for anything else."""
    try:
        raw = response.content
    except Exception:  # the body was never read (the SDK reads it before raising, but not always)
        return None
    if not isinstance(raw, bytes) or len(raw) > MAX_ERROR_BODY_BYTES:
        return None
    try:
        body = _loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return message if isinstance(message, str) and message.strip() else None


class LlmClient(BaseTransport):
    """An OpenAI-compatible endpoint reached with the `openai` client (its own retries off)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        budget: Budget | None = None,
        price_overrides: Mapping[str, PriceLike] | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        retry_after_cap_s: float = 60.0,
        max_chars: int = DEFAULT_MAX_CHARS,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        default_timeout_s: float = 120.0,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        """`http_client` is the one the worker gives it (shared.evolution.endpoint.pinned_http_client:
        the checked address only, no redirects); without one, a client that follows no redirect
        either, for local use and tests."""
        import openai

        super().__init__(
            budget=budget,
            price_overrides=price_overrides,
            max_attempts=max_attempts,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            retry_after_cap_s=retry_after_cap_s,
            max_chars=max_chars,
            max_tool_calls=max_tool_calls,
            sleep=sleep,
            rng=rng,
        )
        self.base_url = base_url
        self.max_body_bytes = max_body_bytes
        self._api_key = api_key or None
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or _NO_KEY,
            timeout=default_timeout_s,
            max_retries=0,
            # The SDK takes an `httpx` client as well as its newer `httpx2` one (its types name only
            # the latter); the pinned transport is written for `httpx`, as the bot client is.
            http_client=cast(
                Any,
                http_client
                or httpx.Client(follow_redirects=False, trust_env=False, timeout=default_timeout_s),
            ),
        )

    def __repr__(self) -> str:
        return f"LlmClient(base_url={self.base_url!r}, api_key={'set' if self._api_key else 'none'})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LlmClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _scrub(self, text: str, limit: int = MAX_ERROR_CHARS) -> str:
        """A short, single-line, printable text with no key in it, for the call log."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        text = _CONTROL.sub(" ", _KEYLIKE.sub("***", text))
        return safe_text(text.strip(), limit)

    def _status_message(self, exc: Any) -> str:
        """What a failed status may tell the run's owner: the status line, plus the message of an
        OpenAI-style error object (`{"error": {"message": ...}}`), short and sanitised. Any other
        body is never copied: it may come from something that is not a model server."""
        response = exc.response
        line = f"HTTP {response.status_code}"
        if response.reason_phrase:
            line += f" {self._scrub(str(response.reason_phrase), 60)}"
        if 300 <= response.status_code < 400:
            return f"{line}: the endpoint redirected, and redirects are not followed"
        message = _error_object_message(response)
        return f"{line}: {self._scrub(message)}" if message else line

    def _exchange(self, request: LlmRequest, params: dict[str, Any]) -> Reply:
        openai = self._openai
        token_param = str(params.get("token_param", "max_tokens"))
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": request.messages,
            token_param: request.max_tokens,
        }
        if request.tools:
            kwargs["tools"] = request.tools
        if request.temperature is not None and params.get("temperature", True):
            kwargs["temperature"] = request.temperature
        deadline = time.monotonic() + request.timeout_s
        create: Any = self._client.chat.completions.with_streaming_response.create
        try:
            with create(**kwargs, timeout=request.timeout_s) as response:
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_body_bytes:
                        return Reply(
                            answered=True,
                            answer_chars=size,
                            failure=FailureKind.BAD_RESPONSE,
                            error=f"the answer is larger than {self.max_body_bytes} bytes",
                        )
                    if time.monotonic() > deadline:
                        return Reply(
                            failure=FailureKind.TIMEOUT,
                            retryable=True,
                            error=f"no complete answer within {request.timeout_s:g}s",
                        )
                    chunks.append(chunk)
        except openai.APITimeoutError:
            return Reply(
                failure=FailureKind.TIMEOUT, retryable=True, error=f"no answer within {request.timeout_s:g}s"
            )
        except openai.RateLimitError as exc:
            return Reply(
                failure=FailureKind.RATE_LIMITED,
                retryable=True,
                retry_after_s=_retry_after(exc.response.headers),
                error=f"rate limited ({self._status_message(exc)})",
            )
        except openai.APIStatusError as exc:
            return self._status_reply(
                exc.status_code, self._status_message(exc), exc.response.headers, params
            )
        except openai.APIConnectionError as exc:
            return Reply(
                failure=FailureKind.CONNECTION,
                retryable=True,
                error=f"connection failed: {self._scrub(str(exc.__cause__ or exc))}",
            )
        except openai.OpenAIError as exc:
            return Reply(failure=FailureKind.CLIENT_ERROR, error=f"client error: {self._scrub(str(exc))}")
        except Exception as exc:  # raised while reading the body: the HTTP library's own errors
            if _is_timeout(exc):
                return Reply(
                    failure=FailureKind.TIMEOUT,
                    retryable=True,
                    error=f"the answer stalled past {request.timeout_s:g}s",
                )
            return Reply(
                failure=FailureKind.CONNECTION,
                retryable=True,
                error=f"the connection broke while reading the answer ({type(exc).__name__}: "
                f"{self._scrub(str(exc))})",
            )
        raw = b"".join(chunks)
        try:
            body = _loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return Reply(
                answered=True,
                answer_chars=len(raw),
                failure=FailureKind.BAD_RESPONSE,
                error=f"the answer is not valid JSON ({self._scrub(str(exc), 120)})",
            )
        return Reply(body=body, answered=True, answer_chars=len(raw))

    def _status_reply(
        self, status: int, message: str, headers: Mapping[str, str], params: dict[str, Any]
    ) -> Reply:
        if status >= 500:
            return Reply(
                failure=FailureKind.SERVER_ERROR,
                retryable=True,
                retry_after_s=_retry_after(headers),
                error=f"server error ({message})",
            )
        if status == 408:
            return Reply(failure=FailureKind.TIMEOUT, retryable=True, error=f"request timeout ({message})")
        reply = Reply(failure=FailureKind.CLIENT_ERROR, error=f"request refused ({message})")
        if status == 400:
            # Newer models take max_completion_tokens and refuse a temperature; the request is sent
            # again at once with what the server asks for (each change once).
            lowered = message.lower()
            if "max_completion_tokens" in lowered and params.get("token_param") != "max_completion_tokens":
                reply.adapt = {"token_param": "max_completion_tokens"}
            elif "temperature" in lowered and ("unsupported" in lowered or "not support" in lowered):
                reply.adapt = {"temperature": False}
        return reply
