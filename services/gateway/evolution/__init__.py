"""The evolution runs API (`/api/v1/evolution/runs`): see docs/api.md, "Evolution runs"."""
