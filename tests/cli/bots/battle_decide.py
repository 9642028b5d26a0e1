"""A hosted battle bot: walk to the middle of the map and fire at the first enemy in sight."""

from typing import Any


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    middle = [observation["constants"]["width"] / 2, observation["constants"]["height"] / 2]
    orders: dict[str, dict[str, Any]] = {}
    for unit in observation["units"]:
        me = unit["self"]
        if not me["alive"]:
            continue
        order = {"move": middle}
        enemies = [seen for seen in unit["visible_units"] if seen["team"] != observation["team"]]
        if enemies:
            order["fire"] = enemies[0]["position"]
        orders[me["id"]] = order
    return {"units": orders}
