"""One rule for the LLM key, wherever it is read: an operator's endpoint (its key, else its key
file) or `arena evolve`'s environment (ARENA_LLM_API_KEY, else OPENAI_API_KEY); values stripped, and
one empty after that counts as unset."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.config import LlmEndpoint, llm_api_key

URL = "http://ollama:11434/v1"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, None),
        ({"ARENA_LLM_API_KEY": "sk-arena"}, "sk-arena"),
        ({"OPENAI_API_KEY": "sk-openai"}, "sk-openai"),
        ({"ARENA_LLM_API_KEY": "sk-arena", "OPENAI_API_KEY": "sk-openai"}, "sk-arena"),
        ({"ARENA_LLM_API_KEY": "", "OPENAI_API_KEY": "sk-openai"}, "sk-openai"),
        ({"ARENA_LLM_API_KEY": " \n", "OPENAI_API_KEY": " sk-openai\n"}, "sk-openai"),
        ({"ARENA_LLM_API_KEY": "  sk-arena  "}, "sk-arena"),
        ({"ARENA_LLM_API_KEY": " ", "OPENAI_API_KEY": ""}, None),
        ({"ARENA_API_KEY": "sk-platform"}, None),
    ],
)
def test_the_environment_in_order(environ: dict[str, str], expected: str | None) -> None:
    assert llm_api_key(environ) == expected


def test_an_endpoint_has_its_key_or_its_key_file_and_never_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_LLM_API_KEY", "sk-environment")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-environment")
    key_file = tmp_path / "key"
    key_file.write_text("sk-file\n")
    assert llm_api_key(LlmEndpoint(base_url=URL)) is None
    assert llm_api_key(LlmEndpoint.model_validate({"base_url": URL, "api_key": " sk-house "})) == "sk-house"
    assert llm_api_key(LlmEndpoint.model_validate({"base_url": URL, "api_key": "  "})) is None
    assert llm_api_key(LlmEndpoint(base_url=URL, api_key_file=key_file)) == "sk-file"
    key_file.write_text("\n")
    assert llm_api_key(LlmEndpoint(base_url=URL, api_key_file=key_file)) is None
    with pytest.raises(FileNotFoundError):
        llm_api_key(LlmEndpoint(base_url=URL, api_key_file=tmp_path / "missing"))
