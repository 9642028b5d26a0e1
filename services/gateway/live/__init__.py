"""Live matches and events over WebSockets: one shared Redis subscription per topic per process
(hub.py), the endpoints (views.py) and the first message of a live match (start.py)."""

from services.gateway.live.views import router

__all__ = ["router"]
