"""The dashboards and alerts show what the code exports.

Every Grafana panel's and every alert rule's PromQL is parsed for the metric names it reads
(tests/support/promql.py); the real services are started as compose starts them (the gateway under
uvicorn, the match-runner, trainer and evolver workers as Celery workers with their metrics ports
set) and scraped. Every name a panel or rule reads must be declared by a service's /metrics (its
`# TYPE` lines, so a counter `x` exports `x_total`, a histogram `x_bucket`, `x_count`, `x_sum`), and
have a series there already (labelled metrics are created at import for every bounded label value);
each service's dashboard reads only that service's metrics and shows every `arena_` metric the
service exports. Plus the provisioning: one datasource uid everywhere, the dashboards' folder where
Grafana looks, one scrape job per service; and, where promtool is installed (Debian's `prometheus`
package), `promtool check` on the config, the rules and each scrape, and `promtool test rules`.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import yaml

from services.evolver.commands import worker_command as evolver_command
from services.match_runner.commands import worker_command as match_runner_command
from services.trainer.commands import worker_command as trainer_command
from shared.ports import free_port
from shared.queue import QUEUES
from tests.support.environment import ROOT
from tests.support.processes import PYTHON, ManagedProcess
from tests.support.promql import PromQLError, exported_names, metric_names, sampled_names, walk_panels

DEPLOY = ROOT / "deploy"
DASHBOARDS = DEPLOY / "grafana" / "dashboards"
PROVISIONING = DEPLOY / "grafana" / "provisioning"
PROMETHEUS = DEPLOY / "prometheus"
RULE_TESTS = [
    Path(__file__).parent / name for name in ("prometheus_rules_test.yml", "prometheus_spend_rules_test.yml")
]

SERVICES = ("gateway", "match-runner", "trainer", "evolver")
"""Compose service names = Prometheus job names = per-service dashboard file names."""
OVERVIEW = "arena.json"
PROMETHEUS_SERIES = frozenset({"up", "ALERTS", "ALERTS_FOR_STATE"})
"""Series Prometheus makes itself (scrape health, alert state)."""
DATA_DEPENDENT = frozenset(
    {"arena_active_bots", "arena_events_published_total", "arena_events_received_total"}
)
"""Series that appear with their data: a game's active-bot gauge with its first active bot, the
live-event counters (shared/events) with the first event of a topic family."""
SHARED_FAMILIES = frozenset({"arena_events_published", "arena_events_received"})
"""shared/events' counters, declared by every process that imports it: a service's dashboard shows
them where the service publishes or subscribes, and need not elsewhere."""
PREFIXES = {"match-runner": "arena_runner_", "trainer": "arena_trainer_", "evolver": "arena_evolver_"}
"""Whose an `arena_` family is; the gateway's have none of these prefixes. A process may declare
another service's metrics when it runs the same shared code (the evolver plays evaluation matches on
the turn loop of shared/play, so it has arena_runner_* turn series of its own, job="evolver")."""


def owner(family: str) -> str | None:
    if family in SHARED_FAMILIES or not family.startswith("arena_") or family.endswith("_created"):
        return None  # shared code, a library's, or a counter's or histogram's creation time
    return next((service for service, prefix in PREFIXES.items() if family.startswith(prefix)), "gateway")


REQUIRED_ALERTS = {"QueueBacklog", "WorkerHeartbeatStale", "BotFailureRateHigh", "LlmSpendOverBudget"}
SEVERITIES = {"warning", "critical"}


# ---------------------------------------------------------------- what the files say
def load_dashboards() -> dict[str, dict[str, Any]]:
    boards = {path.name: json.loads(path.read_text()) for path in sorted(DASHBOARDS.glob("*.json"))}
    assert boards, f"no dashboards in {DASHBOARDS}"
    return boards


def panel_exprs(board: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, expr) of every query of every panel."""
    found = []
    for panel in walk_panels(board.get("panels", [])):
        for target in panel.get("targets", []) or []:
            if target.get("expr"):
                found.append((str(panel.get("title")), str(target["expr"])))
    return found


def load_rules() -> list[dict[str, Any]]:
    config = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    return [rule for group in config["groups"] for rule in group["rules"]]


def recorded() -> dict[str, set[str]]:
    """Recording rules: the name each records -> the metrics its expression reads."""
    out: dict[str, set[str]] = {}
    for rule in load_rules():
        if "record" in rule:
            out.setdefault(rule["record"], set()).update(metric_names(str(rule["expr"])))
    return out


def every_query() -> list[tuple[str, str]]:
    """(where, expr) of every panel and every rule."""
    queries = [
        (f"{name}: {title}", expr)
        for name, board in load_dashboards().items()
        for title, expr in panel_exprs(board)
    ]
    queries += [
        (f"alerts.yml: {rule.get('alert') or rule.get('record')}", str(rule["expr"])) for rule in load_rules()
    ]
    return queries


# ---------------------------------------------------------------- the parser itself
@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ("sum by (route) (rate(arena_http_requests_total[5m]))", {"arena_http_requests_total"}),
        (
            "histogram_quantile(0.95, sum by (le, game) "
            '(rate(x_bucket{game=~"a|b", le!="+Inf"}[$__rate_interval])))',
            {"x_bucket"},
        ),
        ("max by (queue) (q) > on (queue) group_left (kind) arena:threshold", {"q", "arena:threshold"}),
        ("a / ignoring (kind) b offset 1d + c @ start() - 2^30 * 1e3", {"a", "b", "c"}),
        ('count(ALERTS{alertstate="firing"}) or vector(0)', {"ALERTS"}),
        (
            "max_over_time(rate(x_total[5m])[1h:1m]) and bool y unless without_z",
            {"x_total", "y", "without_z"},
        ),
        ('label_replace(vector(1), "dst", "$1", "src", "(.*)")', set()),
        ("time() - max(last_seen_timestamp_seconds)", {"last_seen_timestamp_seconds"}),
    ],
)
def test_the_parser_finds_exactly_the_metric_names(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


@pytest.mark.parametrize("expr", ["rte(x[5m])", "sum(rate(x[5m])", "x}", "rate"])
def test_the_parser_refuses_what_is_not_promql(expr: str) -> None:
    with pytest.raises(PromQLError):
        metric_names(expr)


def test_the_exposition_parser_expands_counters_and_histograms() -> None:
    text = (
        "# HELP a_total things\n# TYPE a_total counter\n"
        "# HELP h seconds\n# TYPE h histogram\n"
        "# HELP g level\n# TYPE g gauge\ng 1.0\n"
    )
    families = exported_names(text)
    assert families["a"] == {"a_total", "a_created"}
    assert families["h"] == {"h_bucket", "h_count", "h_sum", "h_created"}
    assert sampled_names(text) == {"g"}


# ---------------------------------------------------------------- files and provisioning
def test_every_panel_uses_the_provisioned_prometheus_datasource_and_every_query_parses() -> None:
    sources = yaml.safe_load((PROVISIONING / "datasources" / "prometheus.yml").read_text())["datasources"]
    uids = {s["uid"] for s in sources if s["type"] == "prometheus"}
    assert len(uids) == 1, "one Prometheus datasource"
    boards = load_dashboards()
    assert len({board["uid"] for board in boards.values()}) == len(boards), "dashboard uids are unique"
    assert set(boards) == {OVERVIEW, *(f"{s}.json" for s in SERVICES)}, "an overview and one per service"
    for name, board in boards.items():
        panels = [p for p in walk_panels(board["panels"]) if p.get("type") != "row"]
        assert panels, f"{name} has no panels"
        for panel in panels:
            where = f"{name}: {panel.get('title')}"
            assert panel.get("datasource", {}).get("uid") in uids, f"{where}: datasource"
            assert panel.get("targets"), f"{where}: no query"
            for target in panel["targets"]:
                assert target.get("datasource", panel["datasource"])["uid"] in uids, (
                    f"{where}: target datasource"
                )
                assert metric_names(target["expr"]) or "vector(" in target["expr"], (
                    f"{where}: reads no metric"
                )


def test_grafana_loads_the_dashboards_from_the_folder_compose_mounts() -> None:
    providers = yaml.safe_load((PROVISIONING / "dashboards" / "arena.yml").read_text())["providers"]
    paths = {p["options"]["path"] for p in providers}
    grafana = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["grafana"]
    mounts = {source: target for source, target, *_ in (v.split(":") for v in grafana["volumes"])}
    assert mounts.get("./deploy/grafana/dashboards") in paths
    assert mounts.get("./deploy/grafana/provisioning") == "/etc/grafana/provisioning"


def test_prometheus_scrapes_every_service_and_loads_the_rules() -> None:
    config = yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text())
    jobs = {job["job_name"] for job in config["scrape_configs"]}
    assert jobs == set(SERVICES)
    assert config["rule_files"] == ["alerts.yml"], "relative to prometheus.yml: the mounted folder"
    named_jobs = {
        job
        for _, expr in every_query()
        for matcher in re.findall(r'job=~?"([^"]+)"', expr)
        for job in matcher.split("|")
    }
    assert named_jobs <= jobs, f"queries name jobs Prometheus does not have: {named_jobs - jobs}"


def test_the_alert_rules_are_complete() -> None:
    alerts = {rule["alert"]: rule for rule in load_rules() if "alert" in rule}
    assert set(alerts) >= REQUIRED_ALERTS
    for name, rule in alerts.items():
        assert rule.get("for"), f"{name}: no `for:`, so one bad scrape would page"
        assert rule.get("labels", {}).get("severity") in SEVERITIES, f"{name}: severity"
        assert rule.get("annotations", {}).get("description"), f"{name}: description"
        assert rule.get("annotations", {}).get("summary"), f"{name}: summary"
        metric_names(str(rule["expr"]))  # parses


promtool = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")


@promtool
def test_promtool_accepts_the_config_and_rules_and_the_alerts_fire_when_they_should() -> None:
    for command in (
        ["promtool", "check", "config", str(PROMETHEUS / "prometheus.yml")],
        ["promtool", "check", "rules", str(PROMETHEUS / "alerts.yml")],
        ["promtool", "test", "rules", *map(str, RULE_TESTS)],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"


# ---------------------------------------------------------------- the services, scraped
def _start(args: list[str], name: str, env: dict[str, str]) -> ManagedProcess:
    return ManagedProcess(args, name, env=env)


def _worker(command: list[str], name: str) -> list[str]:
    return [*command, "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h", "--without-heartbeat"]


@pytest.fixture(scope="module")
def scrapes(database_url: str, redis_url: str) -> Iterator[dict[str, str]]:  # noqa: ARG001 (requested for its side effect)
    """Each service's /metrics text, from the real processes compose runs (started side by side)."""
    broker = redis.Redis.from_url(redis_url)
    broker.delete(*QUEUES)  # messages other modules left must not reach these workers
    ports = {service: free_port() for service in SERVICES}
    processes = {
        "gateway": _start(
            [
                PYTHON,
                "-m",
                "uvicorn",
                "services.gateway.app:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(ports["gateway"]),
            ],
            "metrics-gateway",
            {},
        ),
        "match-runner": _start(
            _worker(match_runner_command(python=PYTHON), "metrics-runner"),
            "metrics-runner",
            {"ARENA_WORKER_METRICS_PORT": str(ports["match-runner"])},
        ),
        "trainer": _start(
            _worker(trainer_command(python=PYTHON), "metrics-trainer"),
            "metrics-trainer",
            {"ARENA_TRAINER_METRICS_PORT": str(ports["trainer"]), "ARENA_TRAINING_TORCH_THREADS": "1"},
        ),
        "evolver": _start(
            _worker(evolver_command(python=PYTHON), "metrics-evolver"),
            "metrics-evolver",
            {"ARENA_EVOLVER_METRICS_PORT": str(ports["evolver"])},
        ),
    }
    try:
        urls = {service: f"http://127.0.0.1:{port}/metrics" for service, port in ports.items()}
        for service, process in processes.items():
            process.wait_http(urls[service], timeout=90)
        gateway = f"http://127.0.0.1:{ports['gateway']}"
        for path in ("/health", "/api/v1/games", "/api/v1/bots/not-a-uuid"):
            httpx.get(gateway + path, timeout=10)  # requests of both kinds, so their series exist
        yield {service: httpx.get(url, timeout=10).text for service, url in urls.items()}
    finally:
        for process in processes.values():  # all at once: each takes seconds to shut down
            process.kill(signal.SIGTERM)
        for process in processes.values():
            process.stop()


def _exported(scrapes: dict[str, str]) -> dict[str, set[str]]:
    """Service -> every sample name it declares."""
    return {service: set().union(*exported_names(text).values()) for service, text in scrapes.items()}


@pytest.mark.slow
def test_every_metric_a_panel_or_alert_reads_is_exported_by_a_service(scrapes: dict[str, str]) -> None:
    exported = _exported(scrapes)
    anywhere = set().union(*exported.values())
    sampled = set().union(*(sampled_names(text) for text in scrapes.values()))
    records = recorded()
    missing, empty = [], []
    for where, expr in every_query():
        for name in metric_names(expr) - PROMETHEUS_SERIES:
            if name in records:
                unknown = records[name] - anywhere
                if unknown:
                    missing.append(f"{where}: {name} records {sorted(unknown)}")
            elif name not in anywhere:
                missing.append(f"{where}: {name}")
            elif name not in sampled and name not in DATA_DEPENDENT:
                empty.append(f"{where}: {name}")
    assert not missing, "read but exported by no service:\n" + "\n".join(missing)
    assert not empty, "declared but without any series yet:\n" + "\n".join(empty)


@pytest.mark.slow
def test_each_service_dashboard_reads_only_its_service_and_shows_all_it_exports(
    scrapes: dict[str, str],
) -> None:
    exported = _exported(scrapes)
    records = recorded()
    boards = load_dashboards()
    for service in SERVICES:
        read: set[str] = set()
        for title, expr in panel_exprs(boards[f"{service}.json"]):
            for name in metric_names(expr) - PROMETHEUS_SERIES:
                needs = records.get(name, {name})
                foreign = needs - exported[service]
                assert not foreign, f"{service}.json: {title}: {sorted(foreign)} are not {service}'s"
                read |= needs
        families = exported_names(scrapes[service])
        own = {family for family in families if owner(family) == service}
        assert own, f"{service} exports no metric of its own"
        unshown = {family for family in own if not families[family] & read}
        assert not unshown, f"{service} exports {sorted(unshown)} but its dashboard shows none of them"


@promtool
def test_promtool_finds_nothing_to_lint_in_any_scrape(scrapes: dict[str, str]) -> None:
    """Names, types, units and help text as Prometheus wants them (`promtool check metrics`)."""
    for service, text in scrapes.items():
        done = subprocess.run(
            ["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"{service}:\n{done.stdout}{done.stderr}"
        assert not (done.stdout + done.stderr).strip(), f"{service}:\n{done.stdout}{done.stderr}"


@pytest.mark.slow
def test_a_metric_several_services_export_is_always_read_for_one_job(scrapes: dict[str, str]) -> None:
    """The evolver's in-process evaluation matches have arena_runner_* series too, and every process
    has process_* and the live-event counters: a query that did not pick the job would mix them
    (candidates failing by design would count as failing ladder bots)."""
    exported = _exported(scrapes)
    shared = {
        name for name in set().union(*exported.values()) if sum(name in e for e in exported.values()) > 1
    }
    boards = load_dashboards()
    queries = [
        (f"{name}: {title}", name, expr)
        for name, board in boards.items()
        for title, expr in panel_exprs(board)
    ]
    queries += [("alerts.yml", OVERVIEW, str(rule["expr"])) for rule in load_rules()]
    for where, board, expr in queries:
        service = board.removesuffix(".json")
        for name in metric_names(expr) & shared:
            for selector in re.finditer(rf"(?<![\w:]){re.escape(name)}(?![\w:])(\{{[^}}]*\}})?", expr):
                jobs = re.findall(r'job="([^"]+)"', selector.group(1) or "")
                assert jobs, f"{where}: {name} is read without a job matcher"
                assert service not in SERVICES or jobs == [service], f"{where}: {name} read for {jobs}"
