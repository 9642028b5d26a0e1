"""The evolution runs API on the real gateway and test database.

Runs are created through the API (their first chunk goes to the test Redis; no evolver worker runs
here, so they stay queued). What a worker would write (programs, generations, LLM calls, events)
is inserted directly, as services/evolver/store/ writes it, to exercise every read endpoint.
"""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update

from shared.db.models import EvolutionRun, Job
from shared.db.session import session_scope
from shared.states import EvolutionEventKind, JobStatus
from tests.support.accounts import Account, unique
from tests.support.evolution import API, CHILD_CODE, CHILD_DIFF, add_event, create_run, seed_run

LLM_KEY = "sk-evolution-test-" + uuid.uuid4().hex


def set_status(run_id: uuid.UUID, status: JobStatus) -> None:
    with session_scope() as session:
        job_id = session.get(EvolutionRun, run_id).job_id  # type: ignore[union-attr]
        session.execute(update(Job).where(Job.id == job_id).values(status=status))


# --------------------------------------------------------------------------- create and list


def test_create_returns_the_run_without_its_key(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice, api_key=LLM_KEY, limits={"max_generations": 3, "max_cost_usd": 2.5})
    assert run["status"] == "queued"
    assert run["game"] == "podracing"
    assert run["has_api_key"] is True
    assert run["config"]["limits"]["max_generations"] == 3
    assert run["max_cost_usd"] == 2.5
    assert run["max_generations"] == 3
    assert run["parameters"]["exploration_ratio"] == 0.3
    assert LLM_KEY not in json.dumps(run)
    detail = client.get(f"{API}/{run['id']}", headers=alice.headers)
    assert detail.status_code == 200
    assert LLM_KEY not in detail.text
    with session_scope() as session:
        row = session.get(EvolutionRun, uuid.UUID(run["id"]))
        assert row is not None
        assert row.api_key_encrypted is not None
        assert LLM_KEY.encode() not in row.api_key_encrypted
        assert LLM_KEY not in json.dumps(row.config)
    plain = create_run(client, alice)
    assert plain["has_api_key"] is False


def test_invalid_configs_are_422_naming_the_field(client: TestClient, alice: Account) -> None:
    def refuse(body: dict[str, Any], field: str) -> None:
        answer = client.post(
            API, json={"name": unique("evo"), "game": "podracing", **body}, headers=alice.headers
        )
        assert answer.status_code == 422, answer.text
        locs = [e["loc"] for e in answer.json()["errors"]]
        assert any(loc.startswith(field) for loc in locs), locs

    refuse({"config": {"limits": {"max_generations": 0}}}, "body.config.limits.max_generations")
    refuse({"config": {"search": {"islands": 99}}}, "body.config.search.islands")
    refuse({"config": {"llm": {"base_url": "ftp://x"}}}, "body.config.llm.base_url")
    refuse({"config": {"surprise": 1}}, "body.config.surprise")
    refuse({"game": "chess"}, "body.game")
    refuse(
        {"config": {"seeds": ["import os\ndef decide(o):\n    return os.getcwd()\n"]}}, "body.config.seeds"
    )
    refuse({"api_key": ""}, "body.api_key")
    weights = "body.config.evaluation.fitness_weights"
    refuse({"config": {"evaluation": {"fitness_weights": {"kill_rate": 1.0}}}}, weights)  # a battle one
    refuse({"config": {"evaluation": {"fitness_weights": {"win_rate": -1.0, "progress": 2}}}}, weights)
    refuse({"config": {"evaluation": {"fitness_weights": {"win_rate": 0.0}}}}, weights)
    bad = client.post(API, json={"name": "has space", "game": "podracing"}, headers=alice.headers)
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["loc"] == "body.name"
    # The key is never echoed, even in a refusal.
    answer = client.post(
        API, json={"name": unique("evo"), "game": "nope", "api_key": LLM_KEY}, headers=alice.headers
    )
    assert answer.status_code == 422
    assert LLM_KEY not in answer.text


def test_list_filters_by_status_and_pages(client: TestClient, make_user: Any) -> None:
    carol = make_user("carol")
    runs = [create_run(client, carol) for _ in range(3)]
    set_status(uuid.UUID(runs[0]["id"]), JobStatus.STOPPED)
    page = client.get(API, params={"limit": 2}, headers=carol.headers).json()
    assert page["total"] == 3
    assert len(page["items"]) == 2
    assert page["items"][0]["id"] == runs[2]["id"]
    stopped = client.get(API, params={"status": "stopped"}, headers=carol.headers).json()
    assert [r["id"] for r in stopped["items"]] == [runs[0]["id"]]
    assert client.get(API, params={"status": "bogus"}, headers=carol.headers).status_code == 422
    assert client.get(API).status_code == 401


def test_others_get_404_and_admins_see_everything(
    client: TestClient, alice: Account, bob: Account, admin: Account
) -> None:
    run = create_run(client, alice)
    seeded = seed_run(uuid.UUID(run["id"]))
    base = f"{API}/{run['id']}"
    paths = [
        "",
        "/generations",
        "/programs",
        "/programs/p1",
        "/lineage",
        "/grid",
        "/calls",
        f"/calls/{seeded.child_call}",
        "/events",
        "/spend",
        "/payoff",
        "/export",
    ]
    for path in paths:
        assert client.get(base + path, headers=alice.headers).status_code == 200, path
        assert client.get(base + path, headers=admin.headers).status_code == 200, path
        answer = client.get(base + path, headers=bob.headers)
        assert answer.status_code == 404, path
        assert "not found" in answer.json()["detail"]
    for action in ("stop", "resume"):
        assert client.post(f"{base}/{action}", headers=bob.headers).status_code == 404
    assert run["id"] not in json.dumps(client.get(API, headers=bob.headers).json())
    assert client.get(f"{API}/{uuid.uuid4()}", headers=alice.headers).status_code == 404
    assert client.get(f"{API}/not-a-uuid", headers=alice.headers).status_code == 422


def test_stop_and_resume_follow_the_job_state(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice)
    base = f"{API}/{run['id']}"
    resumed = client.post(f"{base}/resume", headers=alice.headers)
    assert resumed.status_code == 409
    assert "nothing to resume" in resumed.json()["detail"]
    stopped = client.post(f"{base}/stop", headers=alice.headers)
    assert stopped.status_code == 200, stopped.text
    assert stopped.json()["status"] == "stopped"
    again = client.post(f"{base}/resume", headers=alice.headers)
    assert again.status_code == 200
    assert again.json()["status"] == "queued"
    set_status(uuid.UUID(run["id"]), JobStatus.FINISHED)
    assert client.post(f"{base}/stop", headers=alice.headers).status_code == 409
    finished = client.post(f"{base}/resume", headers=alice.headers)
    assert finished.status_code == 409
    assert "finished" in finished.json()["detail"]


# --------------------------------------------------------------------------- reading a run


def test_detail_generations_and_programs(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice)
    base = f"{API}/{run['id']}"
    seed_run(uuid.UUID(run["id"]))
    detail = client.get(base, headers=alice.headers).json()
    assert detail["best_program"] == "p2"
    assert detail["best_fitness"] == 0.7
    assert detail["generation"] == 2
    assert detail["tokens"] == 4680
    assert detail["llm_calls"] == 3
    assert detail["spent_usd"] == 0.014
    assert detail["elapsed_s"] == 321.0

    gens = client.get(f"{base}/generations", headers=alice.headers).json()
    assert [g["number"] for g in gens] == [0, 1, 2]
    assert gens[1]["selected"] == ["p2"]
    assert gens[1]["reasoning"] == "p2 boosts well"
    assert gens[1]["stats"]["islands"]["1"]["best"] == 0.55

    programs = client.get(f"{base}/programs", headers=alice.headers).json()
    assert programs["total"] == 5
    assert [p["name"] for p in programs["items"]] == ["p1", "p2", "p3", "p4", "p5"]
    assert all("code" not in p for p in programs["items"])
    gen1 = client.get(f"{base}/programs", params={"generation": 1}, headers=alice.headers).json()
    assert [p["name"] for p in gen1["items"]] == ["p2", "p3", "p4"]
    failed = client.get(f"{base}/programs", params={"status": "failed"}, headers=alice.headers).json()
    assert [p["name"] for p in failed["items"]] == ["p4"]
    assert failed["items"][0]["error"] == "crashed on turn 1"

    p2 = client.get(f"{base}/programs/p2", headers=alice.headers).json()
    assert p2["code"] == CHILD_CODE
    assert p2["diff"] == CHILD_DIFF
    assert p2["parent"] == "p1"
    assert p2["parent_fitness"] == 0.4
    assert p2["children"] == ["p5"]
    assert p2["inspirations"] == ["p1"]
    assert p2["cell"] == [3, 2]
    assert p2["feedback"] == {"summary": "wins races"}
    assert p2["metrics"]["per_opponent"]["builtin:idle"]["wins"] == 4
    p1 = client.get(f"{base}/programs/1", headers=alice.headers).json()
    assert p1["name"] == "p1"
    assert p1["children"] == ["p2", "p3", "p4"]
    assert p1["parent"] is None
    missing = client.get(f"{base}/programs/p99", headers=alice.headers)
    assert missing.status_code == 404
    assert "no program p99" in missing.json()["detail"]
    for name in ("robots", "p\u00b2", "p" + "9" * 20, "-1"):
        assert client.get(f"{base}/programs/{name}", headers=alice.headers).status_code == 404, name
    assert client.get(f"{base}/programs/{'p' * 30}", headers=alice.headers).status_code == 422


def test_lineage_and_grid(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice, search={"grid_bins": 5, "islands": 2})
    base = f"{API}/{run['id']}"
    seed_run(uuid.UUID(run["id"]))
    lineage = client.get(f"{base}/lineage", headers=alice.headers).json()
    nodes = {n["name"]: n for n in lineage["nodes"]}
    assert lineage["best"] == "p2"
    assert nodes["p5"]["parent"] == "p2"
    assert nodes["p1"]["parent"] is None
    assert nodes["p3"]["island"] == 1
    assert nodes["p4"]["status"] == "failed"

    grid = client.get(f"{base}/grid", headers=alice.headers).json()
    assert grid["bins"] == 5
    assert grid["islands"] == 2
    assert grid["descriptors"] == ["aggression", "accuracy"]
    cells = {(c["x"], c["y"]): c for c in grid["cells"]}
    assert set(cells) == {(1, 2), (3, 2)}
    assert cells[(3, 2)]["name"] == "p2"
    assert cells[(3, 2)]["programs"] == 2
    assert cells[(1, 2)]["name"] == "p1"
    assert cells[(1, 2)]["fitness"] == 0.4
    assert grid["occupancy"] == {"0": 2, "1": 1}
    assert grid["cells_filled"] == 2


def test_calls_events_and_spend(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice, limits={"max_cost_usd": 1.5})
    base = f"{API}/{run['id']}"
    seeded = seed_run(uuid.UUID(run["id"]))
    calls = client.get(f"{base}/calls", headers=alice.headers).json()
    assert calls["total"] == 3
    assert all("prompt" not in c for c in calls["items"])
    children = client.get(f"{base}/calls", params={"role": "child"}, headers=alice.headers).json()
    assert {c["key"] for c in children["items"]} == {"g1:child:p2/a", "g1:child:p4"}
    assert client.get(f"{base}/calls", params={"role": "boss"}, headers=alice.headers).status_code == 422
    one = client.get(f"{base}/calls/{seeded.child_call}", headers=alice.headers).json()
    assert one["prompt"][1]["content"].startswith("improve p1: ")
    assert len(one["prompt"][1]["content"]) > 500
    assert one["answer"] == "<<<SEARCH ... >>>"
    assert one["prompt_tokens"] == 3000
    root = client.get(f"{base}/calls/{seeded.root_call}", headers=alice.headers).json()
    assert root["tool_call_list"][0]["name"] == "spawn_children"
    assert client.get(f"{base}/calls/{uuid.uuid4()}", headers=alice.headers).status_code == 404

    first = client.get(f"{base}/events", params={"limit": 4}, headers=alice.headers).json()
    assert [e["id"] for e in first["items"]] == seeded.events[:4]
    assert first["items"][1]["kind"] == "root_decision"
    assert first["status"] == "queued"
    rest = client.get(f"{base}/events", params={"after": first["next_after"]}, headers=alice.headers).json()
    assert [e["id"] for e in rest["items"]] == seeded.events[4:]
    empty = client.get(f"{base}/events", params={"after": rest["next_after"]}, headers=alice.headers).json()
    assert empty["items"] == []
    assert empty["next_after"] == rest["next_after"]
    new_id = add_event(seeded.run_id, EvolutionEventKind.FALLBACK, 2, {"why": "late"})
    later = client.get(f"{base}/events", params={"after": rest["next_after"]}, headers=alice.headers).json()
    assert [e["id"] for e in later["items"]] == [new_id]
    kinds = client.get(
        f"{base}/events", params=[("kind", "fallback"), ("kind", "root_decision")], headers=alice.headers
    ).json()
    assert {e["kind"] for e in kinds["items"]} == {"fallback", "root_decision"}
    assert client.get(f"{base}/events", params={"after": -1}, headers=alice.headers).status_code == 422

    spend = client.get(f"{base}/spend", headers=alice.headers).json()
    lines = {(s["role"], s["model"]): s for s in spend["lines"]}
    assert lines[("root", "root-model")]["cost_usd"] == 0.004
    assert lines[("child", "child-model")]["calls"] == 2
    assert lines[("child", "child-model")]["failed"] == 1
    assert spend["budget_usd"] == 1.5
    assert spend["total_usd"] == 0.014


def test_payoff_table_with_nash_fitness(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice)
    seed_run(uuid.UUID(run["id"]))
    payoff = client.get(f"{API}/{run['id']}/payoff", headers=alice.headers).json()
    assert payoff["opponents"] == ["builtin:blocker", "builtin:idle", "builtin:runner"]
    rows = {r["program"]: r for r in payoff["rows"]}
    assert set(rows) == {"p1", "p2", "p3"}
    cells = {c["opponent"]: c for c in rows["p2"]["cells"]}
    assert cells["builtin:blocker"]["win_rate"] == 0.625
    assert cells["builtin:idle"]["games"] == 4
    # Every program beats the idle bot: the opponents' mixture gives it no weight.
    assert payoff["mixture"]["builtin:idle"] < 0.02
    assert abs(sum(payoff["mixture"].values()) - 1) < 1e-6
    assert payoff["rows"][0]["program"] == "p2"
    assert rows["p2"]["nash_fitness"] > rows["p1"]["nash_fitness"]
    # Nash fitness is below the plain average for p1, which farmed the idle bot.
    assert rows["p1"]["nash_fitness"] < (0.25 + 0.5 + 1.0) / 3


def test_export_archive_has_the_run_directory_and_no_key(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice, api_key=LLM_KEY)
    seed_run(uuid.UUID(run["id"]), finished=True)
    answer = client.get(f"{API}/{run['id']}/export", headers=alice.headers)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/gzip"
    top = f"evolution-{run['name']}-{uuid.UUID(run['id']).hex[:8]}"
    assert answer.headers["content-disposition"] == f'attachment; filename="{top}.tar.gz"'
    with tarfile.open(fileobj=io.BytesIO(answer.content), mode="r:gz") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    for name in (
        "config.json",
        "summary.json",
        "evolution_log.jsonl",
        "root_llm_log.jsonl",
        "best_bot.py",
        "generations/gen_000/generation_summary.json",
        "generations/gen_001/programs/p00002/code.py",
        "generations/gen_001/programs/p00002/metrics.json",
        "generations/gen_001/programs/p00002/metadata.json",
        "generations/gen_001/programs/p00002/parent_info.json",
        "generations/gen_001/llm_calls/g1_child_p2_a.json",
    ):
        assert f"{top}/{name}" in files, name
    assert files[f"{top}/generations/gen_001/programs/p00002/code.py"].decode() == CHILD_CODE
    assert CHILD_CODE in files[f"{top}/best_bot.py"].decode()
    summary = json.loads(files[f"{top}/summary.json"])
    assert summary["best_program"] == "p2"
    assert summary["termination_reason"] == "max generations"
    for content in files.values():
        assert LLM_KEY.encode() not in content
    assert LLM_KEY.encode() not in answer.content


def test_a_run_stores_its_fitness_weights(client: TestClient, alice: Account) -> None:
    """The game's defaults unless given, so a later change of the defaults never rescales a run."""
    plain = create_run(client, alice)
    assert plain["config"]["evaluation"]["fitness_weights"] == {"win_rate": 0.9, "progress": 0.1}
    chosen = create_run(client, alice, evaluation={"fitness_weights": {"progress": 1.0}})
    assert chosen["config"]["evaluation"]["fitness_weights"] == {"progress": 1.0}
    with session_scope() as session:
        row = session.get(EvolutionRun, uuid.UUID(chosen["id"]))
        assert row is not None
        assert row.config["evaluation"]["fitness_weights"] == {"progress": 1.0}
