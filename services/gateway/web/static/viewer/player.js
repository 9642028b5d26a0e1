// The replay viewer's core: a canvas loop that plays a replay's frames at 60 fps with a float frame
// position (renderers interpolate between frames), the controls around it, the players' names in
// their colours, event markers on the timeline with their legend, the side panel and the result
// panel. What is drawn is up to a renderer module, one per game (static/viewer/<game>.js); see
// docs/viewer.md for what a renderer exports.
//
// One clock: everything a person reads (the counter, `?t=`, marker titles, the result) counts turns.
// Frames are the player's own unit (a battle has two a turn); a renderer maps between the two.

import { el, num } from "./dom.js";

export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
const DEFAULT_FRAMES_PER_SECOND = 10;
const PANEL_INTERVAL_MS = 250;
/** With `loop` on, the pause at the end of a replay before it starts again. */
const LOOP_PAUSE_MS = 2000;
/** While following a live match, more than this many seconds behind jumps to the newest frame. */
const LIVE_MAX_LAG_S = 3;
const GAME_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * Import the renderer module of `game`. `urls` maps game names to module URLs (the page passes
 * fingerprinted ones); a game not in it is looked up next to this file.
 */
export async function loadRenderer(game, urls = {}) {
  if (typeof game !== "string" || !GAME_NAME.test(game)) {
    throw new Error(`not a game name: ${JSON.stringify(game)}`);
  }
  const url = Object.hasOwn(urls, game) ? urls[game] : new URL(`./${game}.js`, import.meta.url).href;
  try {
    return await import(url);
  } catch (error) {
    throw new Error(`no viewer for the game "${game}" (${error.message})`);
  }
}

/** Fail early, with a readable message, on something that is not a replay. */
export function checkReplay(replay) {
  if (!replay || typeof replay !== "object" || Array.isArray(replay)) throw new Error("a replay is a JSON object");
  if (!Array.isArray(replay.frames) || replay.frames.length === 0) throw new Error("the replay has no frames");
  if (typeof replay.game !== "string") throw new Error("the replay names no game");
  replay.events = Array.isArray(replay.events) ? replay.events : [];
  replay.turns = Array.isArray(replay.turns) ? replay.turns : [];
  return replay;
}

/** The turn of `?t=N` in the page's URL (null when absent or not a number). */
export function turnFromUrl(location = window.location) {
  const raw = new URLSearchParams(location.search).get("t");
  if (raw === null || !/^\d{1,9}$/.test(raw.trim())) return null;
  return Number(raw.trim());
}

function metricLabel(name) {
  return name.replace(/_/g, " ");
}

/**
 * Each player's name, by seat: the match's bots (`participants`, from the match API), else the
 * names a local replay stores (`replay.players`, written by `arena play`), else "player N". Two
 * seats with the same name get their seat number after it.
 */
export function playerNames(replay, participants = []) {
  const count = Math.max(replay?.num_players || 0, replay?.result?.players?.length || 0, participants?.length || 0);
  const stored = Array.isArray(replay?.players) ? replay.players : [];
  const names = Array.from({ length: count }, (_, i) => {
    const given = participants?.[i]?.name ?? stored[i]?.name;
    return typeof given === "string" && given.trim() ? given.trim() : `player ${i}`;
  });
  const seen = new Map();
  for (const name of names) seen.set(name, (seen.get(name) || 0) + 1);
  return names.map((name, i) => (seen.get(name) > 1 && name !== `player ${i}` ? `${name} (${i + 1})` : name));
}

/** A coloured dot for player `i`, styled through CSSOM (the page's policy refuses style attributes). */
export function playerSwatch(colour) {
  const dot = el("span", { class: "viewer-swatch", "aria-hidden": "true" });
  if (colour) dot.style.background = colour;
  return dot;
}

/** Player `i`'s name in its colour, linked to its bot's page when the match API named the bot. */
export function playerLabel(i, names, participants, colour) {
  const name = names[i] ?? `player ${i}`;
  const botId = participants?.[i]?.botId;
  const text = botId
    ? el("a", { href: `/bots/${encodeURIComponent(botId)}`, class: "viewer-name", title: name }, name)
    : el("span", { class: "viewer-name", title: name }, name);
  return el("span", { class: "viewer-player", "data-player": i }, playerSwatch(colour), text);
}

/** What the rank and score rows mean, when a renderer does not say it for its game. */
const GENERIC_NOTES = {
  rank: "#1 won; equal ranks are a draw",
  score: "the game's score",
  "rating change": "change of the ladder rating (mu - 3 sigma)",
};

function rowHead(label, note) {
  return el("th", { scope: "row" }, label, note ? el("span", { class: "viewer-metric-note" }, note) : null);
}

/**
 * The result table: one column per player, rows for rank, score and every metric any player has,
 * each with a short note saying what it counts (`renderer.resultNotes`).
 * `participants[i]` is {name, botId, metrics?, ordinalChange?} (from the match API) or absent.
 */
export function resultPanel(replay, participants, downloadUrl, renderer = {}, model = null) {
  const box = el("div", { class: "viewer-result-body" });
  const result = replay.result;
  const names = playerNames(replay, participants);
  const players = Array.from({ length: replay.num_players || (result?.players?.length ?? 0) }, (_, i) => i);
  const seat = (i) => result?.players?.find((p) => p.player === i) || null;
  const colour = (i) => (typeof renderer.playerColour === "function" ? renderer.playerColour(model, i) : null);
  const notes = { ...GENERIC_NOTES, ...(renderer.resultNotes || {}) };
  if (!result) {
    box.append(el("p", {}, "The match is still being played."));
  } else {
    const turns = result.turns ?? replay.turns.length;
    const reason = result.reason ? ` \u00b7 ended: ${String(result.reason).replace(/_/g, " ")}` : "";
    const winners = players.filter((i) => seat(i)?.rank === 0);
    const verdict = winners.length === 1 ? `${names[winners[0]]} won` : winners.length > 1 ? "a draw" : "";
    box.append(el("p", { "data-result-summary": true }, `${verdict ? verdict + " \u00b7 " : ""}${turns} turns${reason}`));
  }
  const metricNames = new Set();
  for (const i of players) {
    for (const name of Object.keys(participants?.[i]?.metrics || seat(i)?.metrics || {})) metricNames.add(name);
  }
  const head = el("tr", {}, el("th", {}, ""), players.map((i) => el("th", { scope: "col", "data-player": i }, playerLabel(i, names, participants, colour(i)))));
  const rows = [];
  if (result) {
    rows.push(el("tr", {}, rowHead("rank", notes.rank), players.map((i) => el("td", {}, seat(i) ? `#${seat(i).rank + 1}` : "-"))));
    rows.push(el("tr", {}, rowHead("score", notes.score), players.map((i) => el("td", {}, num(seat(i)?.score, 2)))));
  }
  if (participants?.some((p) => p && typeof p.ordinalChange === "number")) {
    rows.push(
      el("tr", {}, rowHead("rating change", notes["rating change"]),
        players.map((i) => {
          const change = participants?.[i]?.ordinalChange;
          return el("td", {}, typeof change === "number" ? (change >= 0 ? "+" : "") + change.toFixed(2) : "-");
        })),
    );
  }
  for (const name of [...metricNames].sort()) {
    rows.push(
      el("tr", { "data-metric": name }, rowHead(metricLabel(name), notes[name]),
        players.map((i) => el("td", {}, num((participants?.[i]?.metrics || seat(i)?.metrics || {})[name], 2)))),
    );
  }
  box.append(el("div", { class: "viewer-table-wrap" }, el("table", { class: "viewer-result-table" }, el("thead", {}, head), el("tbody", {}, rows))));
  if (downloadUrl && result) box.append(el("p", {}, el("a", { href: downloadUrl, "data-download": true, download: "" }, "download the replay")));
  return box;
}

export class Player {
  /**
   * root: the `[data-viewer]` element holding the controls (see templates/macros.html).
   * options: {replay, renderer, participants?, downloadUrl?, live?, startTurn?, linkable?, loop?}
   * `startTurn` opens at that turn (`?t=`); `loop` starts a finished replay again after a pause.
   */
  constructor(root, { replay, renderer, participants = [], downloadUrl = null, live = false, startTurn = null, linkable = true, loop = false }) {
    this.root = root;
    this.renderer = renderer;
    this.replay = checkReplay(replay);
    this.participants = participants;
    this.names = playerNames(this.replay, participants);
    this.downloadUrl = downloadUrl;
    this.live = live;
    this.linkable = linkable;
    this.loop = loop;
    this._endedAt = null;
    this.model = renderer.prepare(this.replay, { names: this.names });
    this.t = 0;
    this.playing = false;
    this.speed = 1;
    this.following = live;
    this.overlays = new Set((renderer.overlays || []).filter((o) => o.on).map((o) => o.id));
    this.drawCount = 0;
    this.drawMs = 0;
    this.firstDrawAt = null;
    this._dirty = true;
    this._shownFrame = -1;
    this._panelAt = 0;
    this._lastTick = null;
    this._markerKeys = new Set();
    this._onReady = [];
    this._abort = new AbortController();
    this._stopped = false;

    this.canvas = root.querySelector("[data-viewer-canvas]");
    this.ctx = this.canvas.getContext("2d");
    this.timeline = root.querySelector("input[data-timeline]");
    this.counter = root.querySelector("[data-turn-counter]");
    this.clockBox = root.querySelector("[data-clock]");
    this.playersBox = root.querySelector("[data-players]");
    this.legendBox = root.querySelector("[data-marker-legend]");
    this.playButton = root.querySelector('[data-action="play"]');
    this.speedSelect = root.querySelector("select[data-speed]");
    this.markerStrip = root.querySelector("[data-markers]");
    this.panelBox = root.querySelector("[data-panel]");
    this.resultBox = root.querySelector("[data-result]");
    this.overlayBox = root.querySelector("[data-overlays]");
    this.frameLink = root.querySelector("[data-frame-link]");
    this.liveBadge = root.querySelector("[data-live]");

    this._buildControls();
    this._resize();
    this._resizeObserver = new ResizeObserver(() => this._resize());
    this._resizeObserver.observe(this.canvas);
    this.setFrame(startTurn !== null && startTurn !== undefined ? this.frameOfTurn(startTurn) : live ? this.lastFrame : 0);
    this._renderPlayers();
    this._renderResult();
    this._setLive(live);
    if (live) this.playing = true;
    this._updatePlayButton();
    requestAnimationFrame((now) => this._tick(now));
  }

  /** The current integer frame index. */
  get frame() {
    return Math.min(this.lastFrame, Math.max(0, Math.floor(this.t + 1e-6)));
  }

  get lastFrame() {
    return this.replay.frames.length - 1;
  }

  /** The turn frame `index` shows (the renderer knows; a frame per turn otherwise). */
  turnOf(index) {
    const turn = typeof this.renderer.turnOfFrame === "function" ? this.renderer.turnOfFrame(this.model, index) : index;
    return Number.isFinite(turn) ? turn : index;
  }

  /** The frame showing the state after `turn` turns (the last frame for a turn past the end). */
  frameOfTurn(turn) {
    const frame = typeof this.renderer.frameOfTurn === "function" ? this.renderer.frameOfTurn(this.model, turn) : turn;
    return Math.min(this.lastFrame, Math.max(0, Number.isFinite(frame) ? frame : 0));
  }

  get framesPerSecond() {
    // The model's figure first: it knows the match's own config (battle's frame_hz).
    return (this.model && this.model.framesPerSecond) || this.renderer.framesPerSecond || DEFAULT_FRAMES_PER_SECOND;
  }

  /** Stop drawing and listening (another replay is about to be shown in the same page). */
  destroy() {
    this._stopped = true;
    this._abort.abort();
    this._resizeObserver.disconnect();
    this.markerStrip?.replaceChildren();
    this.legendBox?.replaceChildren();
    this.playersBox?.replaceChildren();
    this.panelBox?.replaceChildren();
    this.resultBox?.replaceChildren();
  }

  /** Resolves once the first frame is on the canvas. */
  whenDrawn() {
    return this.firstDrawAt !== null ? Promise.resolve() : new Promise((resolve) => this._onReady.push(resolve));
  }

  play() {
    if (!this.live && this.t >= this.lastFrame) this.t = 0;
    this._endedAt = null;
    this.playing = true;
    this._updatePlayButton();
  }

  pause() {
    this.playing = false;
    this._updatePlayButton();
    this._markDirty(true);
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  setFrame(index) {
    const target = Math.min(this.lastFrame, Math.max(0, Math.round(Number(index) || 0)));
    this.t = target;
    this.following = this.live && target >= this.lastFrame;
    this._markDirty(true);
    // The counter, timeline and panel answer at once; the canvas follows on the next animation frame.
    this._updateUi(performance.now());
  }

  step(delta) {
    this.pause();
    const base = delta < 0 && this.t > this.frame + 1e-6 ? this.frame + 1 : this.frame;
    this.setFrame(base + delta);
  }

  setSpeed(value) {
    const speed = Number(value);
    if (!SPEEDS.includes(speed)) return;
    this.speed = speed;
    if (this.speedSelect) this.speedSelect.value = String(speed);
  }

  changeSpeed(direction) {
    const index = SPEEDS.indexOf(this.speed);
    this.setSpeed(SPEEDS[Math.min(SPEEDS.length - 1, Math.max(0, index + direction))]);
  }

  setOverlay(id, on) {
    if (on) this.overlays.add(id);
    else this.overlays.delete(id);
    const box = this.overlayBox?.querySelector(`input[data-overlay="${CSS.escape(id)}"]`);
    if (box) box.checked = on;
    this._markDirty(false);
  }

  /** Live: frames, events and turns played since the last call, added at the end. */
  append({ frames = [], events = [], turns = [] } = {}) {
    if (!frames.length && !events.length && !turns.length) return;
    const from = this.replay.frames.length;
    const atEnd = this.following || this.t >= this.lastFrame - 1e-6;
    this.replay.frames.push(...frames);
    this.replay.events.push(...events);
    this.replay.turns.push(...turns);
    if (typeof this.renderer.extend === "function") this.renderer.extend(this.model, this.replay, from);
    else this.model = this.renderer.prepare(this.replay);
    this.following = atEnd;
    const lagging = this.lastFrame - this.t > LIVE_MAX_LAG_S * this.framesPerSecond;
    if (atEnd && (!this.playing || lagging)) this.t = this.lastFrame;
    this.timeline.max = String(this.lastFrame);
    this._addMarkers(from);
    this._markDirty(true);
  }

  /** Live match ended: show the stored replay instead, at the same point of the match. */
  finish(replay) {
    const keep = this._sameFrameIn(checkReplay(replay).frames, this.frame);
    const wasAtEnd = this.following;
    this.replay = replay;
    this.names = playerNames(replay, this.participants);
    this.model = this.renderer.prepare(replay, { names: this.names });
    this._setLive(false);
    this.timeline.max = String(this.lastFrame);
    this._markerKeys.clear();
    this._markerKinds = [];
    this.markerStrip?.replaceChildren();
    this._addMarkers(0);
    this._renderPlayers();
    this.setFrame(wasAtEnd ? this.lastFrame : keep);
    this.playing = false;
    this._updatePlayButton();
    this._renderResult();
  }

  /** The index in `frames` of the frame showing the same moment as our `index` (by turn or tick). */
  _sameFrameIn(frames, index) {
    const mine = this.replay.frames[index] || {};
    const key = typeof mine.turn === "number" ? "turn" : typeof mine.tick === "number" ? "tick" : null;
    if (key === null) return Math.min(index, frames.length - 1);
    const found = frames.findIndex((f) => f && typeof f[key] === "number" && f[key] >= mine[key]);
    return found < 0 ? frames.length - 1 : found;
  }

  _setLive(live) {
    this.live = live;
    if (this.liveBadge) this.liveBadge.hidden = !live;
  }

  _markDirty(uiNow) {
    this._dirty = true;
    if (uiNow) this._panelAt = 0;
  }

  _tick(now) {
    if (this._stopped) return;
    const dt = this._lastTick === null ? 0 : Math.min(now - this._lastTick, 250) / 1000;
    this._lastTick = now;
    if (this.playing) {
      const before = this.t;
      this.t = Math.min(this.lastFrame, this.t + dt * this.framesPerSecond * this.speed);
      if (this.t >= this.lastFrame && !this.live) {
        this.playing = false;
        this._updatePlayButton();
        if (this.loop) this._endedAt = now;
      }
      if (this.t !== before) this._dirty = true;
      if (this.live) this.following = this.t >= this.lastFrame - 1e-6 || this.following;
    } else if (this._endedAt !== null && this.loop && now - this._endedAt >= LOOP_PAUSE_MS) {
      this._endedAt = null;
      if (this.t >= this.lastFrame) this.play();
    }
    if (this._dirty) {
      this._dirty = false;
      this._draw();
      this._updateUi(now);
    }
    requestAnimationFrame((next) => this._tick(next));
  }

  _draw() {
    const dpr = window.devicePixelRatio || 1;
    const width = this.canvas.width / dpr;
    const height = this.canvas.height / dpr;
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const started = performance.now();
    this.renderer.draw(this.ctx, this.model, this.t, { width, height, dpr, overlays: this.overlays });
    this.drawMs += performance.now() - started;
    this.drawCount += 1;
    if (this.firstDrawAt === null) {
      this.firstDrawAt = performance.now();
      for (const resolve of this._onReady.splice(0)) resolve();
    }
  }

  _updateUi(now) {
    const frame = this.frame;
    if (frame !== this._shownFrame) {
      this._shownFrame = frame;
      const turn = this.turnOf(frame);
      const lastTurn = this.turnOf(this.lastFrame);
      this.counter.textContent = `${turn} / ${lastTurn}`;
      this.counter.dataset.frame = String(frame);
      if (this.clockBox) {
        const clock = typeof this.renderer.clockNote === "function" ? this.renderer.clockNote(this.model, frame) : "";
        this.clockBox.textContent = clock ? ` \u00b7 ${clock}` : "";
      }
      this.timeline.value = String(frame);
      this.timeline.setAttribute("aria-valuetext", `turn ${turn} of ${lastTurn}`);
      if (this.frameLink) {
        const url = new URL(window.location.href);
        url.searchParams.set("t", String(turn));
        this.frameLink.href = url.pathname + url.search;
      }
    }
    const panelDue = !this.playing || now - this._panelAt >= PANEL_INTERVAL_MS;
    if (this.panelBox && panelDue && this._panelFrame !== frame) {
      this._panelAt = now;
      this._panelFrame = frame;
      this.panelBox.replaceChildren(this.renderer.panel(this.model, frame));
    }
  }

  _updatePlayButton() {
    if (!this.playButton) return;
    this.playButton.textContent = this.playing ? "\u275a\u275a pause" : "\u25b6 play";
    this.playButton.setAttribute("aria-pressed", String(this.playing));
  }

  _resize() {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const height = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
    }
    this._markDirty(false);
  }

  _renderResult() {
    if (!this.resultBox) return;
    this.resultBox.replaceChildren(resultPanel(this.replay, this.participants, this.downloadUrl, this.renderer, this.model));
  }

  /** The players' names in their colours, next to the board. */
  _renderPlayers() {
    if (!this.playersBox) return;
    const colour = (i) => (typeof this.renderer.playerColour === "function" ? this.renderer.playerColour(this.model, i) : null);
    const labels = this.names.map((_, i) => playerLabel(i, this.names, this.participants, colour(i)));
    const parts = [];
    labels.forEach((label, i) => {
      if (i) parts.push(el("span", { class: "viewer-versus", "aria-hidden": "true" }, "vs"));
      parts.push(label);
    });
    this.playersBox.replaceChildren(...parts);
  }

  _buildControls() {
    const root = this.root;
    const listen = { signal: this._abort.signal };
    if (typeof this.model?.aspect === "number" && this.model.aspect > 0) {
      this.canvas.style.aspectRatio = String(this.model.aspect);
    }
    this.timeline.min = "0";
    this.timeline.max = String(this.lastFrame);
    this.timeline.step = "1";
    this.timeline.addEventListener("input", () => this.setFrame(Number(this.timeline.value)), listen);
    root.querySelector('[data-action="play"]')?.addEventListener("click", () => this.toggle(), listen);
    root.querySelector('[data-action="back"]')?.addEventListener("click", () => this.step(-1), listen);
    root.querySelector('[data-action="forward"]')?.addEventListener("click", () => this.step(1), listen);
    if (this.speedSelect) {
      this.speedSelect.replaceChildren(...SPEEDS.map((s) => el("option", { value: String(s) }, `${s}x`)));
      this.speedSelect.value = String(this.speed);
      this.speedSelect.addEventListener("change", () => this.setSpeed(this.speedSelect.value), listen);
    }
    if (this.overlayBox) {
      this.overlayBox.replaceChildren(
        ...(this.renderer.overlays || []).map((overlay) => {
          const box = el("input", { type: "checkbox", "data-overlay": overlay.id, checked: this.overlays.has(overlay.id) });
          box.addEventListener("change", () => this.setOverlay(overlay.id, box.checked), listen);
          return el("label", { class: "viewer-overlay" }, box, ` ${overlay.label}`);
        }),
      );
    }
    if (this.frameLink) this.frameLink.hidden = !this.linkable;
    this.markerStrip?.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-marker]");
      if (!button) return;
      this.pause();
      this.setFrame(Number(button.dataset.frame));
    }, listen);
    this._addMarkers(0);
    document.addEventListener("keydown", (event) => this._onKey(event), listen);
    // A focused button would also "click" on the space bar's keyup; the keydown already acted.
    document.addEventListener("keyup", (event) => {
      const clickable = event.target instanceof HTMLButtonElement || (event.target instanceof HTMLInputElement && event.target.type === "checkbox");
      if (event.key === " " && clickable) event.preventDefault();
    }, listen);
  }

  _onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing = target instanceof HTMLElement && (target.matches("textarea, select, input:not([type=range]):not([type=checkbox])") || target.isContentEditable);
    if (typing) return;
    const onRange = target instanceof HTMLInputElement && target.type === "range";
    switch (event.key) {
      case " ":
        this.toggle();
        break;
      case "ArrowLeft":
        if (onRange) return; // the slider moves itself and reports it
        this.step(-1);
        break;
      case "ArrowRight":
        if (onRange) return;
        this.step(1);
        break;
      case "+":
      case "=":
        this.changeSpeed(1);
        break;
      case "-":
      case "_":
        this.changeSpeed(-1);
        break;
      default:
        return;
    }
    event.preventDefault();
  }

  /** The marker strip's legend: one entry per row, in the rows' order (`renderer.markerKinds`). */
  _renderLegend(kinds) {
    if (!this.legendBox) return;
    const words = this.renderer.markerKinds || {};
    this.legendBox.replaceChildren(
      ...kinds.map((kind) => el("li", { "data-kind": kind },
        el("span", { class: "viewer-marker-key", "data-kind": kind, "aria-hidden": "true" }),
        ` ${words[kind] || kind.replace(/_/g, " ")}`)),
    );
    this.legendBox.hidden = kinds.length === 0;
  }

  /** Markers at frames >= `from` (one button per frame and kind), laid out in one row per kind. */
  _addMarkers(from) {
    if (!this.markerStrip || typeof this.renderer.markers !== "function") return;
    const span = Math.max(1, this.lastFrame);
    const groups = new Map();
    for (const marker of this.renderer.markers(this.model)) {
      if (!marker || marker.frame < from || marker.frame > this.lastFrame) continue;
      const key = `${marker.frame}:${marker.kind}`;
      if (this._markerKeys.has(key)) continue;
      const group = groups.get(key);
      if (group) group.labels.push(marker.label);
      else groups.set(key, { ...marker, labels: [marker.label] });
    }
    const kinds = this._markerKinds || (this._markerKinds = []);
    const fragment = document.createDocumentFragment();
    for (const [key, marker] of groups) {
      this._markerKeys.add(key);
      if (!kinds.includes(marker.kind)) kinds.push(marker.kind);
      const extra = marker.labels.length > 1 ? ` (+${marker.labels.length - 1} more)` : "";
      const title = `turn ${this.turnOf(marker.frame)}: ${marker.labels[0]}${extra}`;
      const button = el("button", {
        type: "button",
        class: "viewer-marker",
        "data-marker": true,
        "data-frame": marker.frame,
        "data-kind": marker.kind,
        "data-player": marker.player ?? null,
        title,
        "aria-label": title,
      });
      button.style.left = `${(marker.frame / span) * 100}%`;
      button.style.setProperty("--row", String(kinds.indexOf(marker.kind)));
      fragment.append(button);
    }
    this.markerStrip.append(fragment);
    this.markerStrip.style.setProperty("--rows", String(Math.max(1, kinds.length)));
    this._renderLegend(kinds);
    // Positions depend on the last frame, which grows while live.
    if (from > 0) {
      for (const button of this.markerStrip.querySelectorAll("button[data-marker]")) {
        button.style.left = `${(Number(button.dataset.frame) / span) * 100}%`;
      }
    }
  }
}
