"""JSON schemas of the podracing observation and action, as published to bot authors."""

from __future__ import annotations

from typing import Any

MAX_COORDINATE = 1_000_000
MAX_MESSAGE_LENGTH = 64

_INT = {"type": "integer"}

POD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A pod as bots see it: whole numbers, angle in degrees (-1 before the first turn).",
    "additionalProperties": False,
    "required": [
        "x",
        "y",
        "vx",
        "vy",
        "angle",
        "next_checkpoint",
        "checkpoints_passed",
        "boost_available",
        "shield_cooldown",
    ],
    "properties": {
        "x": _INT,
        "y": _INT,
        "vx": _INT,
        "vy": _INT,
        "angle": {"type": "integer", "minimum": -1, "maximum": 359},
        "next_checkpoint": {"type": "integer", "minimum": 0},
        "checkpoints_passed": {
            "type": "integer",
            "minimum": 1,
            "description": "Passes so far, the start on checkpoint 0 counting as the first.",
        },
        "boost_available": {"type": "boolean"},
        "shield_cooldown": {
            "type": "integer",
            "minimum": 0,
            "maximum": 3,
            "description": "Coming turns in which thrust is forced to 0 after a SHIELD.",
        },
    },
}

OBSERVATION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Podracing observation",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "turn",
        "player",
        "laps",
        "checkpoint_count",
        "checkpoints",
        "max_thrust",
        "max_turns",
        "timeout_left",
        "opponent_timeout_left",
        "pods",
        "opponents",
    ],
    "properties": {
        "turn": {"type": "integer", "minimum": 0},
        "player": {"type": "integer", "minimum": 0, "maximum": 1},
        "laps": {"type": "integer", "minimum": 1},
        "checkpoint_count": {"type": "integer", "minimum": 2},
        "checkpoints": {
            "type": "array",
            "items": {"type": "array", "items": _INT, "minItems": 2, "maxItems": 2},
            "minItems": 2,
        },
        "max_thrust": {"type": "integer", "minimum": 0},
        "max_turns": {"type": "integer", "minimum": 1},
        "timeout_left": {"type": "integer"},
        "opponent_timeout_left": {"type": "integer"},
        "pods": {"type": "array", "items": POD_SCHEMA, "minItems": 2, "maxItems": 2},
        "opponents": {"type": "array", "items": POD_SCHEMA, "minItems": 2, "maxItems": 2},
    },
}

POD_ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["x", "y", "thrust"],
    "properties": {
        "x": {"type": "number", "minimum": -MAX_COORDINATE, "maximum": MAX_COORDINATE},
        "y": {"type": "number", "minimum": -MAX_COORDINATE, "maximum": MAX_COORDINATE},
        "thrust": {
            "oneOf": [
                {"type": "number", "minimum": 0, "description": "Clamped to 0..max_thrust, rounded."},
                {"type": "string", "enum": ["BOOST", "SHIELD"]},
            ]
        },
        "message": {"type": "string", "maxLength": MAX_MESSAGE_LENGTH},
    },
}

ACTION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Podracing action",
    "type": "object",
    "required": ["pods"],
    "properties": {"pods": {"type": "array", "items": POD_ACTION_SCHEMA, "minItems": 2, "maxItems": 2}},
}
