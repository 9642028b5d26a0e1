"""The operator's model endpoints a run may name (`llm.endpoint`), with their models and prices and
what the caller's runs may still spend on them; never their URLs or keys."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from services.gateway.deps import CurrentUser, DbSession, SettingsDep
from services.gateway.openapi import KEY_REQUIRED, responses
from shared.evolution import operator_allowance
from shared.states import UserRole

router = APIRouter(prefix="/evolution", tags=["evolution"])


class ModelPriceOut(BaseModel):
    input: float = Field(description="USD per million prompt tokens")
    output: float = Field(description="USD per million completion tokens")


class LlmEndpointOut(BaseModel):
    name: str = Field(description="what a run's `config.llm.endpoint` names")
    models: list[str] = Field(
        description="the models runs may ask for (empty: any); the first is the default"
    )
    prices: dict[str, ModelPriceOut] = Field(description="the operator's prices (others: the built-in table)")


class LlmEndpointsOut(BaseModel):
    endpoints: list[LlmEndpointOut]
    allowance_usd: float | None = Field(
        description="what your runs may spend on these endpoints per window (null: no limit, admins)"
    )
    spent_usd: float = Field(description="what your runs spent on them within the window")
    window_days: float


@router.get(
    "/endpoints",
    response_model=LlmEndpointsOut,
    summary="The platform's model endpoints",
    responses=responses(KEY_REQUIRED),
)
def list_endpoints(user: CurrentUser, session: DbSession, settings: SettingsDep) -> LlmEndpointsOut:
    """The model endpoints this platform offers to evolution runs (with its own keys), and your
    allowance on them. A run may instead bring its own `llm.base_url` and `api_key`."""
    allowance = operator_allowance(session, settings, user.id)
    return LlmEndpointsOut(
        endpoints=[
            LlmEndpointOut(
                name=name,
                models=list(endpoint.models),
                prices={
                    model: ModelPriceOut(input=price.input, output=price.output)
                    for model, price in endpoint.prices.items()
                },
            )
            for name, endpoint in sorted(settings.llm_endpoints.items())
        ],
        allowance_usd=None if user.role == UserRole.ADMIN else allowance.cap_usd,
        spent_usd=round(allowance.spent_usd, 6),
        window_days=settings.llm_operator_window_days,
    )
