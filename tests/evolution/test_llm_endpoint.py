"""An evolution run's LLM base URL obeys the bot endpoints' address policy: public addresses only,
unless development mode is on or an operator allows the host by name. Names resolve from a static
table here (nothing leaves the machine)."""

from __future__ import annotations

import pytest

from shared.config import Settings
from shared.evolution.endpoint import check_llm_endpoint
from shared.evolution.errors import LlmEndpointRefused

HOSTS = {
    "llm.public.test": ["203.0.114.7"],
    "ollama": ["10.1.2.3"],
    "rebind.test": ["8.8.8.8", "127.0.0.1"],
}


def settings(**overrides: object) -> Settings:
    base: dict[str, object] = {
        "dev_mode": False,
        "secret_key": "endpoint-test-" + "x" * 32,
        "static_hosts": HOSTS,
    }
    return Settings(_env_file=None, **{**base, **overrides})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://10.0.0.5/v1", "private"),
        ("http://127.0.0.1:8000/v1", "loopback"),
        ("http://169.254.169.254/latest", "link-local"),
        ("http://ollama:11434/v1", "private"),
        ("http://rebind.test/v1", "loopback"),
        ("ftp://llm.public.test/v1", "http"),
        ("http://user:pw@llm.public.test/v1", "credentials"),
        ("http://unknown.test/v1", "cannot resolve"),
    ],
)
def test_internal_and_malformed_endpoints_are_refused_with_the_reason(url: str, reason: str) -> None:
    with pytest.raises(LlmEndpointRefused) as refused:
        check_llm_endpoint(settings(), url)
    assert refused.value.message.startswith("llm.base_url") and reason in refused.value.message


def test_public_endpoints_allowed_hosts_and_development_mode_pass() -> None:
    check_llm_endpoint(settings(), "https://llm.public.test/v1")
    check_llm_endpoint(settings(llm_allowed_hosts=["ollama"]), "http://ollama:11434/v1")
    check_llm_endpoint(settings(dev_mode=True), "http://127.0.0.1:8000/v1")
    with pytest.raises(LlmEndpointRefused):
        check_llm_endpoint(settings(llm_allowed_hosts=["ollama"]), "http://10.1.2.3:11434/v1")
