"""LlmClient against a misbehaving server, through the real openai client: every failure costs at
most that call, retries happen where they should and nowhere else."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from services.evolver.contract import TOOL_SPECS
from services.evolver.llm import (
    FailureKind,
    LlmClient,
    LlmOutcome,
    LlmRequest,
    MemoryBudget,
    OutcomeStatus,
)
from tests.support.fake_llm import (
    FakeLlmServer,
    completion,
    drop_before_answer,
    drop_mid_body,
    error,
    hang,
    make_request,
    send_json,
    send_raw,
    tool_call,
    trickle,
)

MakeClient = Callable[..., LlmClient]


def test_good_answer_costs_what_usage_says(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(send_json(completion("fine", usage=(1000, 500))))
    outcome = make_client().complete(make_request(temperature=0.3))
    assert outcome.status is OutcomeStatus.OK
    assert outcome.ok
    assert outcome.text == "fine"
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (1000, 500)
    assert outcome.cost_usd == pytest.approx(0.001 + 0.001)
    assert not outcome.usage_estimated
    assert outcome.attempts == 1
    assert outcome.failure is None
    assert outcome.model == "test-model"
    assert outcome.finish_reason == "stop"
    sent = fake.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["max_tokens"] == 100
    assert sent["body"]["temperature"] == 0.3
    assert sent["headers"]["authorization"] == "Bearer test-key-0123456789"


def test_missing_usage_is_estimated(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(send_json(completion("y" * 400, usage=None)))
    request = make_request()
    outcome = make_client().complete(request)
    assert outcome.ok
    assert outcome.usage_estimated
    assert outcome.prompt_tokens == request.estimated_prompt_tokens()
    assert outcome.completion_tokens == 100  # 400 characters / 4
    assert outcome.cost_usd > 0


def test_rate_limit_honours_retry_after_up_to_the_cap(
    fake: FakeLlmServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    fake.script(
        error(429, "slow down", {"Retry-After": "2"}),
        error(429, "slow down more", {"Retry-After": "1000"}),
        send_json(completion("at last")),
    )
    outcome = make_client(retry_after_cap_s=5.0).complete(make_request())
    assert outcome.ok
    assert outcome.text == "at last"
    assert outcome.attempts == 3
    assert fake.count == 3
    assert sleeps[0] == pytest.approx(2.0)
    assert sleeps[1] == pytest.approx(5.0)


def test_rate_limited_to_the_end(fake: FakeLlmServer, make_client: MakeClient, sleeps: list[float]) -> None:
    fake.script(*[error(429, "no") for _ in range(5)])
    outcome = make_client(max_attempts=3).complete(make_request())
    assert outcome.failure is FailureKind.RATE_LIMITED
    assert outcome.status is OutcomeStatus.FAILED
    assert outcome.attempts == 3
    assert fake.count == 3
    assert len(sleeps) == 2
    assert outcome.cost_usd == 0
    assert "after 3 attempts" in (outcome.error or "")


def test_server_errors_back_off_exponentially(
    fake: FakeLlmServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    fake.script(*[error(500, "boom") for _ in range(4)], error(503, "never reached"))
    outcome = make_client().complete(make_request())
    assert outcome.failure is FailureKind.SERVER_ERROR
    assert outcome.attempts == 4
    assert fake.count == 4
    assert len(sleeps) == 3
    for attempt, delay in enumerate(sleeps, start=1):
        ceiling = 0.01 * 2 ** (attempt - 1)
        assert ceiling / 2 <= delay <= ceiling
    assert "500" in (outcome.error or "")


def test_server_error_then_success(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(error(502, "bad gateway"), send_json(completion("ok", usage=(10, 10))))
    budget = MemoryBudget(max_usd=1.0)
    outcome = make_client(budget=budget).complete(make_request())
    assert outcome.ok
    assert outcome.attempts == 2
    assert budget.calls == 1
    assert budget.spent_usd == pytest.approx(outcome.cost_usd)
    assert budget.tokens == 20


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_client_errors_are_not_retried(
    fake: FakeLlmServer, make_client: MakeClient, sleeps: list[float], status: int
) -> None:
    fake.script(error(status, "Incorrect API key provided: sk-abcdef0123456789. test-key-0123456789"))
    outcome = make_client().complete(make_request())
    assert outcome.failure is FailureKind.CLIENT_ERROR
    assert outcome.attempts == 1
    assert fake.count == 1
    assert sleeps == []
    assert str(status) in (outcome.error or "")
    assert "sk-abcdef" not in (outcome.error or "")
    assert "test-key-0123456789" not in (outcome.error or "")


def test_hanging_server_times_out_each_attempt(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(hang(10), hang(10))
    outcome = make_client(max_attempts=2).complete(make_request(timeout_s=0.3))
    assert outcome.failure is FailureKind.TIMEOUT
    assert outcome.attempts == 2
    assert fake.count == 2
    assert outcome.latency_ms < 5000


def test_trickling_answer_is_cut_at_the_deadline(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(trickle(10))
    outcome = make_client(max_attempts=1).complete(make_request(timeout_s=0.5))
    assert outcome.failure is FailureKind.TIMEOUT
    assert fake.count == 1
    assert outcome.latency_ms < 3000


def test_dropped_connection_is_retried(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(drop_mid_body(), drop_before_answer(), send_json(completion("survived")))
    outcome = make_client().complete(make_request())
    assert outcome.ok
    assert outcome.text == "survived"
    assert outcome.attempts == 3
    assert fake.count == 3


def test_dropped_connections_to_the_end(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(drop_mid_body(), drop_mid_body())
    outcome = make_client(max_attempts=2).complete(make_request())
    assert outcome.failure is FailureKind.CONNECTION
    assert outcome.attempts == 2
    assert outcome.cost_usd == 0


_COMPLETION = json.dumps(completion("a complete answer")).encode()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"id": "x", "choices": [{"message": ', "not valid JSON"),
        (_COMPLETION[: len(_COMPLETION) // 2], "not valid JSON"),
        (b"<html><body>Bad gateway</body></html>", "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
        (b'{"choices": [{"message": {"content": NaN}}]}', "not valid JSON"),
        (b"[1, 2, 3]", "JSON array"),
        (b'"just a string"', "JSON string"),
        (b'{"object": "list", "data": []}', "not a chat completion"),
        (b'{"choices": []}', "no choices"),
        (b'{"choices": "many"}', "no choices"),
        (b'{"error": {"message": "model overloaded"}}', "model overloaded"),
        (b'{"choices": [{"index": 0, "finish_reason": "stop"}]}', "no message"),
        (b'{"choices": [{"message": {"role": "assistant", "content": 42}}]}', "not text"),
        (json.dumps(completion("")).encode(), "empty answer"),
        (json.dumps(completion("   \n")).encode(), "empty answer"),
        (json.dumps(completion(None, finish_reason="length")).encode(), "empty answer"),
    ],
    ids=lambda value: str(value)[:40] if isinstance(value, bytes) else None,
)
def test_unusable_answers_fail_once_without_retry(
    fake: FakeLlmServer, make_client: MakeClient, sleeps: list[float], body: bytes, says: str
) -> None:
    fake.script(send_raw(body))
    outcome = make_client().complete(make_request())
    assert outcome.failure is FailureKind.BAD_RESPONSE
    assert outcome.status is OutcomeStatus.FAILED
    assert says in (outcome.error or ""), outcome.error
    assert outcome.attempts == 1
    assert fake.count == 1
    assert sleeps == []
    assert outcome.cost_usd > 0  # the server answered: the model ran, reported usage or not


def test_unusable_answer_with_usage_still_costs(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(send_json({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 1000}}))
    budget = MemoryBudget(max_usd=1.0)
    outcome = make_client(budget=budget).complete(make_request())
    assert outcome.failure is FailureKind.BAD_RESPONSE
    assert not outcome.usage_estimated
    assert outcome.cost_usd == pytest.approx(0.003)
    assert budget.spent_usd == pytest.approx(0.003)
    assert budget.tokens == 2000


def test_enormous_answer_is_capped_and_marked(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(send_json(completion("z" * 500_000)))
    outcome = make_client().complete(make_request())
    assert outcome.ok
    assert outcome.truncated
    assert len(outcome.text) == 200_000


def test_answer_cut_by_the_token_limit_is_marked(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(send_json(completion("def f(:", finish_reason="length")))
    outcome = make_client().complete(make_request())
    assert outcome.ok
    assert outcome.truncated
    assert outcome.finish_reason == "length"


def test_body_past_the_byte_cap_is_not_read(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(send_json(completion("z" * 500_000)))
    outcome = make_client(max_body_bytes=100_000).complete(make_request())
    assert outcome.failure is FailureKind.BAD_RESPONSE
    assert "larger than 100000 bytes" in (outcome.error or "")


def test_tool_calls_are_checked_against_the_tools_offered(
    fake: FakeLlmServer, make_client: MakeClient
) -> None:
    calls: list[Any] = [
        tool_call("c1", "evaluate_program", {"program_id": "p3"}),
        tool_call("c2", "delete_everything", {}),
        tool_call("c3", "spawn_child", "{not json"),
        tool_call("c4", "spawn_child", "[1, 2]"),
        tool_call("c5", "spawn_child", {"parent_id": "p1"}),
        tool_call("c6", "spawn_child", {"prompt": "x", "temperature": 2}),
        tool_call("c7", "evaluate_program", {"program_id": "x7"}),
        tool_call("c8", "modify_parameters", {"updates": {}}),
        tool_call("c9", "modify_parameters", {"updates": {"exploration_ratio": 3}}),
        tool_call("c10", "advance_generation", {"selected_ids": []}),
        tool_call("c11", "spawn_child", {"prompt": "x", "inspiration_ids": ["p1", "p2", "p3", "p4"]}),
        tool_call("c12", "modify_parameters", {"updates": {"quick_matches": 2.5}}),
        tool_call("c13", "terminate", {"reason": ""}),
        tool_call("c14", "modify_parameters", '{"updates": {"exploration_ratio": NaN}}'),
        {"id": "c15", "type": "function"},
        "not a call",
        tool_call("c1", "historical_trends", ""),
    ]
    fake.script(send_json(completion("Let me see.", tool_calls=calls)))
    outcome = make_client().complete(make_request(tools=TOOL_SPECS))
    assert outcome.ok
    assert outcome.text == "Let me see."
    assert [(c.id, c.name, c.arguments) for c in outcome.tool_calls] == [
        ("c1", "evaluate_program", {"program_id": "p3"}),
        ("c1_16", "historical_trends", {}),
    ]
    reasons = {r.id: r.reason for r in outcome.rejected_tool_calls}
    assert "unknown tool 'delete_everything'" in reasons["c2"]
    assert "not valid JSON" in reasons["c3"]
    assert "JSON array, not an object" in reasons["c4"]
    assert "missing required property 'prompt'" in reasons["c5"]
    assert "unknown property 'temperature'" in reasons["c6"]
    assert "does not match" in reasons["c7"]
    assert "fewer than 1 properties" in reasons["c8"]
    assert "above the maximum 1.0" in reasons["c9"]
    assert "fewer than 1 items" in reasons["c10"]
    assert "more than 3 items" in reasons["c11"]
    assert "expected integer" in reasons["c12"]
    assert "shorter than 1" in reasons["c13"]
    assert "not valid JSON" in reasons["c14"]
    assert "no function" in reasons["c15"]
    assert "is a string" in reasons["call_15"]
    # Every call the model made gets an id the engine can answer.
    ids = [call["id"] for call in outcome.assistant_message()["tool_calls"]]
    assert len(ids) == len(set(ids)) == len(calls)


def test_tool_calls_without_tools_offered_are_rejected(fake: FakeLlmServer, make_client: MakeClient) -> None:
    fake.script(send_json(completion(None, tool_calls=[tool_call("c1", "terminate", {"reason": "x"})])))
    outcome = make_client().complete(make_request())
    assert outcome.ok
    assert outcome.tool_calls == []
    assert "no tools were offered" in outcome.rejected_tool_calls[0].reason


def test_too_many_tool_calls(fake: FakeLlmServer, make_client: MakeClient) -> None:
    calls = [tool_call(f"c{i}", "historical_trends", {}) for i in range(5)]
    fake.script(send_json(completion(None, tool_calls=calls)))
    outcome = make_client(max_tool_calls=2).complete(make_request(tools=TOOL_SPECS))
    assert len(outcome.tool_calls) == 2
    assert len(outcome.rejected_tool_calls) == 3


def test_code_fences_in_odd_places_pass_through(fake: FakeLlmServer, make_client: MakeClient) -> None:
    text = (
        "Sure ```python inline``` here.\n  ```python\ndef act(obs):\n    return {}\n```\ntrailing"
        " ``` and an unclosed\n```py\nx = 1\n"
    )
    prompt = "Focus on aim.\n```python\n# keep this\n```\n<<<<<<< SEARCH"
    calls = [tool_call("c1", "spawn_child", {"prompt": prompt}), tool_call("c2", "python", {"code": "```"})]
    fake.script(send_json(completion(text, tool_calls=calls)))
    outcome = make_client().complete(make_request(tools=TOOL_SPECS))
    assert outcome.ok
    assert outcome.text == text
    assert [c.arguments for c in outcome.tool_calls] == [{"prompt": prompt}, {"code": "```"}]


def test_content_parts_are_joined(fake: FakeLlmServer, make_client: MakeClient) -> None:
    parts: Any = [{"type": "text", "text": "one "}, {"type": "text", "text": "two"}]
    fake.script(send_json(completion(parts)))
    outcome = make_client().complete(make_request())
    assert outcome.ok
    assert outcome.text == "one two"


def test_budget_refuses_before_any_request(fake: FakeLlmServer, make_client: MakeClient) -> None:
    budget = MemoryBudget(max_usd=0.0005)
    outcome = make_client(budget=budget).complete(make_request(max_tokens=1000))  # worst case > $0.002
    assert outcome.failure is FailureKind.BUDGET
    assert outcome.status is OutcomeStatus.FAILED
    assert outcome.attempts == 0
    assert outcome.cost_usd == 0
    assert (outcome.error or "").startswith("budget:")
    assert fake.count == 0
    assert budget.calls == 1
    assert budget.spent_usd == 0


def test_token_budget_refuses(fake: FakeLlmServer, make_client: MakeClient) -> None:
    budget = MemoryBudget(max_tokens=500)
    outcome = make_client(budget=budget).complete(make_request(max_tokens=1000))
    assert outcome.failure is FailureKind.BUDGET
    assert fake.count == 0


def test_budget_within_cap_lets_the_call_through(fake: FakeLlmServer, make_client: MakeClient) -> None:
    budget = MemoryBudget(max_usd=0.01, max_tokens=10_000)
    outcome = make_client(budget=budget).complete(make_request(max_tokens=1000))
    assert outcome.ok
    assert fake.count == 1
    assert budget.tokens == 120


def test_unknown_model_is_charged_the_default_price(fake: FakeLlmServer, make_client: MakeClient) -> None:
    budget = MemoryBudget(max_usd=0.05)
    # 1000 output tokens at the default $75/M could cost $0.075: refused.
    outcome = make_client(budget=budget).complete(make_request(model="mystery-model", max_tokens=1000))
    assert outcome.failure is FailureKind.BUDGET
    assert fake.count == 0


class _Ledger:
    """A budget that says yes `allowed` times, and remembers everything it was asked."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.checks: list[tuple[float, int]] = []
        self.recorded: list[LlmOutcome] = []

    def check(self, _request: LlmRequest, projected_cost_usd: float, projected_tokens: int) -> str | None:
        self.checks.append((projected_cost_usd, projected_tokens))
        return None if len(self.checks) <= self.allowed else "enough"

    def record(self, _request: LlmRequest, outcome: LlmOutcome) -> None:
        self.recorded.append(outcome)


def test_every_attempt_is_checked_and_the_call_recorded_once(
    fake: FakeLlmServer, make_client: MakeClient
) -> None:
    fake.script(error(500, "boom"), error(500, "boom"), send_json(completion()))
    ledger = _Ledger(allowed=2)
    request = make_request(max_tokens=1000)
    outcome = make_client().complete(request, budget=ledger)
    assert outcome.failure is FailureKind.BUDGET
    assert outcome.attempts == 2
    assert fake.count == 2
    assert len(ledger.checks) == 3
    assert ledger.recorded == [outcome]
    worst = request.estimated_prompt_tokens() * 1e-6 + 1000 * 2e-6
    assert ledger.checks[0][0] == pytest.approx(worst)
    assert ledger.checks[0][1] == request.estimated_prompt_tokens() + 1000


@pytest.mark.usefixtures("fake")
def test_a_budget_that_raises_does_not_escape(make_client: MakeClient) -> None:
    class Broken(_Ledger):
        def check(
            self, _request: LlmRequest, _projected_cost_usd: float, _projected_tokens: int
        ) -> str | None:
            raise RuntimeError("database gone")

    broken = Broken(0)
    outcome = make_client(budget=broken).complete(make_request())
    assert outcome.failure is FailureKind.CLIENT_ERROR
    assert "database gone" in (outcome.error or "")
    assert broken.recorded == [outcome]


def test_adapts_to_servers_wanting_max_completion_tokens(
    fake: FakeLlmServer, make_client: MakeClient
) -> None:
    fake.script(
        error(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
        ),
        error(400, "Unsupported value: 'temperature' does not support 0.3 with this model."),
        send_json(completion("adapted")),
        send_json(completion("remembered")),
    )
    client = make_client()
    outcome = client.complete(make_request(temperature=0.3))
    assert outcome.ok
    assert outcome.text == "adapted"
    assert outcome.attempts == 3
    last = fake.requests[2]["body"]
    assert last["max_completion_tokens"] == 100
    assert "max_tokens" not in last
    assert "temperature" not in last
    assert client.complete(make_request(temperature=0.3)).attempts == 1
    assert "max_completion_tokens" in fake.requests[3]["body"]


def test_the_key_is_never_shown(fake: FakeLlmServer) -> None:
    client = LlmClient(fake.url, "sk-secret-value")
    try:
        assert "sk-secret-value" not in repr(client)
        assert "set" in repr(client)
    finally:
        client.close()


def test_no_key_still_reaches_a_local_server(fake: FakeLlmServer) -> None:
    client = LlmClient(fake.url, None, max_attempts=1)
    try:
        assert client.complete(make_request()).ok
    finally:
        client.close()
