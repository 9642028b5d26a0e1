"""The OpenAPI document tells the truth about authentication and errors.

Checked two ways: against the code (each operation's dependencies say whether it needs a key, may
take one, needs an admin, reads a body) and against live answers (a request that fails is answered
with a status the document lists for that operation, and a body and headers that match what it
documents there; schemathesis' own conformance checks do the matching). A browser then uses /docs
the way a person would: Authorize with a key, Try it out, Execute.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from fastapi import APIRouter
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, expect
from schemathesis.checks import (
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.failures import FailureGroup

from services.gateway.app import API_PREFIX
from services.gateway.bots.views import router as bots_router
from services.gateway.deps import admin_user, current_user, optional_user
from services.gateway.evolution.endpoints import router as llm_endpoints_router
from services.gateway.evolution.views import router as evolution_router
from services.gateway.games.views import router as games_router
from services.gateway.health import router as health_router
from services.gateway.leaderboard.views import router as leaderboard_router
from services.gateway.matches.views import router as matches_router
from services.gateway.openapi import ErrorBody
from services.gateway.training.views import router as training_router
from services.gateway.users.views import router as users_router
from tests.support.accounts import Account
from tests.support.browser import launch_chromium, offline_page, save_screenshot

ERROR_BODY_REF = "#/components/schemas/ErrorBody"
KEY_SCHEMES: list[dict[str, list[str]]] = [{"BearerKey": []}, {"ApiKeyHeader": []}]
CONFORMANCE = [status_code_conformance, response_schema_conformance, response_headers_conformance]
RENDER_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def document(client: TestClient) -> dict[str, Any]:
    answer = client.get("/openapi.json")
    assert answer.status_code == 200
    spec: dict[str, Any] = answer.json()
    return spec


ROUTERS: list[tuple[str, APIRouter]] = [
    *(
        (API_PREFIX, r)
        for r in (
            users_router,
            bots_router,
            matches_router,
            games_router,
            leaderboard_router,
            training_router,
            evolution_router,
            llm_endpoints_router,
        )
    ),
    ("", health_router),
]
"""Where the gateway mounts each router that is in the document (checked against it below)."""


def documented_routes() -> Iterator[tuple[str, str, APIRoute]]:
    """(path as in the document, method as in the document, route) of every documented operation."""
    for prefix, router in ROUTERS:
        for route in router.routes:
            if isinstance(route, APIRoute) and route.include_in_schema:
                for method in route.methods or ():
                    yield prefix + route.path_format, method.lower(), route


def test_the_routers_listed_here_are_the_documented_ones(document: dict[str, Any]) -> None:
    listed = {(path, method) for path, method, _ in documented_routes()}
    assert listed == {(path, method) for path, item in document["paths"].items() for method in item}


def depends_on(dependant: Dependant) -> set[Callable[..., Any]]:
    """Every callable the route's dependency tree runs."""
    found: set[Callable[..., Any]] = set()
    pending = list(dependant.dependencies)
    while pending:
        dependency = pending.pop()
        if dependency.call is not None:
            found.add(dependency.call)
        pending.extend(dependency.dependencies)
    return found


def error_ref(operation: dict[str, Any], status: int) -> str | None:
    declared = operation["responses"].get(str(status))
    if declared is None:
        return None
    ref: str | None = declared["content"]["application/json"]["schema"].get("$ref")
    return ref


def test_the_key_schemes_are_declared(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    assert schemes["BearerKey"]["type"] == "http"
    assert schemes["BearerKey"]["scheme"] == "bearer"
    assert schemes["ApiKeyHeader"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": schemes["ApiKeyHeader"]["description"],
    }
    assert "Authorize" in document["info"]["description"]


def test_security_and_auth_errors_follow_the_dependencies(document: dict[str, Any]) -> None:
    """A key-only operation lists the schemes and 401; one where a key is optional also lists the
    empty requirement; an admin operation lists 403 too; an operation that reads no key lists none."""
    kinds: dict[str, int] = {"required": 0, "optional": 0, "none": 0}
    for path, method, route in documented_routes():
        operation = document["paths"][path][method]
        calls = depends_on(route.dependant)
        where = f"{method.upper()} {path}"
        if current_user in calls:
            kinds["required"] += 1
            assert operation["security"] == KEY_SCHEMES, where
            assert error_ref(operation, 401) == ERROR_BODY_REF, where
            assert "WWW-Authenticate" in operation["responses"]["401"]["headers"], where
        elif optional_user in calls:
            kinds["optional"] += 1
            assert operation["security"] == [*KEY_SCHEMES, {}], where
            assert error_ref(operation, 401) == ERROR_BODY_REF, where
        else:
            kinds["none"] += 1
            assert "security" not in operation, where
            assert "401" not in operation["responses"], where
        assert (error_ref(operation, 403) == ERROR_BODY_REF) >= (admin_user in calls), where
    assert all(kinds.values()), kinds


def can_fail(schema: dict[str, Any]) -> bool:
    """Whether a parameter with this schema can be refused: anything but an unconstrained string."""
    return {k: v for k, v in schema.items() if k not in ("title", "description")} != {"type": "string"}


def test_bodies_and_parameters_document_their_failures(document: dict[str, Any]) -> None:
    """Every operation with a JSON body lists 413 and 422; every one with a parameter that can fail
    validation lists 422; all with ErrorBody, never FastAPI's default 422 body."""
    for path, method, route in documented_routes():
        operation = document["paths"][path][method]
        where = f"{method.upper()} {path}"
        if route.body_field is not None:
            assert "requestBody" in operation, where
            assert error_ref(operation, 413) == ERROR_BODY_REF, where
            assert error_ref(operation, 422) == ERROR_BODY_REF, where
        checked = [p["name"] for p in operation.get("parameters", []) if can_fail(p["schema"])]
        if checked:
            assert error_ref(operation, 422) == ERROR_BODY_REF, (where, checked)
    assert "HTTPValidationError" not in str(document)


def test_every_error_answer_is_documented_as_error_body(document: dict[str, Any]) -> None:
    documented = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status in operation["responses"]:
                if status.startswith("4") or (status.startswith("5") and path != "/ready"):
                    assert error_ref(operation, int(status)) == ERROR_BODY_REF, (method, path, status)
                    documented += 1
    assert documented > 50
    body = document["components"]["schemas"]["ErrorBody"]
    assert body["required"] == ["detail"]
    assert body["properties"]["errors"]["type"] == "array"


def test_error_examples_are_error_bodies(document: dict[str, Any]) -> None:
    examples = [
        declared["content"]["application/json"]["example"]
        for item in document["paths"].values()
        for operation in item.values()
        for declared in operation["responses"].values()
        if "example" in declared.get("content", {}).get("application/json", {})
        and declared["content"]["application/json"].get("schema", {}).get("$ref") == ERROR_BODY_REF
    ]
    assert len(examples) > 30
    for example in examples:
        assert set(example) <= {"detail", "errors"}, example
        ErrorBody.model_validate(example, strict=True)


def documented_example(document: dict[str, Any], method: str, path: str, status: int) -> Any:
    return document["paths"][path][method]["responses"][str(status)]["content"]["application/json"]["example"]


def test_every_operation_has_a_written_summary_and_every_tag_a_description(document: dict[str, Any]) -> None:
    described = {tag["name"]: tag["description"] for tag in document["tags"]}
    for path, method, route in documented_routes():
        operation = document["paths"][path][method]
        generated = route.name.replace("_", " ").title()  # what FastAPI makes up without one
        assert operation["summary"], path
        assert operation["summary"] != generated, path
        assert operation.get("description"), path
        assert all(described.get(tag) for tag in operation["tags"]), operation["tags"]


@pytest.fixture(scope="module")
def api(document: dict[str, Any]) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(document)


def conforms(api: schemathesis.BaseSchema, client: TestClient, method: str, path: str, **request: Any) -> int:
    """Send the request and check its status, body and headers against what the document says of
    that operation; the status answered."""
    operation = api[path][method]
    case = operation.Case(
        path_parameters=request.pop("path_parameters", None),
        headers=request.get("headers"),
        query=request.get("params"),
    )
    url = path.format(**(case.path_parameters or {}))
    response = client.request(method, url, **request)
    case.validate_response(response, checks=CONFORMANCE)
    status: int = response.status_code
    return status


def test_live_errors_match_the_document(
    api: schemathesis.BaseSchema, document: dict[str, Any], client: TestClient, admin: Account, alice: Account
) -> None:
    bot = {"bot_id": str(uuid.uuid4())}
    assert conforms(api, client, "GET", "/api/v1/me") == 401
    assert client.get("/api/v1/me").json() == documented_example(document, "get", "/api/v1/me", 401)
    too_few = client.get("/api/v1/bots", params={"limit": 0}, headers=alice.headers).json()
    assert too_few == documented_example(document, "get", "/api/v1/bots", 422)
    assert conforms(api, client, "GET", "/api/v1/me", headers={"Authorization": "Basic dXNlcjpwYXNz"}) == 401
    assert conforms(api, client, "GET", "/api/v1/me", headers={"X-API-Key": "arena_nope"}) == 401
    assert conforms(api, client, "GET", "/api/v1/matches", headers={"Authorization": "Bearer nope"}) == 401
    assert conforms(api, client, "GET", "/api/v1/users", headers=alice.headers) == 403
    assert (
        conforms(api, client, "GET", "/api/v1/bots/{bot_id}", path_parameters=bot, headers=alice.headers)
        == 404
    )
    assert conforms(api, client, "GET", "/api/v1/bots", params={"limit": 0}, headers=alice.headers) == 422
    assert (
        conforms(api, client, "POST", "/api/v1/me/api-keys", json={"name": 5}, headers=alice.headers) == 422
    )
    oversize = {"name": "x" * 2_000_000}
    assert conforms(api, client, "POST", "/api/v1/me/api-keys", json=oversize, headers=alice.headers) == 413
    nobody = [str(uuid.uuid4()), str(uuid.uuid4())]
    unknown_game = {"game": "chess", "bot_ids": nobody}
    assert conforms(api, client, "POST", "/api/v1/matches", json=unknown_game, headers=alice.headers) == 400
    missing_bots = {"game": "podracing", "bot_ids": nobody}
    assert conforms(api, client, "POST", "/api/v1/matches", json=missing_bots, headers=alice.headers) == 404
    taken = {"name": alice.name}
    assert conforms(api, client, "POST", "/api/v1/users", json=taken, headers=admin.headers) == 409
    assert (
        conforms(api, client, "GET", "/api/v1/leaderboard/{game}", path_parameters={"game": "chess"}) == 404
    )


def test_the_conformance_checks_catch_what_the_document_does_not_say(
    document: dict[str, Any], client: TestClient
) -> None:
    """The live check above is not vacuous: the same answers fail it once the document leaves out
    /me's 401, or once ErrorBody requires a field the gateway does not send."""
    no_401 = copy.deepcopy(document)
    del no_401["paths"]["/api/v1/me"]["get"]["responses"]["401"]
    with pytest.raises(FailureGroup, match="Undocumented status code"):
        conforms(schemathesis.openapi.from_dict(no_401), client, "GET", "/api/v1/me")
    stricter = copy.deepcopy(document)
    stricter["components"]["schemas"]["ErrorBody"]["required"].append("errors")
    with pytest.raises(FailureGroup, match="Response violates schema"):
        conforms(schemathesis.openapi.from_dict(stricter), client, "GET", "/api/v1/me")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_chromium() as chromium:
        yield chromium


@pytest.mark.browser
def test_docs_authorize_then_try_it_out(browser: Browser, gateway_url: str, alice: Account) -> None:
    """Authorize with a key in /docs, then Try it out on GET /api/v1/me: the call carries the key
    and answers 200 with the key's user."""
    with offline_page(browser, gateway_url) as offline:
        page = offline.open("/docs")
        page.locator(".swagger-ui .opblock").first.wait_for(state="visible", timeout=RENDER_TIMEOUT_MS)
        authorize = page.locator(".swagger-ui .auth-wrapper button.authorize")
        expect(authorize).to_be_visible()
        authorize.click()
        dialog = page.locator(".swagger-ui .dialog-ux .modal-ux")
        expect(dialog).to_contain_text("BearerKey")
        expect(dialog).to_contain_text("ApiKeyHeader")
        bearer = dialog.locator(".auth-container").filter(has_text="BearerKey")
        bearer.locator("input#auth-bearer-value").fill(alice.key)
        bearer.locator("button.authorize").click()
        expect(bearer.locator("h6")).to_have_text("Authorized")
        expect(bearer.get_by_role("button", name="Remove authorization")).to_be_visible()
        dialog.locator("button.close-modal").click()

        me = page.locator("#operations-users-me_api_v1_me_get")
        me.locator(".opblock-summary").click()
        expect(me.get_by_role("button", name="authorization button locked")).to_be_visible()
        me.locator("button.try-out__btn").click()
        with page.expect_response(lambda r: r.url == f"{gateway_url}/api/v1/me") as answered:
            me.locator("button.execute").click()
        response = answered.value
        assert response.status == 200
        assert response.request.headers["authorization"] == f"Bearer {alice.key}"
        live = me.locator(".live-responses-table .response")
        expect(live.locator(".response-col_status")).to_have_text("200")
        expect(live.locator(".response-col_description")).to_contain_text(alice.name)
        save_screenshot(page, "docs-authorized-try-it-out")
        offline.assert_stayed_offline()
    assert httpx.get(f"{gateway_url}/api/v1/me", timeout=10).status_code == 401
