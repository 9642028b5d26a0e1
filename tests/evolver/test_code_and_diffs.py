"""Program text helpers and SEARCH/REPLACE blocks: pure functions, no services."""

from __future__ import annotations

import pytest

from services.evolver.contract import DIVIDER_MARKER, REPLACE_MARKER, SEARCH_MARKER
from services.evolver.search.code import extract_code, normalised_hash, unified_diff
from services.evolver.search.diffs import (
    DiffError,
    EditBlock,
    apply_blocks,
    has_blocks,
    parse_blocks,
    render_blocks,
)

PROGRAM = '''import math

SPEED = 2.0


def decide(observation):
    """Go."""
    x = observation["x"]
    if x > SPEED:
        return {"move": x * 2}
    return {"move": math.sqrt(x)}
'''


def block_text(search: str, replace: str) -> str:
    return f"{SEARCH_MARKER}\n{search}{DIVIDER_MARKER}\n{replace}{REPLACE_MARKER}\n"


# ---------------------------------------------------------------- normalised_hash
def test_hash_ignores_comments_blank_lines_and_formatting() -> None:
    reformatted = PROGRAM.replace("SPEED = 2.0", "SPEED   =   2.0  # tuned").replace(
        "    x = observation", "\n\n    # read it\n    x = observation"
    )
    assert normalised_hash(reformatted) == normalised_hash(PROGRAM)
    assert normalised_hash(PROGRAM + "\n\n# end\n") == normalised_hash(PROGRAM)
    assert normalised_hash("f(a,b)") == normalised_hash("f( a , b )\n")


def test_hash_sees_real_changes() -> None:
    assert normalised_hash(PROGRAM.replace("2.0", "2.5")) != normalised_hash(PROGRAM)
    assert normalised_hash(PROGRAM.replace("x > SPEED", "x >= SPEED")) != normalised_hash(PROGRAM)
    assert normalised_hash(PROGRAM.replace('"""Go."""', '"""Went."""')) != normalised_hash(PROGRAM)
    assert len(normalised_hash(PROGRAM)) == 64


def test_hash_of_text_that_does_not_parse() -> None:
    broken = "def f(:\n    return 1\n"
    assert normalised_hash(broken) == normalised_hash("def f(:   \n    return 1\n\n")
    assert normalised_hash(broken) != normalised_hash("def f(:\n    return 2\n")


# ---------------------------------------------------------------- extract_code
CODE = "def decide(observation):\n    return {}\n"


@pytest.mark.parametrize(
    "answer",
    [
        f"Here is the bot:\n```python\n{CODE}```\nIt should win.",
        f"```\n{CODE}```",
        f"~~~python\n{CODE}~~~\n",
        f"```py\n{CODE}```",
        f"```Python\n{CODE}```",
        f"Text first ```python\n{CODE.rstrip()}```\nmore text",
        f"The answer:\n\n    ```python\n{CODE}    ```\n",
        f"I improved it.\n```python\n{CODE}",  # truncated: no closing fence
        CODE,
        f"\n\n{CODE}\n\n",
    ],
)
def test_extract_code_shapes(answer: str) -> None:
    assert extract_code(answer) == CODE


def test_extract_code_prefers_the_longest_block_that_parses() -> None:
    longer_broken = "def decide(observation):\n    return {  # cut off here\n    more = 1\n    and more\n"
    answer = f"```python\nimport math\n```\nthen\n```python\n{CODE}```\nand\n```python\n{longer_broken}```"
    assert extract_code(answer) == CODE


def test_extract_code_takes_the_longest_when_none_parses() -> None:
    answer = "```python\ndef f(:\n```\n```python\ndef g(:\n    return 1\n```"
    assert extract_code(answer) == "def g(:\n    return 1\n"


def test_extract_code_skips_other_languages() -> None:
    answer = f'```json\n{{"a": 1}}\n```\n```python\n{CODE}```\n```bash\nls -la\n```'
    assert extract_code(answer) == CODE


def test_extract_code_tilde_and_backtick_fences_do_not_close_each_other() -> None:
    inner = 'def decide(observation):\n    text = """\n```\n"""\n    return {}\n'
    assert extract_code(f"~~~python\n{inner}~~~\n") == inner


@pytest.mark.parametrize(
    "answer",
    ["", "I cannot help with that.", "```python\n```", "Just prose: use a higher speed.", "x = 1"],
)
def test_extract_code_finds_nothing(answer: str) -> None:
    assert extract_code(answer) is None


# ---------------------------------------------------------------- unified_diff
def test_unified_diff() -> None:
    child = PROGRAM.replace("SPEED = 2.0", "SPEED = 3.0")
    diff = unified_diff(PROGRAM, child, "p1", "p2")
    assert diff.startswith("--- p1\n+++ p2\n")
    assert "-SPEED = 2.0\n+SPEED = 3.0\n" in diff
    assert unified_diff(PROGRAM, PROGRAM, "a", "b") == ""
    assert unified_diff("a\n", "b", "x", "y").endswith("+b\n\\ No newline at end of file\n")


# ---------------------------------------------------------------- parse / render
def test_parse_blocks_with_prose_and_fences() -> None:
    answer = (
        "I will raise the speed.\n\n```python\n"
        + block_text("SPEED = 2.0\n", "SPEED = 3.0\n")
        + "```\n\nAnd use the square:\n```\n"
        + block_text('    return {"move": math.sqrt(x)}\n', '    return {"move": x * x}\n')
        + "```\nDone."
    )
    assert has_blocks(answer)
    assert parse_blocks(answer) == [
        EditBlock("SPEED = 2.0\n", "SPEED = 3.0\n"),
        EditBlock('    return {"move": math.sqrt(x)}\n', '    return {"move": x * x}\n'),
    ]


def test_parse_deletion_and_fences_inside_a_block() -> None:
    answer = block_text("```python\nSPEED = 2.0\n```\n", "")
    assert parse_blocks(answer) == [EditBlock("SPEED = 2.0\n", "")]


def test_render_is_the_inverse_of_parse() -> None:
    blocks = [
        EditBlock("SPEED = 2.0\n", "SPEED = 3.0\nLIMIT = 4\n"),
        EditBlock("    x = 1\n\n    y = 2\n", ""),
    ]
    assert parse_blocks(render_blocks(blocks)) == blocks
    assert has_blocks(render_blocks(blocks))


def test_no_blocks() -> None:
    assert not has_blocks(CODE)
    assert parse_blocks(CODE) == []
    assert parse_blocks("Heading\n=======\ntext") == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (f"{SEARCH_MARKER}\nSPEED = 2.0\n{DIVIDER_MARKER}\nSPEED = 3.0\n", "unterminated"),
        (f"{SEARCH_MARKER}\nSPEED = 2.0\nSPEED = 3.0\n{REPLACE_MARKER}\n", "missing the divider"),
        (f"{SEARCH_MARKER}\nSPEED = 2.0\n", "missing the divider"),
        (f"{SEARCH_MARKER}\na\n{DIVIDER_MARKER}\nb\n{SEARCH_MARKER}\nc\n", "unterminated"),
        (f"text\n{REPLACE_MARKER}\n", "without"),
    ],
)
def test_malformed_blocks(answer: str, message: str) -> None:
    with pytest.raises(DiffError, match=message):
        parse_blocks(answer)


# ---------------------------------------------------------------- apply
def test_apply_exact() -> None:
    blocks = parse_blocks(
        block_text("SPEED = 2.0\n", "SPEED = 3.0\n")
        + block_text('        return {"move": x * 2}\n', '        return {"move": x * 4}\n')
    )
    out = apply_blocks(PROGRAM, blocks)
    assert out == PROGRAM.replace("2.0", "3.0").replace("x * 2", "x * 4")


def test_blocks_apply_in_order() -> None:
    blocks = [EditBlock("SPEED = 2.0\n", "SPEED = 3.0\n"), EditBlock("SPEED = 3.0\n", "SPEED = 4.0\n")]
    assert "SPEED = 4.0\n" in apply_blocks(PROGRAM, blocks)


def test_apply_ignoring_trailing_whitespace() -> None:
    block = EditBlock("SPEED = 2.0   \n", "SPEED = 3.0\n")
    assert apply_blocks(PROGRAM, [block]) == PROGRAM.replace("2.0", "3.0")
    source = PROGRAM.replace("SPEED = 2.0\n", "SPEED = 2.0 \t\n")
    assert apply_blocks(source, [EditBlock("SPEED = 2.0\n", "SPEED = 3.0\n")]) == PROGRAM.replace(
        "2.0", "3.0"
    )


def test_apply_with_a_uniform_indentation_difference() -> None:
    search = 'if x > SPEED:\n    return {"move": x * 2}\n'
    replace = 'if x >= SPEED:\n    return {"move": x * 3}\n'
    out = apply_blocks(PROGRAM, [EditBlock(search, replace)])
    assert '    if x >= SPEED:\n        return {"move": x * 3}\n' in out
    over = "        " + search.replace("\n    ", "\n            ")
    out = apply_blocks(PROGRAM, [EditBlock(over, "        x = 0\n")])
    assert "\n    x = 0\n" in out


def test_apply_not_found() -> None:
    with pytest.raises(DiffError, match=r"block 2 \(search starting 'SPEED = 9.0'\) matches nothing"):
        apply_blocks(PROGRAM, [EditBlock("import math\n", "import math\n"), EditBlock("SPEED = 9.0\n", "")])


def test_apply_ambiguous() -> None:
    source = "a = 1\nb = 2\na = 1\n"
    with pytest.raises(DiffError, match=r"block 1 .* matches 2 places \(lines 1, 3\)"):
        apply_blocks(source, [EditBlock("a = 1\n", "a = 5\n")])
    assert apply_blocks(source, [EditBlock("b = 2\na = 1\n", "b = 2\na = 5\n")]) == "a = 1\nb = 2\na = 5\n"


def test_apply_empty_search() -> None:
    with pytest.raises(DiffError, match="empty"):
        apply_blocks(PROGRAM, [EditBlock("", "x = 1\n")])
    with pytest.raises(DiffError, match="empty"):
        apply_blocks(PROGRAM, [EditBlock("\n  \n", "x = 1\n")])


def test_apply_keeps_the_missing_final_newline() -> None:
    assert apply_blocks("a = 1\nb = 2", [EditBlock("b = 2\n", "b = 3\n")]) == "a = 1\nb = 3"
