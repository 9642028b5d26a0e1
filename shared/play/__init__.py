"""Playing a match, whatever the game and wherever it runs: the one turn loop that the match
runner, the evolver's evaluation, the trainer's evaluation and the `arena` command line all call.

- turns.py: the turn loop (`play_match`): timeouts, default actions, forfeits, the replay;
- stats.py: the per-player figures it collects;
- errors.py: what playing raises (`PlayError` for a local match that cannot be played as asked,
  `MatchLost` for a match taken away from its worker);
- prometheus.py: the turn loop's Prometheus series, for the processes that serve metrics;
- bot_specs.py, options.py, local_seats.py, local_play.py: a local match between bots named as on the
  command line (builtin:NAME, a Python file, codingame:FILE, an http(s):// bot server).

Nothing here imports a service: each caller passes in what differs (its bots, its heartbeat, its
metrics).
"""
