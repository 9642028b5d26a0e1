"""Training runs API: create runs of the trainer service, watch their metrics, stop, resume, change
their config while they train, export checkpoints as hosted bots (shared.training does the work)."""
