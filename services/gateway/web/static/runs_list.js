// The list page of a kind of owned run (/training, /evolution): the caller's runs (an admin's:
// everyone's) from the kind's API with the pasted API key, 20 a page, newest first, each linked to
// its run page; the elapsed time of a running run counts on. The kind says which cells a row has
// beyond the run's name, status, elapsed time and start, and what to fetch once a page is shown.
// Everything from the API goes in as text.

import {
  ElapsedClock,
  apiJson,
  apiKey,
  formatDuration,
  formatTime,
  labelCells,
  say,
  setupKeyForm,
} from "./training_api.js";

const PER_PAGE = 20;
const TICK_MS = 1000;

export function cell(...content) {
  const td = document.createElement("td");
  td.append(...content);
  return td;
}

export function numberCell(value) {
  const td = cell(value);
  td.className = "num";
  return td;
}

/**
 * One kind's part of the list:
 *   page: the run pages' path ("training": a run's page is {root}/training/{id});
 *   noun: what its runs are called ("training runs");
 *   row(run, shared, seconds): {cells, tick}: the row's cells in table order, from `shared`
 *     ({link, status, elapsed, started}: the cells every kind shows) and its own, given the run's
 *     elapsed `seconds`; `tick(seconds)`, optional, updates its own cells as a running run's
 *     elapsed time counts on;
 *   loaded(rows, list): optional, once a page's rows are in; each row is {tr, run, shown}, `shown`
 *     being what `row` returned.
 */
export class RunList {
  constructor(root, kind) {
    this.root = root;
    this.kind = kind;
    this.api = root.dataset.api;
    this.pageRoot = root.dataset.root || "";
    this.offset = 0;
    this.total = 0;
    this.body = root.querySelector("[data-runs]");
    this.empty = root.querySelector("[data-runs-empty]");
    this.clocks = [];
  }

  /** Running runs' elapsed time (and what the kind derives from it), once a second. */
  tick() {
    for (const { clock, elapsed, shown } of this.clocks) {
      elapsed.textContent = formatDuration(clock.seconds);
      shown.tick?.(clock.seconds);
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
    this.body.replaceChildren(...rows.map(({ tr }) => tr));
    this.empty.textContent = `You have no ${this.kind.noun} yet.`;
    this.empty.hidden = rows.length > 0;
    this.pager();
    labelCells(this.body.closest("table"));
    this.root.dataset.loaded = String(rows.length);
    await this.kind.loaded?.(rows, this);
  }

  row(run) {
    const tr = document.createElement("tr");
    tr.dataset.runId = run.id;
    const link = document.createElement("a");
    link.href = `${this.pageRoot}/${this.kind.page}/${encodeURIComponent(run.id)}`;
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
    const shared = { link: cell(link), status, elapsed, started: cell(started) };
    const shown = this.kind.row(run, shared, clock.seconds);
    tr.append(...shown.cells);
    if (run.status === "running") this.clocks.push({ clock, elapsed, shown });
    return { tr, run, shown };
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
}

/** The list in the element that `selector` names, if the page has one, started and ticking. */
export function startRunList(selector, kind) {
  const root = document.querySelector(selector);
  if (!root) return null;
  const list = new RunList(root, kind);
  list.start();
  setInterval(() => list.tick(), TICK_MS);
  return list;
}
