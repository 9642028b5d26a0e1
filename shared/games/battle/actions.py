"""Turning raw bot output (any JSON, or None) into orders the world can apply, counting every fix.

Sanitising never raises and never looks at anything but the action and the acting player's units,
so it is deterministic and a bot cannot touch another player's units.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from shared.games.battle.config import SIGNAL_WORDS, BattleConfig

UNIT_KEYS = frozenset(("move", "turn", "fire", "dodge", "signal"))
TOP_KEYS = frozenset(("units", "memory"))
_SIGNAL_WORDS = frozenset(SIGNAL_WORDS)
_PI = math.pi
_TWO_PI = 2.0 * math.pi
_isfinite = math.isfinite
_COMPACT = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
"""Reused: building an encoder per call costs as much as encoding a small memory."""
MAX_PROBLEMS = 5
"""Problems described per action; every further one is only counted."""


@dataclass(slots=True)
class UnitOrder:
    """A clean order for one unit; None fields were not given (or were invalid)."""

    move: tuple[float, float] | None = None
    stop: bool = False
    turn: float | None = None
    fire: tuple[float, float] | None = None
    dodge: str | None = None
    signal: tuple[str, tuple[float, float]] | None = None

    def to_json(self) -> dict[str, Any]:
        """The order as the unit's history shows it (numbers rounded: history is for reading)."""
        out: dict[str, Any] = {}
        if self.stop:
            out["move"] = "stop"
        elif self.move is not None:
            out["move"] = [round(self.move[0], 3), round(self.move[1], 3)]
        if self.turn is not None:
            out["turn"] = round(self.turn, 4)
        if self.fire is not None:
            out["fire"] = [round(self.fire[0], 3), round(self.fire[1], 3)]
        if self.dodge is not None:
            out["dodge"] = self.dodge
        if self.signal is not None:
            out["signal"] = {"word": self.signal[0], "values": list(self.signal[1])}
        return out


@dataclass(slots=True)
class SanitisedAction:
    hold: bool
    """True when the bot gave no usable action at all: every unit holds still."""
    orders: list[tuple[str, UnitOrder]] = field(default_factory=list)
    """(unit id, order), sorted by unit id."""
    memory: dict[str, Any] | None = None
    """New memory, or None to keep the previous one."""
    invalid: int = 0
    memory_dropped: bool = False
    problems: list[str] = field(default_factory=list)
    """What was wrong, for the bot's owner (the first MAX_PROBLEMS; `invalid` counts them all)."""

    def flag(self, problem: str) -> None:
        self.invalid += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)


def _name(key: object) -> str:
    """A key the bot sent, quoted and cut short for a problem's text."""
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(v: object) -> float | None:
    if type(v) is int or type(v) is float:
        f = float(v)
        if math.isfinite(f):
            return f
    return None


def _point(v: object) -> tuple[float, float] | None:
    """A finite (x, y); the common well-formed shape, a list of two floats, is tested first."""
    if type(v) is list and len(v) == 2:
        x, y = v
        if type(x) is float and type(y) is float and _isfinite(x) and _isfinite(y):
            return x, y
    if isinstance(v, (list, tuple)) and len(v) == 2:  # a tuple checks faster than a union
        x, y = _number(v[0]), _number(v[1])
        if x is not None and y is not None:
            return x, y
    return None


class ActionSanitiser:
    def __init__(self, config: BattleConfig, width: float, height: float) -> None:
        self.cfg = config
        r = config.unit_radius
        self.bounds = (r, width - r, r, height - r)

    def sanitise(self, raw: object, own_alive: dict[str, bool]) -> SanitisedAction:
        """`own_alive` maps the acting player's unit ids to whether they are alive."""
        if raw is None:
            return SanitisedAction(hold=True)
        if not isinstance(raw, dict):
            out = SanitisedAction(hold=True)
            out.flag("the action is not an object with 'units' (and 'memory')")
            return out
        out = SanitisedAction(hold=False)
        for key in raw:
            if key not in TOP_KEYS:
                out.flag(f"unknown key {_name(key)} (only 'units' and 'memory')")
        units = raw.get("units")
        if units is not None:
            if not isinstance(units, dict):
                out.flag("'units' is not an object of unit id -> order")
            else:
                for uid in sorted(k for k in units if isinstance(k, str)):
                    if uid not in own_alive:
                        out.flag(f"unit {_name(uid)} is not one of yours")
                        continue
                    if not own_alive[uid]:
                        continue  # orders to fallen units are harmless
                    order = self._unit(uid, units[uid], out)
                    if order is not None:
                        out.orders.append((uid, order))
                for key in units:
                    if not isinstance(key, str):
                        out.flag(f"unit id {_name(key)} is not a string")
        if "memory" in raw:
            self._memory(raw["memory"], out)
        return out

    def _memory(self, mem: object, out: SanitisedAction) -> None:
        if not isinstance(mem, dict):
            out.flag("'memory' is not an object")
            return
        try:
            text = _COMPACT.encode(mem)
            size = len(text) if text.isascii() else len(text.encode())
        except (TypeError, ValueError):
            out.flag("'memory' is not plain JSON (NaN, infinity or other values)")
            return
        if size > self.cfg.memory_limit_bytes:
            out.flag(f"'memory' has {size} bytes, over the {self.cfg.memory_limit_bytes}: dropped")
            out.memory_dropped = True
            return
        out.memory = mem

    def _unit(self, uid: str, cmd: object, out: SanitisedAction) -> UnitOrder | None:
        if not isinstance(cmd, dict):
            out.flag(f"unit {uid}: the order is not an object")
            return None
        order = UnitOrder()
        # One pass over the keys (each field is checked on its own, so the order does not matter), with
        # the common well-formed shapes (see _point; a float for turn) tested first.
        for key, v in cmd.items():
            if key == "move":
                if v == "stop":
                    order.stop = True
                    continue
                p = _point(v)
                if p is None:
                    out.flag(f"unit {uid}: 'move' is neither [x, y] nor 'stop'")
                else:
                    x, y = p
                    x0, x1, y0, y1 = self.bounds
                    if not (x0 <= x <= x1 and y0 <= y <= y1):
                        x, y = min(max(x, x0), x1), min(max(y, y0), y1)
                        if (x, y) != p:
                            out.flag(f"unit {uid}: 'move' outside the arena, clamped")
                    order.move = (x, y)
            elif key == "turn":
                a = v if type(v) is float and _isfinite(v) else _number(v)
                if a is None:
                    out.flag(f"unit {uid}: 'turn' is not a finite number of radians")
                else:
                    order.turn = (a + _PI) % _TWO_PI - _PI
            elif key == "fire":
                p = _point(v)
                if p is None:
                    out.flag(f"unit {uid}: 'fire' is not [x, y]")
                else:
                    order.fire = p
            elif key == "dodge":
                if v in ("left", "right"):
                    order.dodge = v
                else:
                    out.flag(f"unit {uid}: 'dodge' is neither 'left' nor 'right'")
            elif key == "signal":
                order.signal = self._signal(uid, v, out)
            else:
                out.flag(f"unit {uid}: unknown key {_name(key)} (move, turn, fire, dodge, signal)")
        return order

    def _signal(self, uid: str, sig: object, out: SanitisedAction) -> tuple[str, tuple[float, float]] | None:
        if not isinstance(sig, dict) or sig.get("word") not in _SIGNAL_WORDS:
            out.flag(f"unit {uid}: 'signal' needs a 'word' of {', '.join(sorted(_SIGNAL_WORDS))}")
            return None
        for key in sig:
            if key not in ("word", "values"):
                out.flag(f"unit {uid}: 'signal' has an unknown key {_name(key)}")
        raw_values = sig.get("values", [])
        if not isinstance(raw_values, list | tuple):
            out.flag(f"unit {uid}: signal 'values' is not a list")
            raw_values = []
        if len(raw_values) > 2:
            out.flag(f"unit {uid}: signal 'values' has more than 2 numbers")
        values = [0.0, 0.0]
        for i, v in enumerate(raw_values[:2]):
            f = _number(v)
            if f is None:
                out.flag(f"unit {uid}: signal value {i} is not a finite number")
                continue
            c = min(max(f, -1.0), 1.0)
            if c != f:
                out.flag(f"unit {uid}: signal value {i} clamped to -1..1")
            values[i] = c
        return str(sig["word"]), (values[0], values[1])
