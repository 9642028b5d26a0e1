"""Fails the static gate twice."""

import os  # noqa: F401 - refused by the gate, which is the point


def decide(observation: object) -> object:  # noqa: ARG001 - the bot interface
    return eval("{}")
