"""Settings: insecure defaults are refused outside development mode, by the code and by a service."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from shared.config import DEFAULT_SECRET_KEY, ENV_FILE_VARIABLE, Settings


def test_default_secret_key_is_refused_outside_dev_mode() -> None:
    with pytest.raises(ValidationError, match="ARENA_SECRET_KEY"):
        Settings(dev_mode=False, secret_key=SecretStr(DEFAULT_SECRET_KEY))
    assert Settings(dev_mode=True, secret_key=SecretStr(DEFAULT_SECRET_KEY)).dev_mode


def test_unsandboxed_backend_is_refused_outside_dev_mode() -> None:
    with pytest.raises(ValidationError, match="process"):
        Settings(dev_mode=False, secret_key=SecretStr("a-real-secret"), sandbox_backend="process")


def test_an_unknown_sandbox_backend_is_refused_naming_the_allowed_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """There is no docker backend: setting one fails at start-up instead of being ignored."""
    monkeypatch.setenv("ARENA_SANDBOX_BACKEND", "docker")
    with pytest.raises(ValidationError) as raised:
        Settings(dev_mode=True)
    message = str(raised.value)
    assert "sandbox_backend" in message, message
    assert "'bwrap' or 'process'" in message, message


def test_broker_must_outlive_the_longest_match() -> None:
    with pytest.raises(ValidationError, match="visibility"):
        Settings(dev_mode=True, match_hard_time_limit_s=4000, match_soft_time_limit_s=3900)


def test_bot_secret_key_derivation_depends_on_the_secret() -> None:
    one = Settings(dev_mode=True, secret_key=SecretStr("one")).fernet_key()
    assert one == Settings(dev_mode=True, secret_key=SecretStr("one")).fernet_key()
    assert one != Settings(dev_mode=True, secret_key=SecretStr("two")).fernet_key()


@pytest.mark.slow
def test_gateway_refuses_to_start_with_the_default_secret() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_DEV_MODE"] = "0"
    result = subprocess.run(
        [sys.executable, "-c", "import services.gateway.app"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "ARENA_SECRET_KEY is the built-in default" in result.stderr


@pytest.mark.parametrize(
    ("value", "hosts"),
    [
        ("ollama", ["ollama"]),
        ("ollama, vllm.internal", ["ollama", "vllm.internal"]),
        ('["ollama", "vllm.internal"]', ["ollama", "vllm.internal"]),
        ("", []),
    ],
)
def test_llm_allowed_hosts_read_as_comma_separated_names_or_a_json_list(
    monkeypatch: pytest.MonkeyPatch, value: str, hosts: list[str]
) -> None:
    monkeypatch.setenv("ARENA_LLM_ALLOWED_HOSTS", value)
    assert Settings(dev_mode=True).llm_allowed_hosts == hosts


def test_a_broken_json_list_of_llm_hosts_says_which_forms_are_expected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARENA_LLM_ALLOWED_HOSTS", '["ollama"')
    with pytest.raises(ValidationError) as raised:
        Settings(dev_mode=True)
    assert "ARENA_LLM_ALLOWED_HOSTS=ollama,vllm.internal" in str(raised.value)


def test_an_empty_arena_env_file_keeps_the_dotenv_file_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's processes must not take docker compose's `.env` (its secret key) for their own."""
    (tmp_path / ".env").write_text("ARENA_LADDER_MAX_PENDING=7\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_LADDER_MAX_PENDING", raising=False)
    monkeypatch.delenv(ENV_FILE_VARIABLE, raising=False)
    assert Settings().ladder_max_pending == 7, "without the variable, .env is read as before"
    monkeypatch.setenv(ENV_FILE_VARIABLE, "")
    assert Settings().ladder_max_pending == 4
