"""Podracing: CodinGame's Mad Pod Racing rules, a reference engine, the Game adapter and bots."""
