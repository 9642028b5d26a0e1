"""An evolution run's LLM base URL obeys the bot endpoints' address policy: public addresses only,
unless development mode is on or an operator allows the host by name. Names resolve from a static
table here (nothing leaves the machine)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.botclient.errors import EndpointRefused
from shared.botclient.ssrf import parse_endpoint
from shared.config import Settings, llm_api_key
from shared.evolution import LlmConfig
from shared.evolution.endpoint import check_llm_endpoint, connect_llm_endpoint, operator_endpoint
from shared.evolution.errors import LlmEndpointRefused, UnknownLlmEndpoint

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
        "bot_networks": None,
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
    assert refused.value.message.startswith("llm.base_url")
    assert reason in refused.value.message


def test_public_endpoints_allowed_hosts_and_development_mode_pass() -> None:
    check_llm_endpoint(settings(), "https://llm.public.test/v1")
    check_llm_endpoint(settings(llm_allowed_hosts=["ollama"]), "http://ollama:11434/v1")
    check_llm_endpoint(settings(dev_mode=True), "http://127.0.0.1:8000/v1")
    with pytest.raises(LlmEndpointRefused):
        check_llm_endpoint(settings(llm_allowed_hosts=["ollama"]), "http://10.1.2.3:11434/v1")


@pytest.mark.parametrize("url", ["http://llm.public.test:0/v1", "https://203.0.114.7:0"])
def test_port_zero_is_refused_by_the_one_url_parser(url: str) -> None:
    with pytest.raises(LlmEndpointRefused, match="port 0"):
        check_llm_endpoint(settings(dev_mode=True), url)
    with pytest.raises(ValidationError, match="port 0"):
        LlmConfig(base_url=url)
    with pytest.raises(EndpointRefused, match="port 0"):
        parse_endpoint(url)  # the bot endpoints' parser: one parser, one rule


def test_the_worker_resolves_and_pins_the_checked_address() -> None:
    resolved = connect_llm_endpoint(settings(), "https://llm.public.test/v1")
    assert (resolved.host, resolved.port, resolved.address) == ("llm.public.test", 443, "203.0.114.7")
    with pytest.raises(LlmEndpointRefused, match="loopback"):
        connect_llm_endpoint(settings(), "http://rebind.test/v1")
    # An allowed internal host and the operator's own endpoints resolve without the address policy.
    assert connect_llm_endpoint(settings(llm_allowed_hosts=["ollama"]), "http://ollama:11434/v1").address == (
        "10.1.2.3"
    )
    assert connect_llm_endpoint(settings(), "http://ollama:11434/v1", operator=True).address == "10.1.2.3"


def test_operator_endpoints_are_named_and_checked_when_settings_load() -> None:
    with pytest.raises(ValidationError, match="port"):
        settings(llm_endpoints={"house": {"base_url": "http://ollama:0/v1"}})
    with pytest.raises(ValidationError, match="not both"):
        settings(
            llm_endpoints={"house": {"base_url": "http://ollama/v1", "api_key": "k", "api_key_file": "/k"}}
        )
    with pytest.raises(ValidationError, match="LLM endpoint name"):
        settings(llm_endpoints={"Bad Name": {"base_url": "http://ollama/v1"}})
    loaded = settings(llm_endpoints={"house": {"base_url": "http://ollama:11434/v1/", "api_key": "sk-house"}})
    assert loaded.llm_endpoints["house"].base_url == "http://ollama:11434/v1"
    assert llm_api_key(loaded.llm_endpoints["house"]) == "sk-house"
    with pytest.raises(UnknownLlmEndpoint, match="endpoints: house"):
        operator_endpoint(loaded, "other")
