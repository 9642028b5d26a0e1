// The evolution runs list (/evolution), on the shared run list (runs_list.js), and the form that
// starts a run (POST /api/v1/evolution/runs).

import { cell, numberCell, startRunList } from "./runs_list.js";
import { apiJson, apiKey, formatNumber, say } from "./training_api.js";

export function formatUsd(value) {
  return typeof value === "number" && Number.isFinite(value) ? `$${value.toFixed(value < 1 ? 4 : 2)}` : "-";
}

function row(run, shared) {
  return {
    cells: [
      shared.link,
      cell(String(run.game)),
      shared.status,
      numberCell(formatNumber(run.generation)),
      cell(run.best_program || "-"),
      numberCell(formatNumber(run.best_fitness)),
      numberCell(formatUsd(run.spent_usd)),
      numberCell(formatNumber(run.llm_calls)),
      shared.elapsed,
      shared.started,
    ],
  };
}

/** The form that starts a run, shown once the script runs; a new run opens its page. */
function setupCreate(list) {
  const form = list.root.querySelector("form[data-create-form]");
  if (!form) return;
  form.hidden = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!apiKey()) {
      say(list.root, "Paste your API key above first.");
      return;
    }
    const value = (name) => form.elements.namedItem(name).value.trim();
    let config;
    try {
      config = JSON.parse(value("config") || "{}");
      if (typeof config !== "object" || config === null || Array.isArray(config)) throw new Error("not an object");
    } catch (error) {
      say(list.root, `The config is not a JSON object: ${error.message}`);
      return;
    }
    config.limits = { ...(config.limits || {}) };
    config.llm = { ...(config.llm || {}) };
    for (const name of ["max_generations", "max_children_per_generation"]) {
      if (value(name)) config.limits[name] = Number(value(name));
    }
    if (value("max_cost_usd")) config.limits.max_cost_usd = Number(value("max_cost_usd"));
    for (const name of ["endpoint", "base_url", "root_model", "child_model"]) {
      if (value(name)) config.llm[name] = value(name);
    }
    const body = { name: value("name"), game: value("game"), config };
    if (value("llm_key")) body.api_key = value("llm_key");
    try {
      const run = await apiJson(list.api, { method: "POST", body });
      form.elements.namedItem("llm_key").value = "";
      window.location.href = `${list.pageRoot}/evolution/${encodeURIComponent(run.id)}`;
    } catch (error) {
      say(list.root, `The run could not be started: ${error.message}`);
    }
  });
}

const list = startRunList("[data-evolution-list]", { page: "evolution", noun: "evolution runs", row });
if (list) setupCreate(list);
