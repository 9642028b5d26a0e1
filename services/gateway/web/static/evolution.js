// An evolution run's page (docs/web.md, "Evolution pages"). A run is its owner's (and admins')
// only, so everything here is read with the API key the owner pastes (training_api.js):
// - the facts, from GET /api/v1/evolution/runs/{id};
// - fitness per generation (best and median per island) as a line chart (training_charts.js);
// - the MAP-Elites grid as a heat map and the lineage tree (evolution_draw.js): a click on a
//   cell or a node opens that program's code and its diff against its parent;
// - the root's decisions, from the run's events; spend per role and model; the payoff table;
// - stop, resume and the run's archive.
// Live: while the run is going, GET .../events?after=<last id> every few seconds; new events are
// added to the decisions and the panels they affect are read again (never a page reload); the
// elapsed time counts on while the run works.
// The payoff table's opponents are named as people know them: a fleet bot ("bot:<id>") by its name
// (GET /api/v1/bots/public), a built-in by "builtin:<name>", a file by its file name.
// Everything from the API goes in as text (textContent).

import { LineChart } from "./training_charts.js";
import { HeatMap, LineageTree } from "./evolution_draw.js";
import {
  ElapsedClock,
  apiFetch,
  apiJson,
  apiKey,
  formatDuration,
  formatNumber,
  formatRate,
  labelCells,
  say,
  setupKeyForm,
} from "./training_api.js";

const EVENTS_PAGE = 500;
const MAX_EVENT_PAGES = 200;
const LIVE = new Set(["queued", "running", "stopping"]);
const STOPPABLE = new Set(["queued", "running"]);
const RESUMABLE = new Set(["stopped", "failed", "stopping"]);
const DECISION_KINDS = new Set([
  "root_decision",
  "fallback",
  "parameters_changed",
  "generation_advanced",
  "terminated",
  "limit_reached",
  "program_promoted",
  "llm_failure",
  "migration",
]);
/** Events after which programs, their fitness or the grid may have changed. */
const POPULATION_KINDS = new Set([
  "tool_result",
  "generation_advanced",
  "program_promoted",
  "program_rematched",
  "migration",
  "terminated",
  "fallback",
]);
const PALETTE = ["#1f5fbf", "#c2410c", "#2e7d32", "#7b1fa2", "#00838f", "#ad1457"];
const PALE = ["#8fb0e0", "#e6a086", "#97be99", "#bd8fd1", "#80c1c7", "#d689aa"];
const MAX_ISLANDS_CHARTED = 6;
const SVG = "http://www.w3.org/2000/svg";
const TICK_MS = 1000;
const BOT_PAGE = 200;
const MAX_BOT_PAGES = 10;
const FLEET_KEY = /^bot:([0-9a-f-]{36})$/i;

function text(node, value) {
  if (node) node.textContent = value;
}

function el(tag, className, content) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (content !== undefined) node.textContent = content;
  return node;
}

function usd(value) {
  return typeof value === "number" && Number.isFinite(value) ? `$${value.toFixed(value < 1 ? 4 : 2)}` : "-";
}

function fitness(value) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(3) : "-";
}

function swatch(color) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", "16");
  svg.setAttribute("height", "4");
  svg.setAttribute("aria-hidden", "true");
  const rect = document.createElementNS(SVG, "rect");
  rect.setAttribute("width", "16");
  rect.setAttribute("height", "4");
  rect.setAttribute("fill", color);
  svg.append(rect);
  return svg;
}

class EvolutionPage {
  constructor(root) {
    this.root = root;
    this.api = root.dataset.api;
    this.pageRoot = root.dataset.root || "";
    this.pollMs = Number(root.dataset.pollMs) || 2000;
    this.lastEvent = 0;
    this.eventsSeen = 0;
    this.detail = null;
    this.status = "";
    this.pollTimer = null;
    this.polls = 0;
    this.program = null;
    this.started = false;
    this.chart = null;
    this.heatmap = null;
    this.lineage = null;
    this.elapsed = new ElapsedClock();
    this.botNames = new Map();
  }

  boot() {
    const chartCanvas = this.root.querySelector("[data-fitness-chart] canvas");
    this.chart = new LineChart(chartCanvas, [], { xStep: 1 });
    this.heatmap = new HeatMap(this.root.querySelector("[data-heatmap]"), (name) => this.openProgram(name));
    this.lineage = new LineageTree(this.root.querySelector("[data-lineage]"), (name) => this.openProgram(name));
    setupKeyForm(this.root, () => (this.started ? window.location.reload() : this.start()));
    this.setupControls();
    setInterval(() => this.tickElapsed(), TICK_MS);
    this.start();
  }

  tickElapsed() {
    const seconds = this.elapsed.seconds;
    if (seconds !== null) text(this.root.querySelector("[data-elapsed]"), formatDuration(seconds));
  }

  start() {
    if (!apiKey()) {
      say(this.root, "Paste your API key above to see this run.", false);
      return;
    }
    this.started = true;
    say(this.root, "");
    this.loadAll();
  }

  async loadAll() {
    await this.refreshDetail();
    if (!this.detail) return;
    await Promise.all([this.loadGenerations(), this.loadGrid(), this.loadLineage(), this.loadSpend(), this.loadPayoff()]);
    await this.readEvents();
    this.root.dataset.eventsLoaded = "true";
    if (this.detail.best_program && !this.program) this.openProgram(this.detail.best_program);
    this.schedulePoll();
  }

  guard(what, promise) {
    return promise.catch((error) => {
      say(this.root, `${what} could not be loaded: ${error.message}`);
      return null;
    });
  }

  // --- facts and controls ------------------------------------------------------------------------

  async refreshDetail() {
    const detail = await this.guard("The run", apiJson(this.api));
    if (!detail) return;
    this.detail = detail;
    const q = (selector) => this.root.querySelector(selector);
    text(q("[data-run-name]"), detail.name);
    text(q("[data-game]"), detail.game);
    this.setStatus(detail.status);
    text(q("[data-generation]"), `${formatNumber(detail.generation)} of ${formatNumber(detail.max_generations)}`);
    const best = q("[data-best]");
    best.replaceChildren();
    if (detail.best_program) {
      const button = el("button", "evolution-link", detail.best_program);
      button.type = "button";
      button.addEventListener("click", () => this.openProgram(detail.best_program));
      best.append(button);
    } else best.textContent = "-";
    text(q("[data-best-fitness]"), fitness(detail.best_fitness));
    const budget = detail.max_cost_usd === null ? "no budget" : `of ${usd(detail.max_cost_usd)}`;
    text(q("[data-spent]"), `${usd(detail.spent_usd)} ${budget}`);
    text(q("[data-tokens]"), formatNumber(detail.tokens));
    text(q("[data-calls]"), formatNumber(detail.llm_calls));
    this.elapsed.update(detail.elapsed_s, detail.status === "running");
    this.tickElapsed();
    text(q("[data-termination]"), detail.termination_reason || (detail.error ? `failed: ${detail.error}` : "-"));
    text(q("[data-has-key]"), detail.has_api_key ? "yes" : "no");
    const bot = q("[data-run-bot]");
    bot.replaceChildren();
    if (detail.bot_id) {
      const link = el("a", "", "the run's bot");
      link.href = `${this.pageRoot}/bots/${encodeURIComponent(detail.bot_id)}`;
      bot.append(link);
    } else bot.textContent = "-";
    const params = Object.entries(detail.parameters || {}).map(([k, v]) => `${k.replace(/_/g, " ")} ${formatNumber(v)}`);
    text(q("[data-parameters]"), params.join(" · ") || "-");
    this.root.dataset.detailLoaded = "true";
  }

  setStatus(status) {
    this.status = status;
    text(this.root.querySelector("[data-run-status]"), status);
    const controls = this.root.querySelector("[data-controls]");
    if (controls) {
      controls.hidden = false;
      controls.querySelector('[data-control="stop"]').disabled = !STOPPABLE.has(status);
      controls.querySelector('[data-control="resume"]').disabled = !RESUMABLE.has(status);
    }
  }

  setupControls() {
    const controls = this.root.querySelector("[data-controls]");
    if (!controls) return;
    for (const action of ["stop", "resume"]) {
      controls.querySelector(`[data-control="${action}"]`).addEventListener("click", async () => {
        try {
          const detail = await apiJson(`${this.api}/${action}`, { method: "POST" });
          say(this.root, `${action === "stop" ? "Stop" : "Resume"}: the run is ${detail.status}.`, false);
          await this.refreshDetail();
          this.schedulePoll();
        } catch (error) {
          say(this.root, `Could not ${action} the run: ${error.message}`);
        }
      });
    }
    controls.querySelector('[data-control="export"]').addEventListener("click", () => this.download());
  }

  async download() {
    try {
      const response = await apiFetch(`${this.api}/export`);
      const blob = await response.blob();
      const match = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") || "");
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = match ? match[1] : "evolution-run.tar.gz";
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    } catch (error) {
      say(this.root, `The archive could not be downloaded: ${error.message}`);
    }
  }

  // --- panels -----------------------------------------------------------------------------------

  async loadGenerations() {
    const gens = await this.guard("The generations", apiJson(`${this.api}/generations`));
    if (!gens) return;
    const islands = Math.min(MAX_ISLANDS_CHARTED, Number(this.detail?.config?.search?.islands) || 1);
    const series = [];
    for (let i = 0; i < islands; i++) {
      series.push({ key: `best_${i}`, label: `island ${i} best`, color: PALETTE[i] });
      series.push({ key: `median_${i}`, label: `island ${i} median`, color: PALE[i] });
    }
    this.chart.series = series;
    this.chart.points = series.map(() => []);
    for (const gen of gens) {
      const values = {};
      for (let i = 0; i < islands; i++) {
        const stats = gen.stats?.islands?.[String(i)] || {};
        values[`best_${i}`] = stats.best;
        values[`median_${i}`] = stats.median;
      }
      this.chart.add(gen.number, values);
    }
    this.chart.redraw();
    const legend = this.root.querySelector("[data-fitness-legend]");
    const title = legend.querySelector(".training-chart-title");
    legend.replaceChildren(title);
    for (const s of series) {
      const item = el("span", "training-legend");
      item.append(swatch(s.color), ` ${s.label}`);
      legend.append(item);
    }
    this.root.dataset.generations = String(gens.length);
  }

  async loadGrid() {
    const grid = await this.guard("The grid", apiJson(`${this.api}/grid`));
    if (!grid) return;
    this.heatmap.set(grid);
    const occupancy = Object.entries(grid.occupancy).map(([island, cells]) => `island ${island}: ${cells}`);
    text(
      this.root.querySelector("[data-grid-note]"),
      `${grid.cells_filled} of ${grid.bins * grid.bins} cells filled (${occupancy.join(", ") || "none"}).`,
    );
    this.root.dataset.gridCells = String(grid.cells.length);
  }

  async loadLineage() {
    const lineage = await this.guard("The lineage", apiJson(`${this.api}/lineage`));
    if (!lineage) return;
    this.lineage.set(lineage);
    this.root.dataset.lineageNodes = String(lineage.nodes.length);
  }

  async loadSpend() {
    const spend = await this.guard("The spend", apiJson(`${this.api}/spend`));
    if (!spend) return;
    const rows = spend.lines.map((line) => {
      const tr = document.createElement("tr");
      tr.append(el("td", "", line.role), el("td", "", line.model));
      for (const value of [
        formatNumber(line.calls),
        formatNumber(line.failed),
        formatNumber(line.prompt_tokens),
        formatNumber(line.completion_tokens),
        usd(line.cost_usd),
      ]) {
        tr.append(el("td", "num", value));
      }
      return tr;
    });
    this.root.querySelector("[data-spend]").replaceChildren(...rows);
    labelCells(this.root.querySelector("[data-spend]").closest("table"));
    const budget = spend.budget_usd;
    text(
      this.root.querySelector("[data-spend-total]"),
      `${usd(spend.total_usd)} spent${budget === null ? " (no budget)" : ` of ${usd(budget)}`}, ${formatNumber(spend.tokens)} tokens, ${formatNumber(spend.calls)} calls`,
    );
    const bar = this.root.querySelector("[data-spend-bar]");
    if (bar && typeof budget === "number" && budget > 0) {
      bar.max = budget;
      bar.value = Math.min(budget, spend.total_usd);
      bar.hidden = false;
    }
  }

  async loadPayoff() {
    const payoff = await this.guard("The payoff table", apiJson(`${this.api}/payoff`));
    if (!payoff) return;
    await this.nameBots(payoff.opponents);
    const head = document.createElement("tr");
    head.append(el("th", "", "program"));
    for (const title of ["generation", "fitness", "Nash fitness"]) head.append(el("th", "num", title));
    for (const opponent of payoff.opponents) head.append(this.opponentHeader(opponent));
    this.root.querySelector("[data-payoff-head]").replaceChildren(head);
    const rows = payoff.rows.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.program = row.program;
      const name = el("button", "evolution-link", row.program);
      name.type = "button";
      name.addEventListener("click", () => this.openProgram(row.program));
      const first = el("td");
      first.append(name);
      tr.append(first, el("td", "num", String(row.generation)), el("td", "num", fitness(row.fitness)), el("td", "num", fitness(row.nash_fitness)));
      const cells = new Map(row.cells.map((c) => [c.opponent, c]));
      for (const opponent of payoff.opponents) {
        const c = cells.get(opponent);
        tr.append(el("td", "num", c ? `${formatRate(c.win_rate)} (${c.games})` : "-"));
      }
      return tr;
    });
    if (payoff.rows.length) {
      const mix = document.createElement("tr");
      mix.className = "evolution-mixture";
      mix.append(el("th", "", "opponents' mixture"), el("td"), el("td"), el("td"));
      for (const opponent of payoff.opponents) mix.append(el("td", "num", formatRate(payoff.mixture[opponent])));
      rows.push(mix);
    }
    this.root.querySelector("[data-payoff]").replaceChildren(...rows);
    labelCells(this.root.querySelector("[data-payoff]").closest("table"));
    this.root.querySelector("[data-payoff-empty]").hidden = payoff.rows.length > 0;
  }

  /** Look up the names of the fleet bots among `opponents` ("bot:<id>") not named yet. */
  async nameBots(opponents) {
    const wanted = new Set(opponents.map((key) => FLEET_KEY.exec(key)?.[1]).filter((id) => id && !this.botNames.has(id)));
    if (!wanted.size) return;
    const game = this.detail?.game;
    for (let page = 0; page < MAX_BOT_PAGES && wanted.size; page++) {
      const query = new URLSearchParams({ limit: String(BOT_PAGE), offset: String(page * BOT_PAGE) });
      if (game) query.set("game", game);
      let body;
      try {
        body = await apiJson(`${this.pageRoot}/api/v1/bots/public?${query}`);
      } catch {
        return; // the keys stay as they are
      }
      for (const bot of body.items || []) {
        this.botNames.set(bot.id, bot.name);
        wanted.delete(bot.id);
      }
      if ((page + 1) * BOT_PAGE >= body.total) break;
    }
  }

  /** An opponent's column header: its name (cut short, whole in the title), a fleet bot linked. */
  opponentHeader(key) {
    const fleet = FLEET_KEY.exec(key);
    const name = fleet && this.botNames.has(fleet[1]) ? this.botNames.get(fleet[1])
      : key.startsWith("file:") ? key.slice(5).split("/").pop() || key : key;
    const th = el("th", "num");
    th.scope = "col";
    th.dataset.opponent = key;
    const label = fleet ? el("a", "trunc", name) : el("span", "trunc", name);
    if (fleet) label.href = `${this.pageRoot}/bots/${encodeURIComponent(fleet[1])}`;
    label.title = name === key ? key : `${name} (${key})`;
    th.append(label);
    return th;
  }

  // --- one program --------------------------------------------------------------------------------

  async openProgram(name) {
    let program;
    try {
      program = await apiJson(`${this.api}/programs/${encodeURIComponent(name)}`);
    } catch (error) {
      say(this.root, `Program ${name} could not be loaded: ${error.message}`);
      return;
    }
    this.program = program.name;
    this.lineage.select(program.name);
    const panel = this.root.querySelector("[data-program-panel]");
    text(panel.querySelector("[data-program-name]"), program.name);
    panel.querySelector("[data-program-empty]").hidden = true;
    panel.querySelector("[data-program-body]").hidden = false;
    const facts = panel.querySelector("[data-program-facts]");
    const fact = (label, ...content) => {
      const box = el("div");
      const dd = el("dd");
      dd.append(...content);
      box.append(el("dt", "", label), dd);
      return box;
    };
    const links = (names) => {
      if (!names.length) return ["-"];
      const out = [];
      names.forEach((n, i) => {
        if (i) out.push(" ");
        const button = el("button", "evolution-link", n);
        button.type = "button";
        button.addEventListener("click", () => this.openProgram(n));
        out.push(button);
      });
      return out;
    };
    facts.replaceChildren(
      fact("generation", String(program.generation)),
      fact("island", String(program.island)),
      fact("origin", program.origin),
      fact("status", program.status),
      fact("fitness", fitness(program.fitness)),
      fact("Nash fitness", fitness(program.nash_fitness)),
      fact("stage", program.stage || "-"),
      fact("cell", program.cell ? program.cell.join(", ") : "-"),
      fact("parent", ...links(program.parent ? [program.parent] : [])),
      fact("parent fitness", fitness(program.parent_fitness)),
      fact("children", ...links(program.children)),
      fact("inspirations", ...links(program.inspirations)),
    );
    const focus = [program.focus && `Asked: ${program.focus}`, program.explanation && `Changed: ${program.explanation}`, program.error && `Error: ${program.error}`];
    text(panel.querySelector("[data-program-focus]"), focus.filter(Boolean).join(" \u00b7 "));
    text(panel.querySelector("[data-program-code]"), program.code);
    const diff = panel.querySelector("[data-program-diff]");
    diff.replaceChildren();
    if (program.diff) {
      for (const line of program.diff.split("\n")) {
        let kind = "";
        if (line.startsWith("+++") || line.startsWith("---")) kind = "diff-file";
        else if (line.startsWith("@@")) kind = "diff-hunk";
        else if (line.startsWith("+")) kind = "diff-add";
        else if (line.startsWith("-")) kind = "diff-del";
        diff.append(el("span", kind, `${line}\n`));
      }
    } else diff.textContent = program.parent ? "(no diff stored)" : "(a seed: no parent)";
    text(
      panel.querySelector("[data-program-metrics]"),
      JSON.stringify({ metrics: program.metrics, descriptors: program.descriptors, feedback: program.feedback }, null, 2),
    );
    panel.dataset.program = program.name;
  }

  // --- events ---------------------------------------------------------------------------------------

  async readEvents() {
    const fresh = [];
    let status = null;
    for (let page = 0; page < MAX_EVENT_PAGES; page++) {
      const query = new URLSearchParams({ after: String(this.lastEvent), limit: String(EVENTS_PAGE) });
      const body = await apiJson(`${this.api}/events?${query}`);
      status = body.status;
      fresh.push(...body.items);
      this.lastEvent = body.next_after;
      if (body.items.length < EVENTS_PAGE) break;
    }
    for (const event of fresh) this.addEvent(event);
    this.eventsSeen += fresh.length;
    this.root.dataset.eventsSeen = String(this.eventsSeen);
    return { fresh, status };
  }

  addEvent(event) {
    if (!DECISION_KINDS.has(event.kind)) return;
    const list = this.root.querySelector("[data-decisions]");
    const item = el("li", `evolution-event evolution-${event.kind.replace(/_/g, "-")}`);
    item.dataset.eventId = String(event.id);
    item.dataset.kind = event.kind;
    const when = new Date(event.created_at);
    item.append(el("div", "evolution-event-head", `generation ${event.generation} \u00b7 ${event.kind.replace(/_/g, " ")} \u00b7 ${Number.isNaN(when.getTime()) ? "" : when.toLocaleTimeString()}`));
    const data = event.data || {};
    const paragraph = (value) => value && item.append(el("p", "evolution-reasoning", String(value)));
    if (event.kind === "root_decision") {
      paragraph(data.reasoning);
      const calls = [...(data.tool_calls || []), ...(data.rejected || []).map((c) => ({ ...c, rejected: true }))];
      if (calls.length) {
        const ul = el("ul", "evolution-tool-calls");
        for (const call of calls) {
          const li = el("li");
          li.append(el("code", "", call.name || "?"), ` ${JSON.stringify(call.arguments ?? {})}${call.rejected ? " (rejected)" : ""}`);
          ul.append(li);
        }
        item.append(ul);
      }
    } else if (event.kind === "fallback") {
      paragraph(`The system decided in the root's place: ${data.why || "no reason given"}`);
    } else if (event.kind === "parameters_changed") {
      const changes = Object.entries(data.changes || {}).map(([k, v]) => `${k}: ${formatNumber(v?.from)} \u2192 ${formatNumber(v?.to)}`);
      paragraph(changes.join("; "));
      paragraph(data.reasoning);
    } else if (event.kind === "generation_advanced") {
      paragraph(`Generation ${data.from} closed; parents selected: ${(data.selected || []).join(", ") || "none"}.`);
      paragraph(data.reasoning);
    } else if (event.kind === "terminated") {
      paragraph(`The run ended: ${data.reason || "-"}${data.best ? `; best program ${data.best}` : ""}.`);
    } else {
      paragraph(JSON.stringify(data));
    }
    list.prepend(item);
    this.root.querySelector("[data-decisions-empty]").hidden = true;
  }

  schedulePoll() {
    clearTimeout(this.pollTimer);
    const live = LIVE.has(this.status);
    this.root.dataset.live = live ? "on" : "off";
    text(this.root.querySelector("[data-live-state]"), live ? "live" : "not live");
    if (live) this.pollTimer = setTimeout(() => this.poll(), this.pollMs);
  }

  async poll() {
    this.polls += 1;
    try {
      const { fresh, status } = await this.readEvents();
      const kinds = new Set(fresh.map((e) => e.kind));
      const work = [];
      if (fresh.length || (status && status !== this.status)) work.push(this.refreshDetail(), this.loadSpend());
      if ([...kinds].some((k) => POPULATION_KINDS.has(k))) {
        work.push(this.loadGenerations(), this.loadGrid(), this.loadLineage(), this.loadPayoff());
      }
      await Promise.all(work);
    } catch (error) {
      say(this.root, `Live updates failed (retrying): ${error.message}`);
    }
    this.root.dataset.polls = String(this.polls);
    this.schedulePoll();
  }
}

const root = document.querySelector("[data-evolution-run]");
if (root) {
  const page = new EvolutionPage(root);
  window.arenaEvolution = page;
  page.boot();
}
