"""Export a policy to one standard-library Python file: a hosted `decide` bot or a CodinGame script.

The file is `bot_template.py` with its parameter block replaced by the checkpoint's actor: every
Linear layer's weights quantised to 12-bit signed integers with one scale per output row (biases
and scales kept as float32 decimals), one character per weight (12 bits per character from
U+4E00, a block of ordinary CJK ideographs: 0.67 characters per byte of data, denser than base85,
and decodable without base64, which the hosted-bot gate does not allow). 12 bits, not 8: with int8
the shipped policy's steep thrust output moved by more than 1 on a few percent of pods, under the
99% agreement the export must keep (docs/trainer-export.md). The CodinGame export keeps the
template's CodinGame section (the input() loop and its tracking); the hosted export drops it, as
the gate refuses input() there.

The hybrid export (`hybrid=True`) is the search bot with this policy as its prior: the policy file
above without its `decide`, the search bot's module (shared/games/podracing/search.py) without its
`decide`, and the glue of `hybrid_template.py` (the prior, the bot, its `decide` and its time
budget), assembled from their source text at export time so that the file never drifts from them.

`export_agent` works in memory (the training service calls it at every checkpoint: a few ms);
`export_checkpoint` reads a checkpoint file first.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from services.trainer.actions import ACTION_SETS, DEFAULT_ACTION_SET
from services.trainer.checkpoint_format import args_from_dict, load_checkpoint
from services.trainer.features import ENTITY_DIM, SELF_DIM
from services.trainer.policy import Agent, DeepSets, action_count
from shared.games.podracing import search
from shared.training.config import NetShapeConfig

Contract = Literal["hosted", "codingame"]
CONTRACTS: tuple[Contract, ...] = ("hosted", "codingame")
MAX_CHARS = 100_000
"""The platform's limit on a hosted bot's source (and CodinGame's on a submission)."""
CODE_BASE = 0x4E00
"""First of the 4096 code points that carry 12 bits each (U+4E00..U+5DFF, CJK ideographs)."""
LAYERS = ("encoder.0", "encoder.2", "head.0", "head.2", "head.4")
"""The actor's Linear layers, in the order the template reads them."""
TEMPLATE = Path(__file__).with_name("bot_template.py")
PARAMETERS = re.compile(r"# >>> parameters.*?# <<< parameters\n", re.DOTALL)
CODINGAME = re.compile(r"\n*# >>> codingame.*?# <<< codingame\n", re.DOTALL)
LINE_CHARS = 100
HYBRID_TEMPLATE = Path(__file__).with_name("hybrid_template.py")
SEARCH_MODULE = Path(search.__file__)
PLATFORM_IMPORTS = re.compile(r"# >>> platform imports.*?# <<< platform imports\n", re.DOTALL)
HYBRID_BUDGET = re.compile(r"^TIME_BUDGET_MS = .*$", re.MULTILINE)
DEFAULT_HYBRID_BUDGET_MS = search.DEFAULT_TIME_BUDGET_MS
"""The hybrid's search time per turn: the built-in search's, well inside a turn's timeout."""


class ExportError(ValueError):
    """The weights cannot be exported: wrong layers or shapes, or a file over the size limit."""


@functools.cache
def _template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


@functools.cache
def _hybrid_parts() -> tuple[str, str]:
    """The search bot's module and the hybrid glue, as they are in the repository."""
    return SEARCH_MODULE.read_text(encoding="utf-8"), HYBRID_TEMPLATE.read_text(encoding="utf-8")


def _actor_state(agent_or_actor_state: nn.Module | Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The actor's state dict from an Agent, a DeepSets actor, or either one's state dict."""
    if isinstance(agent_or_actor_state, Agent):
        agent_or_actor_state = agent_or_actor_state.actor
    if isinstance(agent_or_actor_state, nn.Module):
        state = dict(agent_or_actor_state.state_dict())
    else:
        state = dict(agent_or_actor_state)
    if any(key.startswith("actor.") for key in state):
        state = {
            key.removeprefix("actor."): value for key, value in state.items() if key.startswith("actor.")
        }
    return {key: value.detach().to("cpu", torch.float32) for key, value in state.items()}


def _layer_shapes(shape: NetShapeConfig, actions: int) -> list[tuple[int, int]]:
    """(outputs, inputs) of each Linear layer in LAYERS."""
    return [
        (shape.encoder_hidden, ENTITY_DIM),
        (shape.embedding, shape.encoder_hidden),
        (shape.hidden, SELF_DIM + shape.embedding),
        (shape.hidden, shape.hidden),
        (actions, shape.hidden),
    ]


QUANT_MAX = 2047
"""Largest 12-bit signed value used (symmetric: -2047..2047)."""


def quantize(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """12-bit values and one scale per output row, so that weight ~= values x scale[:, None]."""
    scale = weight.abs().amax(dim=1) / float(QUANT_MAX)
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    values = torch.round(weight / scale[:, None]).clamp(-QUANT_MAX, QUANT_MAX).to(torch.int16)
    return values, scale


def pack(data: torch.Tensor) -> str:
    """Signed 12-bit values as text, one character each (the template's `_unpack` reads it back)."""
    codes = (data.flatten().to(torch.int64) & 4095) + CODE_BASE
    return "".join(map(chr, codes.tolist()))


def _wrapped(name: str, items: list[str], separator: str, quote: bool) -> str:
    """`name = (...)` over lines of about LINE_CHARS characters."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(line) + len(item) > LINE_CHARS:
            lines.append(line)
            line = ""
        line += item + separator
    if line:
        lines.append(line)
    body = "\n".join(f'    "{text}"' if quote else f"    {text.rstrip()}" for text in lines)
    return f"{name} = (\n{body}\n)\n"


def _float_text(values: torch.Tensor) -> list[str]:
    return [f"{value:.8g}" for value in values.tolist()]


def parameter_block(
    state: Mapping[str, torch.Tensor], shape: NetShapeConfig, source: str, action_set: str
) -> str:
    """The template's parameter block for these actor weights and their action set."""
    packed: list[torch.Tensor] = []
    scales: list[torch.Tensor] = []
    biases: list[torch.Tensor] = []
    for layer, expected in zip(LAYERS, _layer_shapes(shape, action_count(action_set)), strict=True):
        weight, bias = state.get(f"{layer}.weight"), state.get(f"{layer}.bias")
        if weight is None or bias is None:
            raise ExportError(f"the actor has no layer {layer!r}: is this a podracing policy?")
        if tuple(weight.shape) != expected or tuple(bias.shape) != expected[:1]:
            raise ExportError(
                f"layer {layer} is {tuple(weight.shape)}, but the network shape {shape} with the "
                f"action set {action_set!r} needs {expected}"
            )
        values, scale = quantize(weight)
        packed.append(values.flatten())
        scales.append(scale)
        biases.append(bias)
    weights = pack(torch.cat(packed))
    chunks = [weights[i : i + LINE_CHARS] for i in range(0, len(weights), LINE_CHARS)]
    widths = (shape.encoder_hidden, shape.embedding, shape.hidden)
    actions = tuple((rotation, thrust, int(kind)) for rotation, thrust, kind in ACTION_SETS[action_set])
    return (
        "# >>> parameters: written by services/trainer/export.py\n"
        f"SOURCE = {source!r}\n"
        f"SHAPE = {widths!r}\n"
        + _wrapped("ACTIONS", [repr(action) for action in actions], ", ", quote=False)
        + _wrapped("WEIGHTS", chunks, "", quote=True)
        + _wrapped("SCALES", _float_text(torch.cat(scales)), ", ", quote=False)
        + _wrapped("BIASES", _float_text(torch.cat(biases)), ", ", quote=False)
        + "# <<< parameters\n"
    )


def export_agent(
    agent_or_actor_state: nn.Module | Mapping[str, torch.Tensor],
    shape: NetShapeConfig,
    contract: Contract = "hosted",
    source: str = "an Arena training run",
    action_set: str | None = None,
    *,
    hybrid: bool = False,
    time_budget_ms: float = DEFAULT_HYBRID_BUDGET_MS,
) -> str:
    """The bot's source for an Agent / DeepSets actor or its state dict (Agent or actor keys).

    The action set is the Agent's; for an actor or a state dict, `action_set` (default the default set).
    With `hybrid`, the search bot with the policy as its prior, searching `time_budget_ms` a turn."""
    if contract not in CONTRACTS:
        raise ExportError(f"unknown contract {contract!r}; expected one of {', '.join(CONTRACTS)}")
    if isinstance(agent_or_actor_state, nn.Module) and not isinstance(agent_or_actor_state, Agent | DeepSets):
        raise ExportError(
            f"cannot export a {type(agent_or_actor_state).__name__}: give an Agent or its actor"
        )
    if action_set is None:
        action_set = (
            agent_or_actor_state.action_set if isinstance(agent_or_actor_state, Agent) else DEFAULT_ACTION_SET
        )
    if action_set not in ACTION_SETS:
        raise ExportError(f"unknown action set {action_set!r}")
    if hybrid and not (math.isfinite(time_budget_ms) and time_budget_ms > 0):
        raise ExportError(f"the hybrid's time budget must be a positive number of ms, not {time_budget_ms}")
    with torch.no_grad():
        block = parameter_block(_actor_state(agent_or_actor_state), shape, source, action_set)
    text = PARAMETERS.sub(lambda _: block, _template(), count=1)
    if hybrid:
        text = hybrid_source(text, contract, time_budget_ms)
    elif contract == "hosted":
        text = CODINGAME.sub("\n", text, count=1)
    if len(text) > MAX_CHARS:
        raise ExportError(
            f"the exported bot has {len(text)} characters, over the limit of {MAX_CHARS}: "
            f"the network {shape} is too large to export{' with the search bot' if hybrid else ''}"
        )
    return text


def export_checkpoint(
    path: Path,
    contract: Contract = "hosted",
    *,
    hybrid: bool = False,
    time_budget_ms: float = DEFAULT_HYBRID_BUDGET_MS,
) -> str:
    """The bot's source for a training checkpoint file (FileNotFoundError, or ValueError if it is
    not a checkpoint, ExportError if its policy cannot be exported); `hybrid` as in `export_agent`."""
    state = load_checkpoint(path)
    try:
        args = args_from_dict(dict(state["args"]))
        agent = state["agent"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ExportError(f"{path} holds no usable training arguments or agent: {exc}") from exc
    return export_agent(
        agent,
        args.shape,
        contract,
        source=_describe(path, state),
        action_set=args.action_set,
        hybrid=hybrid,
        time_budget_ms=time_budget_ms,
    )


def _describe(path: Path, state: dict[str, Any]) -> str:
    iteration, steps = state.get("iteration"), state.get("global_step")
    if isinstance(iteration, int) and isinstance(steps, int):
        return f"{path.name}: iteration {iteration}, {steps:,} steps, stage {state.get('stage')}"
    return path.name


# -- the hybrid --------------------------------------------------------------------------------


def hybrid_source(policy: str, contract: Contract, time_budget_ms: float) -> str:
    """The hybrid file from a policy file (the template with its parameters in place): the glue's
    docstring, the three parts' imports merged, the policy without its orders and `decide`, the
    search bot without its `decide`, the glue with its budget, and for CodinGame the template's
    input() loop (which plays the glue's `decide`)."""
    codingame = CODINGAME.search(policy)
    if codingame is None:
        raise ExportError("the policy template has no CodinGame section")
    search_module, glue = _hybrid_parts()
    glue = HYBRID_BUDGET.sub(f"TIME_BUDGET_MS = {float(time_budget_ms)!r}", glue, count=1)
    glue = PLATFORM_IMPORTS.sub("", glue, count=1)
    parts = {
        "the policy (services/trainer/bot_template.py)": _Part.of(
            CODINGAME.sub("\n", policy, count=1), "decide", "_pod_commands"
        ),
        "the search bot (shared/games/podracing/search.py)": _Part.of(search_module, "decide"),
        "the hybrid (services/trainer/hybrid_template.py)": _Part.of(glue),
    }
    _check_disjoint(parts)
    docstring = ast.get_docstring(ast.parse(glue), clean=False)
    sections = [f'"""{docstring}"""\n\n{_merged_imports(parts.values())}']
    sections += [f"# {'=' * 20} {title}\n\n{part.body}" for title, part in parts.items()]
    text = "\n\n".join(section.rstrip("\n") + "\n" for section in sections)
    if contract == "codingame":
        text += "\n\n" + codingame.group(0).lstrip("\n")
    return re.sub(r"\n{4,}", "\n\n\n", text)


@dataclass(frozen=True)
class _Part:
    """One part of the hybrid file: its imports, its code after them, the names its code binds."""

    imports: tuple[ast.Import | ast.ImportFrom, ...]
    body: str
    names: frozenset[str]

    @classmethod
    def of(cls, source: str, *drop: str) -> _Part:
        """A module's part, without its docstring and the top-level functions named in `drop`."""
        statements = list(ast.parse(source).body)
        header: list[ast.stmt] = []  # the docstring and the imports
        if statements and ast.get_docstring(ast.Module(body=statements[:1], type_ignores=[])) is not None:
            header.append(statements.pop(0))
        imports: list[ast.Import | ast.ImportFrom] = []
        while statements:
            node = statements[0]
            if not isinstance(node, ast.Import | ast.ImportFrom):
                break
            imports.append(node)
            statements.pop(0)
        header += imports
        lines = source.splitlines(keepends=True)
        names: set[str] = set()
        for node in reversed(statements):  # from the end, so that a cut keeps the lines above in place
            if isinstance(node, ast.FunctionDef) and node.name in drop:
                first = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
                del lines[first - 1 : node.end_lineno]
            else:
                names.update(_bound_names(node))
        start = (header[-1].end_lineno or 0) if header else 0
        return cls(tuple(imports), "".join(lines[start:]).strip("\n") + "\n", frozenset(names))


def _bound_names(node: ast.stmt) -> set[str]:
    """The top-level names a statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    return {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}


def _check_disjoint(parts: dict[str, _Part]) -> None:
    """One module holds the three parts: no name may be bound by two of them."""
    titles = list(parts)
    for i, first in enumerate(titles):
        for second in titles[i + 1 :]:
            shared = parts[first].names & parts[second].names
            if shared:
                raise ExportError(f"{first} and {second} both define {', '.join(sorted(shared))}")


def _merged_imports(parts: Iterable[_Part]) -> str:
    """The parts' imports as one block: __future__ first, then plain imports, then from-imports."""
    modules: set[str] = set()
    names: dict[str, set[str]] = {}
    for part in parts:
        for node in part.imports:
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif node.module is not None:
                names.setdefault(node.module, set()).update(alias.name for alias in node.names)
    future = names.pop("__future__", set())
    lines = [f"from __future__ import {', '.join(sorted(future))}", ""] if future else []
    lines += [f"import {module}" for module in sorted(modules)]
    lines += [f"from {module} import {', '.join(sorted(names[module]))}" for module in sorted(names)]
    return "\n".join(lines) + "\n"
