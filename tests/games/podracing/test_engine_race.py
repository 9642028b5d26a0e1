"""Checkpoints, laps, the win, timeouts, the turn limit, the track generator and the start."""

from __future__ import annotations

import itertools

import pytest

from shared.games.podracing.engine import PodCommand, Race, RaceConfig, generate_track
from tests.support.podracing_races import idle, place, race

TRACK = [(10000, 5000), (5000, 0), (20000, 20000)]


def test_checkpoint_passed_mid_turn_without_ending_inside() -> None:
    r = race(TRACK)
    place(r, 0, 3800, 0, vx=2400)  # enters the 599 circle at x = 4401 (u = 601 / 2400), ends at 6200
    events = r.step(idle(r))
    assert [(e.kind, e.pod, e.checkpoint) for e in events] == [("checkpoint", 0, 1)]
    assert abs(events[0].time - 601 / 2400) < 1e-12
    pod = r.pods[0]
    assert (pod.next_checkpoint, pod.checkpoints_passed, pod.x) == (2, 2, 6200.0)


def test_no_pass_when_starting_inside_or_stopping_short() -> None:
    r = race(TRACK)
    place(r, 0, 4600, 0, vx=2000)  # starts inside the checkpoint and drives through it
    place(r, 1, 3000, 0, vx=1300)  # stops at 4300, 700 short of the centre (outside 599)
    r.step(idle(r))
    assert [(p.next_checkpoint, p.checkpoints_passed) for p in r.pods[:2]] == [(1, 1), (1, 1)]


def test_only_the_next_checkpoint_counts() -> None:
    r = race(TRACK)
    place(r, 0, 8000, 5000, vx=4000)  # flies through checkpoint 0 while heading for checkpoint 1
    r.step(idle(r))
    assert r.pods[0].checkpoints_passed == 1


def test_passing_resets_the_player_timeout() -> None:
    r = race(TRACK, timeout_turns=2)
    place(r, 2, 3400, 0, vx=600)  # turn 1: x = 4000, outside; turn 2: passes
    r.step(idle(r))
    assert r.timeouts == [1, 1]
    assert not r.finished
    events = r.step(idle(r))
    assert r.pods[2].checkpoints_passed == 2
    assert r.timeouts == [0, 1]
    assert r.finished
    assert r.reason == "timeout"
    assert r.winner == 1
    assert r.ranks() == [1, 0]
    assert [(e.kind, e.player) for e in events if e.kind == "timeout"] == [("timeout", 0)]


def test_both_timing_out_ranks_by_progress() -> None:
    r = race(TRACK, timeout_turns=1)
    place(r, 0, 5000, 3000)  # 3000 from checkpoint 1
    place(r, 2, 5000, -2000)  # 2000 from checkpoint 1: player 1 leads
    r.step(idle(r))
    assert r.finished
    assert r.reason == "timeout"
    assert r.ranks() == [1, 0]
    assert r.winner == 1


def test_laps_need_n_times_laps_plus_one_passes() -> None:
    r = race([(0, 0), (5000, 0)], laps=1)
    assert r.total_passes == 3  # the start on checkpoint 0 counts as pass 1
    place(r, 0, 4000, 0, vx=800)
    r.step(idle(r))
    assert (r.pods[0].checkpoints_passed, r.pods[0].next_checkpoint) == (2, 0)
    assert not r.finished
    place(r, 0, -1000, 0, vx=800)
    events = r.step(idle(r))
    assert r.finished
    assert r.reason == "won"
    assert r.winner == 0
    assert r.winning_pod == 0
    assert events[-1].kind == "win"
    assert abs(events[-1].time - 401 / 800) < 1e-12
    with pytest.raises(RuntimeError):
        r.step(idle(r))


def test_three_laps_on_three_checkpoints_is_ten_passes() -> None:
    r = race(TRACK, laps=3)
    assert r.total_passes == 10
    place(r, 0, 4000, 0, vx=800, checkpoints_passed=8)
    r.step(idle(r))
    assert r.pods[0].checkpoints_passed == 9
    assert not r.finished


@pytest.mark.parametrize(("pod2_start", "winner"), [(-1000, 0), (-950, 1)])
def test_first_finisher_in_time_wins_exact_tie_to_lower_pod(pod2_start: int, winner: int) -> None:
    r = race([(0, 0), (5000, 0)], laps=1)
    place(r, 0, -1000, 0, vx=800, checkpoints_passed=2, next_checkpoint=0)
    place(r, 2, 0, pod2_start, vy=800, checkpoints_passed=2, next_checkpoint=0)
    r.step(idle(r))
    assert r.finished
    assert r.winner == winner
    assert r.winning_pod == (0 if winner == 0 else 2)
    assert r.pods[0].checkpoints_passed == r.pods[2].checkpoints_passed == 3


def test_turn_limit_ranks_by_checkpoints_then_distance_and_equal_is_a_draw() -> None:
    r = race(TRACK, turn=0, max_turns=2)
    place(r, 0, 5000, 2000)
    place(r, 2, 5000, -2000)
    r.step(idle(r))
    assert not r.finished
    assert r.ranks() == [0, 0]
    r.step(idle(r))
    assert r.finished
    assert r.reason == "turn_limit"
    assert r.winner is None
    assert r.ranks() == [0, 0]

    r = race(TRACK, max_turns=1)
    place(r, 1, 5000, 1500)  # player 0's best pod is its second one
    place(r, 2, 5000, -2000)
    r.step(idle(r))
    assert r.ranks() == [0, 1]

    r = race(TRACK, max_turns=1)
    place(r, 1, 5000, 1500)
    place(r, 3, 30000, 30000, checkpoints_passed=2, next_checkpoint=2)  # more passes beats distance
    r.step(idle(r))
    assert r.ranks() == [1, 0]


def test_forfeit_ends_the_race_for_the_other_player() -> None:
    r = race(TRACK)
    r.forfeit(0)
    assert r.finished
    assert r.reason == "forfeit"
    assert r.winner == 1
    assert r.ranks() == [1, 0]


def test_generated_tracks_respect_the_constraints() -> None:
    counts = set()
    for seed, config in itertools.chain(
        ((s, RaceConfig()) for s in range(300)),
        ((s, RaceConfig(checkpoints_min=8, checkpoints_max=8)) for s in range(40)),
    ):
        track = generate_track(seed, config)
        counts.add(len(track))
        assert config.checkpoints_min <= len(track) <= config.checkpoints_max
        for x, y in track:
            assert isinstance(x, int)
            assert isinstance(y, int)
            assert 2000 <= x <= 14000
            assert 2000 <= y <= 7000
        for (x1, y1), (x2, y2) in itertools.combinations(track, 2):
            assert (x1 - x2) ** 2 + (y1 - y2) ** 2 > 3000**2
    assert counts == set(range(3, 9))
    assert generate_track(7, RaceConfig()) == generate_track(7, RaceConfig())
    assert len({tuple(generate_track(s, RaceConfig())) for s in range(20)}) == 20


def test_start_positions_are_perpendicular_offsets() -> None:
    r = Race(RaceConfig(), [(5000, 5000), (8000, 9000), (2000, 2000)])
    # d = (3000, 4000), p = (-0.8, 0.6); offsets +500, -1500, -500, +1500.
    assert [(p.x, p.y) for p in r.pods] == [(4600, 5300), (6200, 4100), (5400, 4700), (3800, 5900)]
    r = Race(RaceConfig(), [(5000, 5000), (8000, 8000), (2000, 2000)])
    # p = (-0.7071, 0.7071): 500 * 0.7071 = 353.55 rounds to 354 away from the centre.
    assert (r.pods[0].x, r.pods[0].y) == (4646, 5354)
    assert (r.pods[1].x, r.pods[1].y) == (6061, 3939)
    for pod in r.pods:
        assert (pod.vx, pod.vy, pod.angle, pod.next_checkpoint, pod.checkpoints_passed) == (0, 0, 0, 1, 1)
        assert pod.boost_available
        assert pod.shield_cooldown == 0


def test_same_commands_give_the_same_race() -> None:
    def play() -> list[tuple[float, ...]]:
        r = Race.from_seed(11)
        for turn in range(60):
            commands = []
            for i, pod in enumerate(r.pods):
                cx, cy = r.checkpoints[pod.next_checkpoint]
                commands.append(PodCommand(cx + 37 * i, cy - 11 * turn, 60 + 10 * i, shield=turn == 20 + i))
            r.step(commands)
        return [(p.x, p.y, p.vx, p.vy, p.angle, p.checkpoints_passed) for p in r.pods]

    assert play() == play()
