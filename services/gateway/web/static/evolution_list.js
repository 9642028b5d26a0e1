// The evolution runs list (/evolution): the caller's runs (an admin's: everyone's) from
// GET /api/v1/evolution/runs with the pasted API key, 20 a page, newest first, and the form that
// starts a run (POST /api/v1/evolution/runs). The elapsed time of a running run counts on.
// Everything from the API goes in as text.

import {
  ElapsedClock,
  apiJson,
  apiKey,
  formatDuration,
  formatNumber,
  formatTime,
  labelCells,
  say,
  setupKeyForm,
} from "./training_api.js";

const PER_PAGE = 20;
const TICK_MS = 1000;

function cell(...content) {
  const td = document.createElement("td");
  td.append(...content);
  return td;
}

function numberCell(value) {
  const td = cell(value);
  td.className = "num";
  return td;
}

export function formatUsd(value) {
  return typeof value === "number" && Number.isFinite(value) ? `$${value.toFixed(value < 1 ? 4 : 2)}` : "-";
}

class RunList {
  constructor(root) {
    this.root = root;
    this.api = root.dataset.api;
    this.pageRoot = root.dataset.root || "";
    this.offset = 0;
    this.total = 0;
    this.body = root.querySelector("[data-runs]");
    this.empty = root.querySelector("[data-runs-empty]");
    this.clocks = [];
  }

  /** Running runs' elapsed time, once a second. */
  tick() {
    for (const { clock, box } of this.clocks) box.textContent = formatDuration(clock.seconds);
  }

  start() {
    setupKeyForm(this.root, () => {
      this.offset = 0;
      this.load();
    });
    for (const button of this.root.querySelectorAll("[data-runs-page]")) {
      button.addEventListener("click", () => {
        const step = button.dataset.runsPage === "older" ? PER_PAGE : -PER_PAGE;
        this.offset = Math.max(0, this.offset + step);
        this.load();
      });
    }
    this.setupCreate();
    this.load();
  }

  async load() {
    this.body.replaceChildren();
    this.clocks = [];
    if (!apiKey()) {
      this.empty.textContent = "No runs to show: paste your API key above.";
      this.empty.hidden = false;
      return;
    }
    const query = new URLSearchParams({ limit: String(PER_PAGE), offset: String(this.offset) });
    let page;
    try {
      page = await apiJson(`${this.api}?${query}`);
    } catch (error) {
      say(this.root, `The runs could not be listed: ${error.message}`);
      this.empty.textContent = "No runs to show.";
      this.empty.hidden = false;
      return;
    }
    this.total = page.total;
    this.body.replaceChildren(...page.items.map((run) => this.row(run)));
    this.empty.textContent = "You have no evolution runs yet.";
    this.empty.hidden = page.items.length > 0;
    this.pager();
    labelCells(this.body.closest("table"));
    this.root.dataset.loaded = String(page.items.length);
  }

  row(run) {
    const tr = document.createElement("tr");
    tr.dataset.runId = run.id;
    const link = document.createElement("a");
    link.href = `${this.pageRoot}/evolution/${encodeURIComponent(run.id)}`;
    link.textContent = run.name;
    link.className = "trunc";
    link.title = run.name;
    const status = cell(String(run.status));
    status.dataset.status = run.status;
    const started = document.createElement("time");
    started.dateTime = run.created_at;
    started.textContent = formatTime(run.created_at);
    const clock = new ElapsedClock();
    clock.update(run.elapsed_s, run.status === "running");
    const elapsed = numberCell(formatDuration(clock.seconds));
    elapsed.dataset.elapsed = "";
    if (run.status === "running") this.clocks.push({ clock, box: elapsed });
    tr.append(
      cell(link),
      cell(String(run.game)),
      status,
      numberCell(formatNumber(run.generation)),
      cell(run.best_program || "-"),
      numberCell(formatNumber(run.best_fitness)),
      numberCell(formatUsd(run.spent_usd)),
      numberCell(formatNumber(run.llm_calls)),
      elapsed,
      cell(started),
    );
    return tr;
  }

  pager() {
    const pager = this.root.querySelector("[data-runs-pager]");
    if (!pager) return;
    pager.hidden = this.total <= PER_PAGE;
    pager.querySelector('[data-runs-page="newer"]').disabled = this.offset === 0;
    pager.querySelector('[data-runs-page="older"]').disabled = this.offset + PER_PAGE >= this.total;
    const last = Math.min(this.total, this.offset + PER_PAGE);
    pager.querySelector("[data-runs-position]").textContent = `${this.offset + 1}\u2013${last} of ${this.total}`;
  }

  setupCreate() {
    const form = this.root.querySelector("form[data-create-form]");
    if (!form) return;
    form.hidden = false;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!apiKey()) {
        say(this.root, "Paste your API key above first.");
        return;
      }
      const value = (name) => form.elements.namedItem(name).value.trim();
      let config;
      try {
        config = JSON.parse(value("config") || "{}");
        if (typeof config !== "object" || config === null || Array.isArray(config)) throw new Error("not an object");
      } catch (error) {
        say(this.root, `The config is not a JSON object: ${error.message}`);
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
        const run = await apiJson(this.api, { method: "POST", body });
        form.elements.namedItem("llm_key").value = "";
        window.location.href = `${this.pageRoot}/evolution/${encodeURIComponent(run.id)}`;
      } catch (error) {
        say(this.root, `The run could not be started: ${error.message}`);
      }
    });
  }
}

const root = document.querySelector("[data-evolution-list]");
if (root) {
  const list = new RunList(root);
  list.start();
  setInterval(() => list.tick(), TICK_MS);
}
