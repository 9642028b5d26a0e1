"""Users and their API keys. A key is generated here, returned once, and stored only as a hash."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from services.gateway.errors import ApiError, not_found
from shared.config import Settings
from shared.crypto import api_key_prefix, hash_api_key, new_api_key
from shared.db.models import ApiKey, User
from shared.states import UserRole

log = logging.getLogger("services.gateway.users")

BOOTSTRAP_ADMIN_NAME = "admin"


def add_api_key(
    session: Session, settings: Settings, user: User, name: str, plain: str | None = None
) -> tuple[ApiKey, str]:
    plain = plain or new_api_key()
    row = ApiKey(user=user, name=name, prefix=api_key_prefix(plain), key_hash=hash_api_key(settings, plain))
    session.add(row)
    return row, plain


def create_user(session: Session, settings: Settings, name: str, role: str) -> tuple[User, ApiKey, str]:
    if session.scalar(select(User.id).where(User.name == name)) is not None:
        raise ApiError(409, f"user name {name!r} is already taken")
    user = User(name=name, role=role)
    session.add(user)
    key, plain = add_api_key(session, settings, user, "default")
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise ApiError(409, f"user name {name!r} is already taken") from None
    return user, key, plain


def list_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.created_at)))


def list_keys(session: Session, user: User) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).where(ApiKey.user_id == user.id).order_by(ApiKey.created_at)))


def revoke_key(session: Session, user: User, key_id: uuid.UUID) -> ApiKey:
    key = session.get(ApiKey, key_id)
    if key is None or key.user_id != user.id:
        raise not_found(f"API key {key_id}")
    if key.revoked_at is None:
        key.revoked_at = datetime.now(UTC)
        session.commit()
    return key


def ensure_bootstrap_admin(session: Session, settings: Settings) -> None:
    """Make sure the configured bootstrap key belongs to an admin; safe to run on every start."""
    if settings.bootstrap_admin_key is None:
        return
    plain = settings.bootstrap_admin_key.get_secret_value().strip()
    if not plain:  # an empty variable (compose passes one through) means "no bootstrap key"
        return
    digest = hash_api_key(settings, plain)
    existing = session.scalar(select(ApiKey).where(ApiKey.key_hash == digest))
    if existing is not None:
        if existing.revoked_at is None and existing.user.role == UserRole.ADMIN:
            return
        existing.revoked_at = None
        existing.user.role = UserRole.ADMIN
        session.commit()
        return
    admin = session.scalar(select(User).where(User.name == BOOTSTRAP_ADMIN_NAME))
    if admin is None:
        admin = User(name=BOOTSTRAP_ADMIN_NAME, role=UserRole.ADMIN)
        session.add(admin)
    admin.role = UserRole.ADMIN
    add_api_key(session, settings, admin, "bootstrap", plain)
    try:
        session.commit()
    except IntegrityError:  # another gateway process did it at the same moment
        session.rollback()
        return
    log.info("bootstrap admin user %r is ready", admin.name)
