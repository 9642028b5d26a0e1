// The training runs list (/training): the caller's runs (an admin's: everyone's) from
// GET /api/v1/training/runs with the pasted API key, 20 a page, newest first. The list answer has
// no metrics, so each listed run's latest win rate against the runner comes from its detail
// (GET .../runs/{id}, a few at a time). Everything goes in as text.

import { apiJson, apiKey, formatDuration, formatNumber, formatRate, formatTime, say, setupKeyForm } from "./training_api.js";

const PER_PAGE = 20;
const DETAIL_REQUESTS_AT_ONCE = 4;

function cell(...content) {
  const td = document.createElement("td");
  td.append(...content);
  return td;
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
    const status = cell(String(run.status));
    status.dataset.status = run.status;
    const started = document.createElement("time");
    started.dateTime = run.created_at;
    started.textContent = formatTime(run.created_at);
    tr.append(
      cell(link),
      status,
      cell(String(run.stage)),
      cell(formatNumber(run.iteration)),
      cell(formatNumber(run.global_step)),
      cell(formatRate(run.progress)),
      rate,
      cell(formatDuration(run.elapsed_s)),
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
if (root) new RunList(root).start();
