// A training run's page, live (docs/web.md, "Training pages"). A run is its owner's (and admins')
// only, so everything here is read with the API key the owner pastes (training_api.js):
// - charts of the run's metrics over global steps (training_charts.js), filled from
//   GET /api/v1/training/runs/{id}/metrics and extended by the `training.progress` events of
//   WebSocket /ws/training/{id} (docs/live.md; the key is the socket's first message);
// - the facts (status, stage, iteration, steps, elapsed, the imitation agreement while the run
//   imitates...), the evaluation table, the league table and the changes waiting for the next
//   iteration, from GET /api/v1/training/runs/{id};
// - the controls: stop, resume, config changes, export;
// - the showcase race in the replay viewer (training_race.js).
// The socket is opened first and its `training.subscribed` message awaited before the history is
// read, so no iteration falls between the two; points are merged by iteration (never drawn twice).
// Everything from the API goes in as text (textContent).

import { LineChart } from "./training_charts.js";
import { RaceView } from "./training_race.js";
import {
  ElapsedClock,
  apiJson,
  apiKey,
  budgetProgress,
  formatDuration,
  formatNumber,
  formatRate,
  labelCells,
  say,
  setupKeyForm,
} from "./training_api.js";

const PAGE_SIZE = 1000;
const MAX_HISTORY_PAGES = 500;
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30000;
const SOCKET_WAIT_MS = 3000;
const DETAIL_GAP_MS = 5000;
const URGENT_DETAIL_GAP_MS = 1000;
/** Close codes after which reconnecting cannot help (docs/live.md). */
const FINAL_CLOSES = new Map([
  [1008, "the page asked for something the socket refuses"],
  [4401, "the API key was refused"],
  [4404, "no such run, or not yours"],
]);
const STOPPABLE = new Set(["queued", "running"]);
const RESUMABLE = new Set(["stopped", "failed", "stopping"]);

function text(node, value) {
  if (node) node.textContent = value;
}

function socketUrl(path) {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}${path}`;
}

function label(key) {
  return key.replace(/_/g, " ");
}

function tableRow(values) {
  const row = document.createElement("tr");
  for (const value of values) {
    const td = document.createElement("td");
    td.textContent = value;
    row.append(td);
  }
  return row;
}

function opponentName(result) {
  const name = String(result.opponent).replace(/^builtin:/, "");
  const plans = result.opponent_config?.max_iterations;
  return typeof plans === "number" ? `${name} (${formatNumber(plans)} plans a turn)` : name;
}

function record(result) {
  return `${result.wins}/${result.draws}/${result.losses}`;
}

function interval(result) {
  const [low, high] = Array.isArray(result.interval) ? result.interval : [];
  return typeof low === "number" && typeof high === "number" ? `${formatRate(low)} \u2013 ${formatRate(high)}` : "-";
}

/** What the run's `config.evaluation` asks for, in words. */
function evaluationSettings(settings) {
  if (!settings || typeof settings !== "object") return "";
  if (!settings.every_chunks) return "This run is not evaluated (config.evaluation.every_chunks is 0).";
  const every = settings.every_chunks === 1 ? "every chunk" : `every ${settings.every_chunks} chunks`;
  return `This run: ${every} and after the last, ${settings.races} races each against runner and blocker, ` +
    `${settings.search_races} against search.`;
}

class RunPage {
  constructor(root) {
    this.root = root;
    this.api = root.dataset.api;
    this.socketPath = root.dataset.socket;
    this.pageRoot = root.dataset.root || "";
    try {
      this.renderers = JSON.parse(root.dataset.renderers || "{}");
    } catch {
      this.renderers = {};
    }
    this.charts = [];
    this.lastIteration = 0; // iterations count from 1
    this.historyRead = false;
    this.pending = [];
    this.catchingUp = null;
    this.socket = null;
    this.retryMs = RETRY_FIRST_MS;
    this.detail = null;
    this.detailAt = -Infinity;
    this.detailFetching = false;
    this.detailAgain = false;
    this.detailTimer = null;
    this.elapsed = new ElapsedClock();
    this.status = "";
    this.received = 0;
    this.race = null;
    this.started = false;
  }

  boot() {
    for (const figure of this.root.querySelectorAll("[data-chart]")) {
      let series = [];
      try {
        series = JSON.parse(figure.dataset.series || "[]");
      } catch {
        series = [];
      }
      const bounds = {};
      if (figure.dataset.min !== undefined) bounds.min = Number(figure.dataset.min);
      if (figure.dataset.max !== undefined) bounds.max = Number(figure.dataset.max);
      const chart = new LineChart(figure.querySelector("canvas"), series, bounds);
      chart.id = figure.dataset.chart;
      this.charts.push(chart);
    }
    setupKeyForm(this.root, () => (this.started ? window.location.reload() : this.start()));
    this.setupControls();
    this.start();
  }

  /** Everything that needs the key: once a key is set. */
  start() {
    if (!apiKey()) {
      say(this.root, "Paste your API key above to see this run.", false);
      return;
    }
    this.started = true;
    say(this.root, "");
    this.connect();
    // Without a socket (refused, or a proxy that drops it) the history still loads.
    setTimeout(() => {
      if (!this.historyRead && !this.catchingUp) this.catchUp();
    }, SOCKET_WAIT_MS);
    this.refreshDetail(true);
    setInterval(() => this.tickElapsed(), 1000);
    const raceRoot = this.root.querySelector("[data-race]");
    if (raceRoot) {
      this.race = new RaceView(raceRoot, raceRoot.dataset.raceUrl, this.renderers);
      this.race.start();
    }
  }

  // --- live socket -----------------------------------------------------------------------------

  setSocketState(state) {
    this.root.dataset.socketState = state;
    const words = { open: "live", connecting: "connecting\u2026", closed: "reconnecting\u2026", gone: "not live" };
    text(this.root.querySelector("[data-live-state]"), words[state] || state);
  }

  connect() {
    this.setSocketState("connecting");
    const socket = new WebSocket(socketUrl(this.socketPath));
    this.socket = socket;
    socket.addEventListener("open", () => socket.send(JSON.stringify({ type: "auth", api_key: apiKey() })));
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", (event) => {
      const final = FINAL_CLOSES.get(event.code);
      if (final) {
        this.setSocketState("gone");
        say(this.root, `Live updates are off: ${event.reason || final}.`);
        return;
      }
      this.setSocketState("closed");
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    });
  }

  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (message.type === "training.subscribed") {
      this.retryMs = RETRY_FIRST_MS;
      this.setSocketState("open");
      this.catchUp();
    } else if (message.type === "training.progress") {
      this.received += 1;
      this.root.dataset.eventsReceived = String(this.received);
      if (this.catchingUp || !this.historyRead) this.pending.push(message);
      else this.accept(message);
    } else if (message.type === "training.status") {
      this.setStatus(message.status);
      if (message.stage) text(this.root.querySelector("[data-stage]"), message.stage);
      if (message.status === "failed" && message.error) say(this.root, `The run failed: ${message.error}`);
      this.refreshDetail(true);
    }
  }

  // --- metrics ---------------------------------------------------------------------------------

  /** Read every iteration after the last one shown, then whatever arrived live meanwhile. */
  catchUp() {
    if (this.catchingUp) return this.catchingUp;
    this.catchingUp = this.readHistory()
      .catch((error) => say(this.root, `The metrics could not be loaded: ${error.message}`))
      .finally(() => {
        this.catchingUp = null;
        const waiting = this.pending.splice(0).sort((a, b) => a.iteration - b.iteration);
        for (const event of waiting) this.accept(event);
        this.historyRead = true;
        this.root.dataset.history = "loaded";
      });
    return this.catchingUp;
  }

  async readHistory() {
    for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
      const query = new URLSearchParams({ after: String(this.lastIteration), limit: String(PAGE_SIZE) });
      const body = await apiJson(`${this.api}/metrics?${query}`);
      for (const item of body.items || []) this.accept(item, false);
      if (body.next_after === null || body.next_after === undefined) break;
    }
  }

  /** One iteration's point: onto the charts (once), and into the facts. */
  accept(point, live = true) {
    if (typeof point.iteration !== "number" || point.iteration <= this.lastIteration) return;
    this.lastIteration = point.iteration;
    const metrics = point.metrics || {};
    for (const chart of this.charts) chart.add(point.global_step, metrics);
    this.root.dataset.lastIteration = String(point.iteration);
    this.showProgress(point, metrics);
    if (live) {
      if (point.status) this.setStatus(point.status);
      const leagueChanged = typeof metrics.league_size === "number" && metrics.league_size !== this.leagueSnapshots();
      const stageChanged = point.stage && this.detail && point.stage !== this.detail.stage;
      this.refreshDetail(leagueChanged || stageChanged || this.hasPending());
    }
  }

  showProgress(point, metrics) {
    text(this.root.querySelector("[data-iteration]"), formatNumber(point.iteration));
    text(this.root.querySelector("[data-global-step]"), formatNumber(point.global_step));
    if (this.detail && point.global_step > this.detail.global_step) {
      this.detail.global_step = point.global_step;
      this.tickElapsed();
    }
    if (point.stage || metrics.stage) text(this.root.querySelector("[data-stage]"), point.stage || metrics.stage);
    if ("win_rate_runner" in metrics) text(this.root.querySelector("[data-win-rate-runner]"), formatRate(metrics.win_rate_runner));
    if ("sps" in metrics) text(this.root.querySelector("[data-sps]"), formatNumber(metrics.sps));
    const stage = point.stage || metrics.stage;
    if (stage) {
      // DAgger's agreement with the teacher: a fact while the run imitates, gone once PPO takes over.
      const imitating = stage === "imitate" && typeof metrics.imitation_agreement === "number";
      const fact = this.root.querySelector("[data-imitation-fact]");
      if (fact) fact.hidden = !imitating;
      if (imitating) text(this.root.querySelector("[data-imitation-agreement]"), formatRate(metrics.imitation_agreement));
    }
  }

  // --- run detail ------------------------------------------------------------------------------

  /** Read the run again: at most every 5 s, or every second when `urgent` (its status, stage or
   * league changed, or changes are pending). A call while a read is under way asks for one more. */
  async refreshDetail(urgent = false) {
    if (this.detailFetching) {
      this.detailAgain = this.detailAgain || urgent;
      return;
    }
    const wait = (urgent ? URGENT_DETAIL_GAP_MS : DETAIL_GAP_MS) - (performance.now() - this.detailAt);
    if (wait > 0) {
      if (urgent && !this.detailTimer) {
        this.detailTimer = setTimeout(() => {
          this.detailTimer = null;
          this.refreshDetail(true);
        }, wait);
      }
      return;
    }
    this.detailFetching = true;
    this.detailAt = performance.now();
    try {
      this.showDetail(await apiJson(this.api));
    } catch (error) {
      say(this.root, `The run could not be loaded: ${error.message}`);
    } finally {
      this.detailFetching = false;
    }
    if (this.detailAgain) {
      this.detailAgain = false;
      setTimeout(() => this.refreshDetail(true), URGENT_DETAIL_GAP_MS);
    }
  }

  showDetail(detail) {
    const checkpointBefore = this.detail?.checkpoint_iteration;
    this.detail = detail;
    this.root.dataset.detailLoaded = "true";
    text(this.root.querySelector("[data-run-name]"), detail.name);
    document.title = `${detail.name} \u00b7 training \u00b7 Arena`;
    text(this.root.querySelector("[data-run-owner-line]"), `${detail.game} \u00b7 on ${detail.device} \u00b7 run ${detail.id}`);
    this.setStatus(detail.status);
    if (detail.status === "failed" && detail.error) say(this.root, `The run failed: ${detail.error}`);
    text(this.root.querySelector("[data-stage]"), detail.stage);
    if (detail.iteration >= this.lastIteration) {
      text(this.root.querySelector("[data-iteration]"), formatNumber(detail.iteration));
      text(this.root.querySelector("[data-global-step]"), formatNumber(detail.global_step));
    }
    this.elapsed.update(detail.elapsed_s, detail.status === "running");
    this.tickElapsed();
    const latest = detail.latest_metrics?.metrics || {};
    if (detail.latest_metrics && detail.latest_metrics.iteration >= this.lastIteration) this.showProgress(detail.latest_metrics, latest);
    text(this.root.querySelector("[data-checkpoint]"), detail.checkpoint_iteration === null ? "none yet" : `iteration ${formatNumber(detail.checkpoint_iteration)}`);
    this.showBot(detail.bot_id);
    this.showLeague(detail.league || []);
    this.showEvaluations(detail.evaluations || [], detail.config?.evaluation);
    this.showPending(detail.pending_changes);
    this.fillConfig(detail.config || {});
    if (checkpointBefore !== undefined && checkpointBefore !== detail.checkpoint_iteration) this.race?.refresh(true);
  }

  showBot(botId) {
    const box = this.root.querySelector("[data-run-bot]");
    if (!box) return;
    if (!botId) {
      box.textContent = "not exported yet";
      return;
    }
    const link = document.createElement("a");
    link.href = `${this.pageRoot}/bots/${encodeURIComponent(botId)}`;
    link.textContent = "its page";
    box.replaceChildren(link);
  }

  leagueSnapshots() {
    // The table lists the learner (`latest`) too; league_size counts the snapshots.
    const league = this.detail?.league;
    return Array.isArray(league) ? league.filter((entry) => entry.name !== "latest").length : null;
  }

  hasPending() {
    const pending = this.detail?.pending_changes;
    return Boolean(pending && Object.keys(pending).length);
  }

  /** Elapsed time and progress against the budget that ends the run, counting on while it trains. */
  tickElapsed() {
    if (this.elapsed.seconds === null || !this.detail) return;
    if (this.status !== "running" && this.elapsed.running) this.elapsed.update(this.elapsed.reported, false);
    const seconds = this.elapsed.seconds;
    text(this.root.querySelector("[data-elapsed]"), formatDuration(seconds));
    const box = this.root.querySelector("[data-progress]");
    if (!box) return;
    const progress = budgetProgress(this.detail, seconds);
    box.replaceChildren(progress.text);
    box.dataset.budget = progress.by;
    if (progress.other) {
      const other = document.createElement("span");
      other.className = "progress-note";
      other.textContent = progress.other;
      box.append(other);
    }
  }

  setStatus(status) {
    if (!status) return;
    this.status = status;
    this.root.dataset.status = status;
    text(this.root.querySelector("[data-run-status]"), status);
    const stop = this.root.querySelector('[data-control="stop"]');
    const resume = this.root.querySelector('[data-control="resume"]');
    if (stop) stop.disabled = !STOPPABLE.has(status);
    if (resume) resume.disabled = !RESUMABLE.has(status);
  }

  showLeague(league) {
    const body = this.root.querySelector("[data-league]");
    if (!body) return;
    body.replaceChildren(
      ...league.map((entry, index) => {
        const row = document.createElement("tr");
        row.dataset.leagueEntry = entry.name;
        const rating = typeof entry.mu === "number" && typeof entry.sigma === "number"
          ? `${entry.mu.toFixed(2)} \u00b1 ${entry.sigma.toFixed(2)}`
          : "-";
        const cells = [
          String(index + 1),
          entry.name,
          entry.iteration === null || entry.iteration === undefined ? "-" : formatNumber(entry.iteration),
          typeof entry.ordinal === "number" ? entry.ordinal.toFixed(2) : "-",
          rating,
          formatNumber(entry.races),
        ];
        for (const value of cells) {
          const td = document.createElement("td");
          td.textContent = value;
          row.append(td);
        }
        return row;
      }),
    );
    labelCells(body.closest("table"));
    text(this.root.querySelector("[data-league-empty]"), league.length ? "" : "No league yet: it comes with the first checkpoint.");
  }

  /** The newest evaluation as a table (one row per opponent), the earlier ones as a history. */
  showEvaluations(evaluations, settings) {
    text(this.root.querySelector("[data-evaluation-settings]"), evaluationSettings(settings));
    const [latest, ...earlier] = evaluations;
    const body = this.root.querySelector("[data-evaluation]");
    if (body) {
      const results = latest?.results || [];
      body.replaceChildren(
        ...results.map((result) => {
          const row = tableRow([
            opponentName(result),
            formatNumber(result.races),
            record(result),
            formatRate(result.win_rate),
            interval(result),
          ]);
          row.dataset.evaluationOpponent = result.opponent;
          return row;
        }),
      );
      labelCells(body.closest("table"));
    }
    const at = this.root.querySelector("[data-evaluation-at]");
    if (at) {
      at.hidden = !latest;
      if (latest) at.textContent = `At iteration ${formatNumber(latest.iteration)} (${formatNumber(latest.global_step)} steps, stage ${latest.stage}):`;
    }
    text(this.root.querySelector("[data-evaluation-empty]"), latest ? "" : "No evaluation yet: one comes every few checkpoints.");
    const history = this.root.querySelector("[data-evaluation-history]");
    if (history) {
      history.replaceChildren(
        ...earlier.map((evaluation) => {
          const byOpponent = new Map((evaluation.results || []).map((r) => [r.opponent, r]));
          const cell = (name) => {
            const result = byOpponent.get(name);
            return result ? `${formatRate(result.win_rate)} (${record(result)})` : "-";
          };
          const row = tableRow([
            formatNumber(evaluation.iteration),
            formatNumber(evaluation.global_step),
            String(evaluation.stage),
            cell("builtin:runner"),
            cell("builtin:blocker"),
            cell("builtin:search"),
          ]);
          row.dataset.evaluationIteration = String(evaluation.iteration);
          return row;
        }),
      );
      labelCells(history.closest("table"));
    }
    const box = this.root.querySelector("[data-evaluation-history-box]");
    if (box) box.hidden = earlier.length === 0;
  }

  showPending(pending) {
    const list = this.root.querySelector("[data-pending]");
    if (!list) return;
    const entries = pending && typeof pending === "object" ? Object.entries(pending) : [];
    list.replaceChildren(
      ...entries.map(([key, value]) => {
        const item = document.createElement("li");
        item.dataset.pending = key;
        const shown = value && typeof value === "object"
          ? Object.entries(value).map(([name, weight]) => `${label(name)} ${weight}`).join(", ")
          : String(value);
        item.textContent = `${label(key)}: ${shown}`;
        return item;
      }),
    );
    const box = this.root.querySelector("[data-pending-box]");
    if (box) box.hidden = entries.length === 0;
  }

  // --- the controls ----------------------------------------------------------------------------

  async control(name, method, path, body) {
    say(this.root, `${name}\u2026`, false);
    try {
      const answer = await apiJson(this.api + path, { method, body });
      say(this.root, `${name}: done.`, false);
      return answer;
    } catch (error) {
      say(this.root, `${name} failed: ${error.message}`);
      return null;
    }
  }

  setupControls() {
    const controls = this.root.querySelector("[data-controls]");
    if (!controls) return;
    controls.hidden = false;
    const act = (selector, name, path) => {
      controls.querySelector(selector)?.addEventListener("click", async () => {
        const answer = await this.control(name, "POST", path);
        if (answer) this.showDetail(answer);
      });
    };
    act('[data-control="stop"]', "Stop", "/stop");
    act('[data-control="resume"]', "Resume", "/resume");
    controls.querySelector('[data-control="export"]')?.addEventListener("click", async () => {
      const answer = await this.control("Export", "POST", "/export");
      if (answer) {
        this.showExport(answer);
        this.refreshDetail(true);
      }
    });
    const form = controls.querySelector("form[data-config-form]");
    form?.addEventListener("submit", async (event) => {
      event.preventDefault();
      const changes = this.configChanges(form);
      if (!changes) return;
      if (!Object.keys(changes).length) {
        say(this.root, "Nothing to change: the form shows the run's config.", false);
        return;
      }
      const answer = await this.control("Config change", "PATCH", "/config", changes);
      if (answer) this.showDetail(answer);
    });
  }

  showExport(answer) {
    const box = this.root.querySelector("[data-export-result]");
    if (!box) return;
    const link = document.createElement("a");
    link.href = `${this.pageRoot}/bots/${encodeURIComponent(answer.bot.id)}`;
    link.textContent = answer.bot.name;
    link.dataset.exportedBot = answer.bot.id;
    box.replaceChildren(
      answer.bot_created ? "Exported as a new bot, " : "Exported as a new version of ",
      link,
      `: version ${answer.version.number}.`,
    );
    box.hidden = false;
  }

  /** The fields of the form that differ from the run's config (null, and a message, when one is
   * not a number). */
  configChanges(form) {
    const config = this.detail?.config || {};
    const changes = {};
    for (const name of ["learning_rate", "ent_coef"]) {
      const input = form.elements.namedItem(name);
      if (!input || input.value.trim() === "") continue;
      const value = Number(input.value);
      if (!Number.isFinite(value)) {
        say(this.root, `The ${label(name)} must be a number.`);
        return null;
      }
      if (value !== config[name]) changes[name] = value;
    }
    const rewards = {};
    for (const input of form.querySelectorAll("input[data-reward]")) {
      if (input.value.trim() === "") continue;
      const value = Number(input.value);
      if (!Number.isFinite(value)) {
        say(this.root, `The reward weight ${label(input.dataset.reward)} must be a number.`);
        return null;
      }
      if (value !== config.rewards?.[input.dataset.reward]) rewards[input.dataset.reward] = value;
    }
    if (Object.keys(rewards).length) changes.rewards = rewards;
    const stage = form.elements.namedItem("stage");
    if (stage?.value && stage.value !== this.detail?.stage) changes.stage = stage.value;
    return changes;
  }

  /** Show the run's config in the form, unless the owner is typing in it. */
  fillConfig(config) {
    const form = this.root.querySelector("form[data-config-form]");
    if (!form || form.contains(document.activeElement)) return;
    for (const name of ["learning_rate", "ent_coef"]) {
      const input = form.elements.namedItem(name);
      if (input && typeof config[name] === "number") input.value = String(config[name]);
    }
    const stage = form.elements.namedItem("stage");
    if (stage && this.detail?.stage) stage.value = this.detail.stage;
    // The imitate stage copies the run's teacher: a run created without one cannot go there.
    const imitate = stage?.querySelector?.('option[value="imitate"]');
    if (imitate) {
      imitate.disabled = !config.teacher && this.detail?.stage !== "imitate";
      imitate.title = imitate.disabled ? "this run has no teacher to imitate" : "";
    }
    const box = form.querySelector("[data-rewards]");
    const rewards = config.rewards && typeof config.rewards === "object" ? config.rewards : {};
    if (!box) return;
    for (const [name, weight] of Object.entries(rewards)) {
      let input = box.querySelector(`input[data-reward="${CSS.escape(name)}"]`);
      if (!input) {
        const wrapper = document.createElement("label");
        input = document.createElement("input");
        input.type = "number";
        input.step = "any";
        input.dataset.reward = name;
        input.name = `reward_${name}`;
        wrapper.append(label(name), " ", input);
        box.append(wrapper);
      }
      if (typeof weight === "number") input.value = String(weight);
    }
  }
}

const root = document.querySelector("[data-training-run]");
if (root) {
  const page = new RunPage(root);
  window.arenaTraining = page;
  page.boot();
}
