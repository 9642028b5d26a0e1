"""JSON schemas of what a battle bot receives and answers (documented in docs/games/battle.md)."""

from __future__ import annotations

from typing import Any

from shared.games.battle.config import SIGNAL_WORDS, BattleConfig

_NUM: dict[str, Any] = {"type": "number"}
_INT: dict[str, Any] = {"type": "integer"}
_POINT: dict[str, Any] = {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2}
_SIGNAL_OUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "word": {"enum": list(SIGNAL_WORDS)},
        "values": {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2},
        "age": {"type": "integer", "description": "ticks since it was sent; -1 if never"},
    },
    "required": ["word", "values", "age"],
}


def _obj(props: dict[str, Any], desc: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "required": sorted(props)}
    if desc:
        out["description"] = desc
    return out


def observation_schema() -> dict[str, Any]:
    self_state = _obj(
        {
            "id": {"type": "string"},
            "team": _INT,
            "alive": {"type": "boolean"},
            "position": _POINT,
            "heading": {"type": "number", "description": "radians, world frame, [-pi, pi)"},
            "velocity": _POINT,
            "hp": _NUM,
            "cooldown": {"type": "number", "description": "seconds until the gun can fire"},
            "can_fire": {"type": "boolean"},
            "dodge_ready": {"type": "boolean"},
            "dodge_cooldown": _NUM,
            "move_target": _POINT,
            "tick": _INT,
            "time": _NUM,
        }
    )
    seen_unit = _obj(
        {
            "id": {"type": "string"},
            "team": _INT,
            "position": _POINT,
            "velocity": _POINT,
            "heading": _NUM,
            "hp": _NUM,
            "bearing": {"type": "number", "description": "radians relative to the viewer's heading"},
            "distance": _NUM,
            "signal": _SIGNAL_OUT,
        }
    )
    seen_projectile = _obj(
        {
            "id": _INT,
            "team": _INT,
            "position": _POINT,
            "velocity": _POINT,
            "ttl": {"type": "number", "description": "seconds left"},
            "bearing": _NUM,
            "distance": _NUM,
        }
    )
    unit = _obj(
        {
            "self": self_state,
            "visible_units": {"type": "array", "items": seen_unit},
            "visible_projectiles": {"type": "array", "items": seen_projectile},
            "visible_walls": {
                "type": "array",
                "items": _INT,
                "description": "indices into constants.walls of walls in this unit's field of view",
            },
            "history": {
                "type": "array",
                "items": {"type": "object", "description": "a sanitised unit order plus its tick"},
            },
        }
    )
    channel = {
        "type": "object",
        "properties": {**_SIGNAL_OUT["properties"], "unit": {"type": "string"}, "alive": {"type": "boolean"}},
        "required": ["age", "alive", "unit", "values", "word"],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "BattleObservation",
        **_obj(
            {
                "game": {"const": "battle"},
                "player": _INT,
                "team": _INT,
                "turn": _INT,
                "tick": _INT,
                "time": _NUM,
                "units": {"type": "array", "items": unit},
                "team_channel": {"type": "array", "items": channel},
                "constants": {
                    "type": "object",
                    "description": "rules of the match and the wall segments [x1, y1, x2, y2] of the map",
                    "properties": {"walls": {"type": "array", "items": {"type": "array", "items": _NUM}}},
                },
                "memory": {"type": "object", "description": "what this player returned as memory last time"},
            }
        ),
    }


def action_schema() -> dict[str, Any]:
    order = {
        "type": "object",
        "properties": {
            "move": {"oneOf": [_POINT, {"const": "stop"}], "description": "a point to go to, or stop"},
            "turn": {"type": "number", "description": "heading to turn to (radians, world frame)"},
            "fire": {**_POINT, "description": "aim at this point and fire when aimed and cooled down"},
            "dodge": {"enum": ["left", "right"]},
            "signal": {
                "type": "object",
                "properties": {
                    "word": {"enum": list(SIGNAL_WORDS)},
                    "values": {
                        "type": "array",
                        "items": {"type": "number", "minimum": -1, "maximum": 1},
                        "maxItems": 2,
                    },
                },
                "required": ["word"],
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "BattleAction",
        "type": "object",
        "properties": {
            "units": {
                "type": "object",
                "additionalProperties": order,
                "description": "orders by own unit id",
            },
            "memory": {
                "type": "object",
                "description": "kept for next turn; at most memory_limit_bytes as JSON",
            },
        },
        "additionalProperties": False,
    }


def config_schema() -> dict[str, Any]:
    return BattleConfig.model_json_schema()
