"""Readable text for the terminal: aligned tables, match results, leaderboards and bot lists."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shared.play.local_play import LocalMatch

MAX_ERROR_SAMPLES_SHOWN = 3


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text left-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(value) for value in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(_is_number(row[i]) for row in rows) and bool(rows) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [cell.rjust(widths[i]) if numeric[i] else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    return str(value)


def _rank_text(rank: int | None) -> str:
    return "-" if rank is None else f"{rank + 1}"


def local_result(match: LocalMatch, expected: Sequence[str] = ()) -> str:
    """The result of a local match: one column per player, one row per figure, then samples of
    each player's failed turns and invalid actions, with what was expected of each player."""
    played = match.played
    players = sorted(played.result.players, key=lambda p: p.player)
    headers = ["", *[f"player {p.player}" for p in players]]
    rows: list[list[object]] = [
        ["bot", *[match.specs[p.player].label for p in players]],
        ["rank", *[_rank_text(p.rank) for p in players]],
        ["score", *[p.score for p in players]],
    ]
    metric_names: list[str] = []
    for p in players:
        metric_names += [name for name in p.metrics if name not in metric_names]
    rows += [[name, *[p.metrics.get(name) for p in players]] for name in metric_names]
    stats = [played.stats[p.player] for p in players]
    rows += [
        ["errors", *[s.errors for s in stats]],
        ["timeouts", *[s.timeouts for s in stats]],
        ["forfeited", *[s.forfeited for s in stats]],
        ["latency p50 ms", *[s.latency_p50_ms for s in stats]],
        ["latency p99 ms", *[s.latency_p99_ms for s in stats]],
    ]
    winners = [match.specs[p.player].label for p in players if p.rank == 0]
    outcome = "draw" if len(winners) != 1 else f"winner: {winners[0]}"
    lines = [
        f"{played.replay['game']}  seed {match.seed}  {played.turns} turns  ended: {played.end_reason}  "
        f"{outcome}  ({match.seconds:.1f} s)",
        "",
        table(headers, rows),
    ]
    for p, s in zip(players, stats, strict=True):
        who = f"player {p.player} ({match.specs[p.player].label})"
        for sample in s.error_samples[:MAX_ERROR_SAMPLES_SHOWN]:
            turn = sample.get("turn")
            where = "before the match" if turn is None else f"turn {turn}"
            lines.append(f"{who} {where}: {sample.get('error')}")
        for invalid in s.invalid_samples[:MAX_ERROR_SAMPLES_SHOWN]:
            problems = "; ".join(invalid["problems"])
            lines.append(f"{who} turn {invalid['turn']}: invalid action ({problems}); sent {invalid['sent']}")
        if s.invalid_samples and p.player < len(expected) and expected[p.player]:
            lines.append(f"{who} expected {expected[p.player]}")
        if s.forfeit_reason:
            lines.append(f"{who} {s.forfeit_reason}")
    return "\n".join(lines)


def leaderboard(board: dict[str, Any]) -> str:
    entries = board.get("entries", [])
    if not entries:
        return f"no rated bots in {board.get('game')} yet"
    rows = [
        [
            e["rank"],
            e["bot_name"],
            e["owner_name"],
            round(e["ordinal"], 2),
            round(e["mu"], 2),
            round(e["sigma"], 2),
            e["matches"],
            f"{e['wins']}/{e['draws']}/{e['losses']}",
            e["bot_id"],
        ]
        for e in entries
    ]
    headers = ["rank", "bot", "owner", "ordinal", "mu", "sigma", "matches", "w/d/l", "id"]
    shown = f"{len(entries)} of {board.get('total', len(entries))}"
    return f"{board.get('game')} leaderboard ({shown} bots)\n\n" + table(headers, rows)


def bot_list(page: dict[str, Any]) -> str:
    items = page.get("items", [])
    if not items:
        return "no bots"
    rows = [
        [
            bot["id"],
            bot["name"],
            bot["game"],
            bot["kind"],
            bot["status"],
            bot.get("current_version"),
            None if bot.get("rating") is None else round(bot["rating"]["ordinal"], 2),
            None if bot.get("rating") is None else bot["rating"]["matches_played"],
        ]
        for bot in items
    ]
    headers = ["id", "name", "game", "kind", "status", "version", "ordinal", "matches"]
    return table(headers, rows) + f"\n\n{len(items)} of {page.get('total', len(items))} bots"


def match_summary(match: dict[str, Any], base_url: str) -> str:
    """A match as the API returns it: status, then the participants' results when there are any."""
    lines = [
        f"match {match['id']}  {match['game']}  seed {match['seed']}  status: {match['status']}"
        + (f"  ended: {match['end_reason']}" if match.get("end_reason") else "")
        + (f"  turns: {match['turns']}" if match.get("turns") is not None else ""),
        f"watch: {base_url.rstrip('/')}/matches/{match['id']}",
    ]
    if match.get("error"):
        lines.append(f"error: {match['error']}")
    participants = sorted(match.get("participants", []), key=lambda p: p["slot"])
    if not any(p.get("rank") is not None for p in participants):  # not played yet: who plays
        lines += [f"slot {p['slot']}: {p['bot_name']} (owner {p['owner_name']})" for p in participants]
        return "\n".join(lines)
    metric_names: list[str] = []
    for p in participants:
        metric_names += [name for name in p.get("metrics") or {} if name not in metric_names]
    headers = ["", *[f"slot {p['slot']}" for p in participants]]
    rows: list[list[object]] = [
        ["bot", *[p["bot_name"] for p in participants]],
        ["rank", *[_rank_text(p.get("rank")) for p in participants]],
        ["score", *[p.get("score") for p in participants]],
        *[[name, *[(p.get("metrics") or {}).get(name) for p in participants]] for name in metric_names],
        ["errors", *[p.get("errors") for p in participants]],
        ["timeouts", *[p.get("timeouts") for p in participants]],
        ["forfeited", *[p.get("forfeited") for p in participants]],
        ["latency p50 ms", *[p.get("latency_p50_ms") for p in participants]],
    ]
    rated = [p for p in participants if p.get("mu_after") is not None and p.get("mu_before") is not None]
    if rated:
        rows += _rating_rows(participants)
        note = "rating: mu - 3 sigma, as the leaderboard ranks bots; before -> after this match"
    elif match.get("status") == "finished":
        note = "ratings unchanged: " + (
            "this match was not rated (see the error)" if match.get("rated") else "an unrated match"
        )
    else:
        note = ""
    return "\n".join([*lines, "", table(headers, rows), *(["", note] if note else [])])


def _change(before: float | None, after: float | None, digits: int = 2) -> str | None:
    if before is None or after is None:
        return None
    return f"{before:.{digits}f} -> {after:.{digits}f} ({after - before:+.{digits}f})"


def _rating_rows(participants: list[dict[str, Any]]) -> list[list[object]]:
    """Each participant's rating before and after: the ordinal (mu - 3 sigma), mu and sigma."""

    def ordinal(p: dict[str, Any], when: str) -> float | None:
        mu, sigma = p.get(f"mu_{when}"), p.get(f"sigma_{when}")
        return None if mu is None or sigma is None else mu - 3 * sigma

    return [
        ["rating", *[_change(ordinal(p, "before"), ordinal(p, "after")) for p in participants]],
        ["mu", *[_change(p.get("mu_before"), p.get("mu_after")) for p in participants]],
        ["sigma", *[_change(p.get("sigma_before"), p.get("sigma_after")) for p in participants]],
    ]
