"""Recording pre-match health checks on the bots: the ladder's back-off and automatic suspension.

A bot whose check fails gets `health_failures` + 1 and the detail in `last_health_error` (both for
its owner); after `settings.health_suspend_after` failures in a row an active bot becomes
SUSPENDED with the reason and time, and only its owner's reactivation brings it back. A passing
check resets the counter. Problems that are the platform's fault are never recorded here.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select, update

from shared.config import Settings
from shared.db.models import Bot
from shared.db.session import session_scope
from shared.jsonsafe import safe_text
from shared.states import BotStatus

log = logging.getLogger(__name__)

MAX_HEALTH_ERROR_CHARS = 500


@dataclass(frozen=True, slots=True)
class HealthCheck:
    bot_id: uuid.UUID
    error: str | None
    """None when the check passed; else the detail for the bot's owner."""


def record_checks(checks: list[HealthCheck], settings: Settings) -> list[uuid.UUID]:
    """Store the outcomes of one match's checks; returns the bots suspended by them."""
    if not checks:
        return []
    now = datetime.now(UTC)
    suspended: list[uuid.UUID] = []
    with session_scope() as session:
        passed = [c.bot_id for c in checks if c.error is None]
        if passed:
            session.execute(
                update(Bot)
                .where(Bot.id.in_(passed))
                .values(health_failures=0, last_health_check_at=now, last_health_error=None)
            )
        failed = {c.bot_id: c.error for c in checks if c.error is not None}
        bots = session.scalars(select(Bot).where(Bot.id.in_(failed)).order_by(Bot.id).with_for_update())
        for bot in bots:
            detail = safe_text(failed[bot.id] or "", MAX_HEALTH_ERROR_CHARS)
            bot.health_failures += 1
            bot.last_health_check_at = now
            bot.last_health_error = detail
            if bot.status == BotStatus.ACTIVE and bot.health_failures >= settings.health_suspend_after:
                bot.status = BotStatus.SUSPENDED
                bot.suspended_at = now
                bot.status_reason = (
                    f"suspended after {bot.health_failures} failed pre-match health checks in a row "
                    f"(last: {detail}); fix the bot, then POST /api/v1/bots/{bot.id}/reactivate"
                )
                suspended.append(bot.id)
                log.warning("suspended bot %s after %d failed health checks", bot.id, bot.health_failures)
    return suspended
