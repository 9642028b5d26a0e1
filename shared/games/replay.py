"""Replays for every game: enough to re-simulate a match and the frames to watch it.

A replay stores the seed, the config and the raw actions each player sent every turn (before the
game sanitised them; sanitising is deterministic), plus forfeits. Re-simulating feeds the same
inputs to a fresh match and must reproduce the stored frames exactly.

Bots choose what they answer, so what a replay keeps is capped: an action larger than
MAX_REPLAY_ACTION_BYTES, or any action once the replay holds MAX_REPLAY_ACTIONS_BYTES of them, is
stored as None, and frames beyond MAX_REPLAY_FRAMES_BYTES are dropped (the final frame is kept).
`replay["truncated"]` then counts what was left out, and only such a replay may re-simulate
differently. Replays are strict JSON: no NaN or Infinity, no lone surrogates.

Sizing costs no serialisation the replay would not do anyway. An action that came as a bot's
answer body is kept on a bound from the body's length (`action_size_bound`) while no exact size
could break a cap; exact sizes are computed, once, only when a cap comes near, so what is kept is
exactly what exact sizing would keep. Frames and events are serialised once, as they are recorded:
that text sizes them and is what `encode` writes for them at the end (`RecordedReplay`).
"""

from __future__ import annotations

import gzip
import json
import operator
import re
from collections.abc import Sequence
from typing import Any

from shared.games.base import JSON, Decide, Game, GameEvent, Match, StepResult
from shared.jsonsafe import storable

REPLAY_FORMAT = 1
MAX_REPLAY_ACTION_BYTES = 16 * 1024
"""One player's action for one turn, as compact JSON. Battle's largest legal action (20 units with
every order, 8 KiB of memory) is about 12 KiB; podracing's is under 300 bytes."""
MAX_REPLAY_ACTIONS_BYTES = 4 * 1024 * 1024
"""All actions of a replay: a 5000-turn podracing match of full-size actions is about 3 MiB."""
MAX_REPLAY_FRAMES_BYTES = 24 * 1024 * 1024
"""All frames and events of a replay, as JSON before gzip (which shrinks frames about 4 times)."""

REPLAY_MAX_DEPTH = 64
"""Deeper than any replay the games produce plus the deepest action a bot may send (32 levels)."""

ANSWER_GROWTH = 8
"""An action decoded from a bot's answer body (shared.botclient.answers) takes at most this many
times the body's bytes as compact strict JSON. Written again, whitespace, string escapes, integers
and literals never get longer; only a float can: from 3 bytes (`1e5`, `0.5`) to at most 24, the
longest `repr` of a float (`-1.2345678901234567e-300`)."""

_STRICT = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _strict_text(value: Any) -> str | None:
    """`value` as strict compact JSON, or None when it is not strict JSON at all."""
    try:
        text = _STRICT.encode(value)
        if not text.isascii():
            text.encode("utf-8")  # refuses a lone surrogate
        return text
    except (ValueError, TypeError, RecursionError):  # NaN, a lone surrogate, a non-JSON type
        return None


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _strict_size(value: Any) -> int | None:
    """Bytes of `value` as strict compact JSON, or None when it is not strict JSON at all."""
    text = _strict_text(value)
    return None if text is None else _utf8_size(text)


def action_size_bound(body: bytes | None) -> int | None:
    """At least the bytes, as strict compact JSON, of an action decoded from the answer `body`; None
    when the body cannot tell: there is none, or it escapes UTF-16 surrogates (`\\ud800`), which
    may be unpaired and make the action not strict JSON at all."""
    if body is None or (b"\\u" in body and _SURROGATE_ESCAPE.search(body) is not None):
        return None
    return ANSWER_GROWTH * len(body)


def _event_json(event: GameEvent) -> dict[str, JSON]:
    """GameEvent.to_json without its deep copy (dataclasses.asdict): a game never changes an event's
    data once the event exists."""
    return {"turn": event.turn, "kind": event.kind, "player": event.player, "data": event.data}


class RecordedReplay(dict[str, Any]):
    """A replay as `ReplayRecorder.finish` returns it: a plain dict to every reader, which also keeps
    the JSON text its frames and events were sized by, so that `encode` writes that text instead of
    serialising them again. The text is used only while the replay's lists still hold the very
    objects it was made from; a replay must not be changed in place after it is finished."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.texts: dict[str, tuple[list[Any], list[str]]] | None = {"frames": ([], []), "events": ([], [])}
        """Per list: the objects recorded and their texts, in order; None when some part was not
        strict JSON (the whole replay is then made safe when encoded, as before)."""

    def spliced_text(self) -> str | None:
        """The replay as `encode` writes it (before UTF-8), from the kept texts; None when they
        cannot be used."""
        if self.texts is None:
            return None
        for key, (parts, _) in self.texts.items():
            held = self.get(key)
            if not isinstance(held, list) or len(held) != len(parts):
                return None
            if not all(map(operator.is_, held, parts)):
                return None
        pieces = []
        for key, value in self.items():
            kept = self.texts.get(key)
            text = "[" + ",".join(kept[1]) + "]" if kept is not None else _STRICT.encode(value)
            pieces.append(_STRICT.encode(key) + ":" + text)
        return "{" + ",".join(pieces) + "}"


class ReplayRecorder:
    """Collects a match's inputs and outputs turn by turn as it is played."""

    def __init__(self, game: str, seed: int, config: dict[str, JSON], num_players: int, match: Match) -> None:
        first = match.frame()
        self._data = RecordedReplay(
            {
                "format": REPLAY_FORMAT,
                "game": game,
                "seed": seed,
                "config": config,
                "num_players": num_players,
                "turns": [],
                "frames": [first],
                "events": [],
                "result": None,
            }
        )
        self._actions_bytes = 0
        """Exact bytes of the kept actions, but for those in `_unsized`."""
        self._unsized: list[JSON] = []
        """Actions kept on their answer's size bound, not sized yet."""
        self._unsized_bound = 0
        self._frames_bytes = 0
        self._dropped_actions = 0
        self._dropped_frames = 0
        self._keep_texts([first], [], [_strict_text(first)])

    def _kept_action(self, action: JSON | None, body: bytes | None) -> tuple[JSON | None, bool]:
        """(what to store, whether the action was left out) under the per-turn and total caps."""
        if action is None:
            return None, False
        bound = action_size_bound(body)
        if (
            bound is not None
            and bound <= MAX_REPLAY_ACTION_BYTES
            and self._actions_bytes + self._unsized_bound + bound <= MAX_REPLAY_ACTIONS_BYTES
        ):
            self._unsized.append(action)  # kept, as exact sizing would keep it: no size could break a cap
            self._unsized_bound += bound
            return action, False
        self._size_unsized()
        size = _strict_size(action)
        if size is None or size > MAX_REPLAY_ACTION_BYTES:
            return None, True
        if self._actions_bytes + size > MAX_REPLAY_ACTIONS_BYTES:
            return None, True
        self._actions_bytes += size
        return action, False

    def _size_unsized(self) -> None:
        """Exact sizes for the actions kept on their bound (never None: see `action_size_bound`)."""
        if self._unsized:
            self._actions_bytes += sum(_strict_size(action) or 0 for action in self._unsized)
            self._unsized, self._unsized_bound = [], 0

    def record_turn(
        self,
        actions: Sequence[JSON | None],
        forfeits: Sequence[int],
        step: StepResult,
        bodies: Sequence[bytes | None] = (),
    ) -> None:
        """One played turn: the raw actions, who forfeited just before it, and what it produced.
        `bodies[player]`, when given, is the answer body that player's action was decoded from."""
        kept = []
        dropped = []
        for player, action in enumerate(actions):
            stored, left_out = self._kept_action(action, bodies[player] if player < len(bodies) else None)
            kept.append(stored)
            if left_out:
                dropped.append(player)
        entry: dict[str, Any] = {"actions": kept}
        if forfeits:
            entry["forfeits"] = list(forfeits)
        if dropped:
            entry["dropped"] = dropped
            self._dropped_actions += len(dropped)
        self._data["turns"].append(entry)
        events = [_event_json(event) for event in step.events]
        texts = [_strict_text(part) for part in (*step.frames, *events)]
        size = 0
        for part, text in zip((*step.frames, *events), texts, strict=True):
            if text is None:  # sized as the replay will store it, made strict
                size += _strict_size(storable(part, max_depth=REPLAY_MAX_DEPTH)) or 0
            else:
                size += _utf8_size(text)
        if self._frames_bytes + size > MAX_REPLAY_FRAMES_BYTES:
            self._dropped_frames += len(step.frames)
            return
        self._frames_bytes += size
        self._data["frames"].extend(step.frames)
        self._data["events"].extend(events)
        self._keep_texts(step.frames, events, texts)

    def _keep_texts(self, frames: list[Any], events: list[Any], texts: list[str | None]) -> None:
        """Remember the text of each frame and event added, for `encode`; a part that is not strict
        JSON ends that (the replay is then made safe as a whole when it is encoded)."""
        kept = self._data.texts
        if kept is None:
            return
        strings = [text for text in texts if text is not None]
        if len(strings) != len(texts):
            self._data.texts = None
            return
        kept["frames"][0].extend(frames)
        kept["frames"][1].extend(strings[: len(frames)])
        kept["events"][0].extend(events)
        kept["events"][1].extend(strings[len(frames) :])

    def record_final_forfeits(self, forfeits: Sequence[int]) -> None:
        """Forfeits that ended the match before another turn was played."""
        if forfeits:
            self._data["final_forfeits"] = list(forfeits)

    def finish(self, match: Match) -> RecordedReplay:
        if self._dropped_frames:
            last = match.frame()  # how it ended, even when the middle is missing
            self._data["frames"].append(last)
            self._keep_texts([last], [], [_strict_text(last)])
        if self._dropped_actions or self._dropped_frames:
            self._data["truncated"] = {"actions": self._dropped_actions, "frames": self._dropped_frames}
        self._data["result"] = match.result().to_json()
        return self._data


def resimulate(game: Game, replay: dict[str, Any]) -> dict[str, Any]:
    """Play a replay's inputs again on a fresh match and return the replay that produces."""
    match = game.create_match(replay["seed"], replay["config"], replay["num_players"])
    recorder = ReplayRecorder(game.name, replay["seed"], replay["config"], replay["num_players"], match)
    for turn in replay["turns"]:
        forfeits = turn.get("forfeits", [])
        for player in forfeits:
            match.forfeit(player)
        recorder.record_turn(turn["actions"], forfeits, match.step(turn["actions"]))
    final = replay.get("final_forfeits", [])
    for player in final:
        match.forfeit(player)
    recorder.record_final_forfeits(final)
    return recorder.finish(match)


def play_local(
    game: Game,
    seed: int,
    bots: Sequence[Decide],
    config: dict[str, JSON] | None = None,
    max_turns: int = 100_000,
) -> dict[str, Any]:
    """Play a whole match in this process with `decide` functions; return its replay.

    Used by tests, benchmarks and examples. Each bot gets a JSON round-trip of its observation so that
    it sees exactly what an HTTP bot would.
    """
    config = config or {}
    match = game.create_match(seed, config, len(bots))
    recorder = ReplayRecorder(game.name, seed, config, len(bots), match)
    while not match.finished and match.turn < max_turns:
        actions = [bot(json.loads(json.dumps(match.observation(player)))) for player, bot in enumerate(bots)]
        recorder.record_turn(actions, [], match.step(actions))
    return recorder.finish(match)


def encode(replay: dict[str, Any]) -> bytes:
    """The replay as compact strict JSON (UTF-8); anything a strict parser would refuse is made safe
    first. A recorded replay's frames and events are written from the text recorded for them."""
    try:
        spliced = replay.spliced_text() if isinstance(replay, RecordedReplay) else None
        return (_STRICT.encode(replay) if spliced is None else spliced).encode("utf-8")
    except (ValueError, TypeError):  # NaN or a lone surrogate somewhere: rare, so checked only now
        return _STRICT.encode(storable(replay, max_depth=REPLAY_MAX_DEPTH)).encode("utf-8")


def compress(replay: dict[str, Any]) -> bytes:
    """The replay as gzipped strict JSON (`encode`): what the database stores."""
    return gzip.compress(encode(replay), compresslevel=6)


def decompress(blob: bytes) -> dict[str, Any]:
    replay = json.loads(gzip.decompress(blob))
    if not isinstance(replay, dict):
        raise ValueError("a replay is a JSON object")
    return replay
