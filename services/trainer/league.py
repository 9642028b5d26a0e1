"""The league: a hall of fame of frozen policies with OpenSkill ratings, as on the platform.

The learner is rated too (entry "latest"); every race between the learner and a league member
updates both. When the hall is full, the oldest entry outside the protected top (by ordinal
mu - 3 sigma) leaves, so the strongest opponents are never forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from shared.ratings import Skill, default_skill, rate

LATEST = "latest"


@dataclass(slots=True)
class LeagueEntry:
    name: str
    iteration: int
    actor: dict[str, torch.Tensor] = field(repr=False)
    """Frozen actor weights."""
    skill: Skill = field(default_factory=default_skill)
    races: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "iteration": self.iteration,
            "mu": round(self.skill.mu, 3),
            "sigma": round(self.skill.sigma, 3),
            "ordinal": round(self.skill.ordinal, 3),
            "races": self.races,
        }


@dataclass(slots=True)
class League:
    capacity: int = 20
    protected: int = 5
    """The top entries by ordinal that pruning never removes."""
    entries: list[LeagueEntry] = field(default_factory=list)
    latest: Skill = field(default_factory=default_skill)
    latest_races: int = 0

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, name: str, iteration: int, actor: dict[str, torch.Tensor]) -> LeagueEntry:
        """Freeze a copy of the learner; it starts from the learner's current rating."""
        frozen = {key: value.detach().clone().cpu() for key, value in actor.items()}
        entry = LeagueEntry(name, iteration, frozen, self.latest, 0)
        self.entries.append(entry)
        self._prune()
        return entry

    def _prune(self) -> None:
        while len(self.entries) > max(self.capacity, self.protected):
            ranked = sorted(self.entries, key=lambda e: e.skill.ordinal, reverse=True)
            keep = {id(e) for e in ranked[: self.protected]}
            oldest = min((e for e in self.entries if id(e) not in keep), key=lambda e: e.iteration)
            self.entries.remove(oldest)

    def sample(self, count: int, generator: torch.Generator) -> list[LeagueEntry]:
        """Up to `count` distinct entries drawn uniformly."""
        if not self.entries:
            return []
        order = torch.randperm(len(self.entries), generator=generator, device=generator.device).tolist()
        return [self.entries[i] for i in order[:count]]

    def record(self, entry: LeagueEntry, wins: int, losses: int, draws: int) -> None:
        """Rate the learner against `entry` for a batch of finished races (one update per race)."""
        for result in [0] * wins + [1] * losses + [2] * draws:
            ranks = [1, 2] if result == 0 else [2, 1] if result == 1 else [1, 1]
            self.latest, entry.skill = rate([self.latest, entry.skill], ranks)
            entry.races += 1
            self.latest_races += 1

    def table(self) -> list[dict[str, Any]]:
        """The league by ordinal, the learner included, for pages and the API."""
        rows = [e.summary() for e in self.entries]
        rows.append(
            {
                "name": LATEST,
                "iteration": None,
                "mu": round(self.latest.mu, 3),
                "sigma": round(self.latest.sigma, 3),
                "ordinal": round(self.latest.ordinal, 3),
                "races": self.latest_races,
            }
        )
        return sorted(rows, key=lambda r: r["ordinal"], reverse=True)

    def state(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "protected": self.protected,
            "latest": [self.latest.mu, self.latest.sigma, self.latest_races],
            "entries": [
                {
                    "name": e.name,
                    "iteration": e.iteration,
                    "actor": e.actor,
                    "skill": [e.skill.mu, e.skill.sigma],
                    "races": e.races,
                }
                for e in self.entries
            ],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> League:
        league = cls(capacity=int(state["capacity"]), protected=int(state["protected"]))
        mu, sigma, races = state["latest"]
        league.latest, league.latest_races = Skill(float(mu), float(sigma)), int(races)
        for e in state["entries"]:
            skill = Skill(float(e["skill"][0]), float(e["skill"][1]))
            league.entries.append(
                LeagueEntry(e["name"], int(e["iteration"]), e["actor"], skill, int(e["races"]))
            )
        return league
