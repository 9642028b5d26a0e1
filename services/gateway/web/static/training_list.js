// The training runs list (/training): the caller's runs (an admin's: everyone's) from
// GET /api/v1/training/runs with the pasted API key, 20 a page, newest first. The list answer has
// no metrics, so each listed run's latest win rate against the runner comes from its detail
// (GET .../runs/{id}, a few at a time). Progress is against the budget that ends each run (steps
// or training time); the elapsed time of a running run counts on. Everything goes in as text.

import {
  ElapsedClock,
  apiJson,
  apiKey,
  budgetProgress,
  formatDuration,
  formatNumber,
  formatRate,
  formatTime,
  labelCells,
  say,
  setupKeyForm,
} from "./training_api.js";

const PER_PAGE = 20;
const DETAIL_REQUESTS_AT_ONCE = 4;
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

/** "42.0% time": the share of the budget that ends the run, and which budget that is. */
function showProgress(box, run, elapsed) {
  const progress = budgetProgress(run, elapsed);
  box.textContent = `${formatRate(progress.share)} ${progress.by === "time" ? "of time" : "of steps"}`;
  box.title = [progress.text, progress.other].filter(Boolean).join("; ");
  box.dataset.budget = progress.by;
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

  /** Running runs' elapsed time and time-budget progress, once a second. */
  tick() {
    for (const { run, clock, elapsed, progress } of this.clocks) {
      elapsed.textContent = formatDuration(clock.seconds);
      showProgress(progress, run, clock.seconds);
    }
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
    this.load();
  }

  async load() {
    this.body.replaceChildren();
    this.clocks = [];
    if (!apiKey()) {
      this.empty.textContent = "No runs to show: paste your API key above.";
      this.empty.hidden = false;
      say(this.root, "");
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
    say(this.root, "");
    this.total = page.total;
    const rows = page.items.map((run) => this.row(run));
    this.body.replaceChildren(...rows.map(([tr]) => tr));
    this.empty.textContent = "You have no training runs yet.";
    this.empty.hidden = rows.length > 0;
    this.pager();
    labelCells(this.body.closest("table"));
    this.root.dataset.loaded = String(rows.length);
    await this.winRates(rows);
  }

  row(run) {
    const tr = document.createElement("tr");
    tr.dataset.runId = run.id;
    const link = document.createElement("a");
    link.href = `${this.pageRoot}/training/${encodeURIComponent(run.id)}`;
    link.textContent = run.name;
    const rate = cell("\u2026");
    rate.dataset.winRate = "";
    link.className = "trunc";
    link.title = run.name;
    const status = cell(String(run.status));
    status.dataset.status = run.status;
    const started = document.createElement("time");
    started.dateTime = run.created_at;
    started.textContent = formatTime(run.created_at);
    const clock = new ElapsedClock();
    clock.update(run.elapsed_s, run.status === "running");
    const elapsed = cell(formatDuration(clock.seconds));
    elapsed.className = "num";
    const progress = cell();
    progress.className = "num";
    showProgress(progress, run, clock.seconds);
    if (run.status === "running") this.clocks.push({ run, clock, elapsed, progress });
    tr.append(
      cell(link),
      status,
      cell(String(run.stage)),
      numberCell(formatNumber(run.iteration)),
      numberCell(formatNumber(run.global_step)),
      progress,
      rate,
      elapsed,
      cell(started),
    );
    return [tr, run, rate];
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

  async winRates(rows) {
    const queue = [...rows];
    const worker = async () => {
      while (queue.length) {
        const [, run, rate] = queue.shift();
        try {
          const detail = await apiJson(`${this.api}/${encodeURIComponent(run.id)}`);
          rate.textContent = formatRate(detail.latest_metrics?.metrics?.win_rate_runner);
        } catch {
          rate.textContent = "?";
        }
      }
    };
    await Promise.all(Array.from({ length: DETAIL_REQUESTS_AT_ONCE }, worker));
  }
}

const root = document.querySelector("[data-training-list]");
if (root) {
  const list = new RunList(root);
  list.start();
  setInterval(() => list.tick(), TICK_MS);
}
