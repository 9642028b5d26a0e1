// Battle renderer for the replay viewer: walls, units (team colour, heading, hp bar), field-of-view
// cones, projectiles, shot/hit/kill/dodge flashes, signals, a kill feed and a side panel per unit.
// Units and text grow with the canvas and keep a legible minimum on a phone; labels beside units
// (numbers of small units, signal words) are placed where they overlap no other label or bar.
//
// Frames come at 10 Hz of game time (every `frame_every` physics ticks) plus a final frame; the
// viewer's float frame position is interpolated between two frames (heading by the shorter way).
// Everything a bot sent (actions, signals, memory) is untrusted: it is validated here, shown with
// textContent only, and odd shapes are shown as such instead of breaking the view.

// Defaults of shared/games/battle/config.py (BattleConfig) for the fields this file reads; a replay's
// config only lists what differs. A test checks these against the Python model.
export const CONFIG_DEFAULTS = Object.freeze({
  "map_width": 40.0,
  "map_height": 26.0,
  "units_per_player": 3,
  "time_limit_s": 60.0,
  "physics_hz": 120,
  "ticks_per_turn": 24,
  "frame_hz": 10,
  "unit_radius": 0.5,
  "unit_hp": 100.0,
  "fire_cooldown_s": 0.6,
  "dodge_cooldown_s": 2.0,
  "projectile_speed": 18.0,
  "projectile_radius": 0.1,
  "fov_deg": 120.0,
  "sensor_range": 18.0,
  "memory_limit_bytes": 2048
});

// shared/games/battle/config.py SIGNAL_WORDS: anything else is ignored by the game.
export const SIGNAL_WORDS = Object.freeze(["none", "enemy", "attack", "retreat", "help", "hold", "flank", "regroup"]);

// Team colours, bright enough on the dark arena; TEAM_EDGE outlines units and colours text.
export const TEAM_COLOURS = Object.freeze(["#4f8ff7", "#f2594b", "#37c978", "#c27ae6"]);
const TEAM_EDGE = ["#a9c8ff", "#ffb0a6", "#a6f0c6", "#e8c4f7"];
const THEME = {
  background: "#10141c", floor: "#1d2533", grid: "#252f40", solid: "#4a5568", wall: "#9aa7bb",
  text: "#e6e9ef", muted: "#9aa3b2", box: "rgba(16, 20, 28, 0.78)",
};

/** Replay frames per second of game time at 1x with the default config; `model.framesPerSecond` has
 * the match's own (its `frame_hz`). */
export const framesPerSecond = CONFIG_DEFAULTS.frame_hz;

export const overlays = [
  { id: "fov", label: "Field of view", on: true },
  { id: "signals", label: "Signals", on: true },
  { id: "feed", label: "Kill feed", on: true },
];

const MAX_MARKERS_PER_KIND = 48;
// How long effects stay on screen, in seconds of game time.
const EFFECT_S = { shot: 0.12, hit: 0.3, friendly_hit: 0.3, kill: 0.8, dodge: 0.45 };
const MAX_EFFECT_S = 0.8;
const FEED_S = 8;
const FEED_LINES = 5;
const PANEL_KILLS = 30;
const SIGNAL_FRESH_S = 2;
const TWO_PI = Math.PI * 2;
const HUD_HEIGHT = 22;
const MIN_UNIT_PX = 5;
/** A unit's number is written inside it from this radius (px) on, beside it below. */
const INSIDE_LABEL_PX = 8;

/** The timeline's legend: what each marker kind stands for. */
export const markerKinds = {
  shot: "shots",
  hit: "hits",
  kill: "kills",
  death: "deaths",
  forfeit: "forfeits",
};

/** One line per row of the result table: what the figure counts. */
export const resultNotes = {
  rank: "by units alive, then total hp, then damage dealt; #1 won, equal ranks are a draw",
  score: "100 per kill plus the damage dealt",
  kills: "enemy units destroyed",
  deaths: "own units lost",
  damage_dealt: "hp taken from enemy units",
  damage_taken: "hp its units lost",
  shots: "shots fired",
  hits: "shots that hit an enemy",
  accuracy: "hits per shot",
  friendly_hits: "shots that hit a teammate",
  units_alive: "units still standing at the end",
  total_hp: "hp of the units still standing",
  invalid_actions: "orders the game ignored or clamped",
  memory_dropped: "turns whose memory was over the limit and not kept",
};

// ------------------------------------------------------------------ small validators

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function num(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function point(value) {
  if (!Array.isArray(value) || value.length !== 2) return null;
  const x = num(value[0]);
  const y = num(value[1]);
  return x === null || y === null ? null : [x, y];
}

function short(text, limit) {
  const s = String(text);
  return s.length > limit ? s.slice(0, limit - 1) + "…" : s;
}

function fmt(value, digits = 1) {
  return Number(value).toFixed(digits);
}

/** Bytes of a value as the game counts a memory (compact JSON, non-ASCII escaped as \uXXXX). */
function jsonBytes(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    return null;
  }
  if (typeof text !== "string") return null;
  let size = 0;
  for (let i = 0; i < text.length; i++) size += text.charCodeAt(i) < 128 ? 1 : 6;
  return size;
}

function wrapAngle(a) {
  return ((((a + Math.PI) % TWO_PI) + TWO_PI) % TWO_PI) - Math.PI;
}

function lerpAngle(a, b, f) {
  return a + wrapAngle(b - a) * f;
}

/** Index of the last element of a sorted array `keys` that is <= value, or -1. */
function lastAtOrBefore(keys, value) {
  let lo = 0;
  let hi = keys.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid] <= value) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

// ------------------------------------------------------------------ preparation

function readConfig(replay) {
  const cfg = { ...CONFIG_DEFAULTS };
  const given = isObject(replay.config) ? replay.config : {};
  for (const key of Object.keys(CONFIG_DEFAULTS)) {
    const v = num(given[key]);
    if (v !== null && v > 0) cfg[key] = v;
  }
  if (num(given.memory_limit_bytes) === 0) cfg.memory_limit_bytes = 0;
  cfg.frameEvery = Math.max(1, Math.round(cfg.physics_hz / cfg.frame_hz));
  cfg.cooldownTicks = Math.max(1, Math.round(cfg.fire_cooldown_s * cfg.physics_hz));
  cfg.dodgeTicks = Math.round(cfg.dodge_cooldown_s * cfg.physics_hz);
  return cfg;
}

function readMap(frame0, cfg) {
  const raw = isObject(frame0) && isObject(frame0.map) ? frame0.map : {};
  const width = num(raw.width) > 0 ? raw.width : cfg.map_width;
  const height = num(raw.height) > 0 ? raw.height : cfg.map_height;
  const walls = [];
  if (Array.isArray(raw.walls)) {
    for (const w of raw.walls) {
      if (Array.isArray(w) && w.length === 4 && w.every((v) => num(v) !== null)) walls.push(w);
    }
  }
  const cell = num(raw.cell) > 0 ? raw.cell : null;
  return { name: typeof raw.name === "string" ? raw.name : "", width, height, walls, solid: solidCells(walls, width, height, cell) };
}

/** Solid grid cells [x, y, size] rebuilt from the boundary segments: a horizontal ray from a cell's
 * centre crosses an odd number of obstacle edges exactly when the cell is solid (edges on the arena
 * border are left out; the grid counts the outside as solid, so obstacles have no edge there). */
function solidCells(walls, width, height, cell) {
  if (!cell) return [];
  const cols = Math.round(width / cell);
  const rows = Math.round(height / cell);
  if (cols <= 0 || rows <= 0 || cols * rows > 40000) return [];
  const eps = 1e-6;
  const vertical = walls.filter(
    ([x1, y1, x2, y2]) => Math.abs(x1 - x2) < eps && Math.abs(y1 - y2) > eps && x1 > eps && x1 < width - eps,
  );
  const out = [];
  for (let r = 0; r < rows; r++) {
    const cy = (r + 0.5) * cell;
    for (let c = 0; c < cols; c++) {
      const cx = (c + 0.5) * cell;
      let crossings = 0;
      for (const [x1, y1, , y2] of vertical) {
        if (x1 > cx && cy > Math.min(y1, y2) && cy < Math.max(y1, y2)) crossings++;
      }
      if (crossings % 2 === 1) out.push([c * cell, r * cell, cell]);
    }
  }
  return out;
}

function readUnits(frame0, cfg, numPlayers) {
  const units = isObject(frame0) && Array.isArray(frame0.units) ? frame0.units : [];
  const ids = isObject(frame0) && Array.isArray(frame0.unit_ids) ? frame0.unit_ids : [];
  const teams = isObject(frame0) && Array.isArray(frame0.teams) ? frame0.teams : [];
  const per = Math.max(1, Math.round(units.length / Math.max(1, numPlayers)) || cfg.units_per_player);
  const out = [];
  for (let i = 0; i < units.length; i++) {
    const team = Number.isInteger(teams[i]) && teams[i] >= 0 ? teams[i] : Math.floor(i / per);
    const id = typeof ids[i] === "string" ? ids[i] : `p${team}u${i % per}`;
    out.push({ index: i, id, team });
  }
  return out;
}

function frameTick(frame, index, cfg) {
  const t = isObject(frame) ? num(frame.tick) : null;
  return t === null ? index * cfg.frameEvery : t;
}

/** The float frame position of a tick, and the first frame at or after it (where its result shows). */
function tickToFrame(ticks, tick) {
  const i = lastAtOrBefore(ticks, tick);
  if (i < 0) return { pos: 0, frame: 0 };
  if (i >= ticks.length - 1 || ticks[i] === tick) return { pos: i, frame: i };
  const span = ticks[i + 1] - ticks[i];
  return { pos: i + (span > 0 ? (tick - ticks[i]) / span : 0), frame: i + 1 };
}

function readEvents(replay, model) {
  const { cfg, unitIndex } = model;
  const events = [];
  const raw = Array.isArray(replay.events) ? replay.events : [];
  for (const e of raw) {
    if (!isObject(e) || typeof e.kind !== "string") continue;
    const data = isObject(e.data) ? e.data : {};
    let tick = num(data.tick);
    if (tick === null) {
      const turn = num(e.turn);
      if (turn === null) continue;
      tick = (turn + 1) * cfg.ticks_per_turn;
    }
    const unitOf = (key) => (typeof data[key] === "string" && unitIndex.has(data[key]) ? unitIndex.get(data[key]) : -1);
    const event = {
      kind: e.kind,
      tick,
      player: Number.isInteger(e.player) ? e.player : -1,
      unit: unitOf(e.kind === "hit" || e.kind === "friendly_hit" || e.kind === "kill" ? "shooter" : "unit"),
      target: unitOf(e.kind === "kill" ? "victim" : "target"),
      angle: num(data.angle),
      side: data.side === "left" || data.side === "right" ? data.side : null,
      friendly: e.kind === "friendly_hit" || data.friendly === true,
      damage: num(data.damage),
    };
    const where = tickToFrame(model.ticks, tick);
    event.pos = where.pos;
    event.frame = where.frame;
    events.push(event);
  }
  events.sort((a, b) => a.tick - b.tick);
  return events;
}

/** Per unit: the turns it got an order and its signals; per player: memory size after each turn. */
function readTurns(replay, model) {
  const { cfg, units, unitIndex, numPlayers } = model;
  const orderTurns = units.map(() => []);
  const signals = units.map(() => ({ ticks: [], list: [] }));
  const memory = Array.from({ length: numPlayers }, () => ({ turns: [], sizes: [] }));
  const forfeited = new Array(numPlayers).fill(false);
  const turns = Array.isArray(replay.turns) ? replay.turns : [];
  for (let t = 0; t < turns.length; t++) {
    const turn = turns[t];
    if (!isObject(turn)) continue;
    if (Array.isArray(turn.forfeits)) for (const p of turn.forfeits) if (Number.isInteger(p) && p < numPlayers) forfeited[p] = true;
    const actions = Array.isArray(turn.actions) ? turn.actions : [];
    for (let p = 0; p < Math.min(numPlayers, actions.length); p++) {
      const action = actions[p];
      if (forfeited[p] || !isObject(action)) continue;
      if (isObject(action.units)) {
        for (const uid of Object.keys(action.units)) {
          const u = unitIndex.get(uid);
          if (u === undefined || units[u].team !== p) continue;
          orderTurns[u].push(t);
          const order = action.units[uid];
          const sig = isObject(order) ? order.signal : null;
          if (isObject(sig) && SIGNAL_WORDS.includes(sig.word)) {
            const values = Array.isArray(sig.values) ? sig.values.slice(0, 2).map((v) => Math.max(-1, Math.min(1, num(v) ?? 0))) : [];
            signals[u].ticks.push(t * cfg.ticks_per_turn);
            signals[u].list.push({ word: sig.word, values });
          }
        }
      }
      if ("memory" in action && isObject(action.memory)) {
        const size = jsonBytes(action.memory);
        if (size !== null && size <= cfg.memory_limit_bytes) {
          memory[p].turns.push(t);
          memory[p].sizes.push(size);
        }
      }
    }
  }
  return { orderTurns, signals, memory };
}

function nameOf(model, player) {
  return model.names?.[player] ?? `player ${player}`;
}

function binned(model, events, kind, frameCount, label) {
  // One marker per bin of frames (a bin is one frame when there are few): a 10v10 battle fires
  // hundreds of shots, and a timeline of hundreds of buttons is unusable.
  const width = events.length <= MAX_MARKERS_PER_KIND ? 1 : Math.max(1, Math.ceil(frameCount / MAX_MARKERS_PER_KIND));
  const bins = new Map();
  for (const e of events) {
    const key = Math.floor(e.frame / width);
    let bin = bins.get(key);
    if (!bin) bins.set(key, (bin = { first: e, count: 0, byPlayer: new Map() }));
    bin.count++;
    bin.byPlayer.set(e.player, (bin.byPlayer.get(e.player) || 0) + 1);
  }
  const out = [];
  for (const bin of bins.values()) {
    if (bin.count === 1) {
      out.push({ frame: bin.first.frame, kind, label: label(bin.first), player: bin.first.player });
      continue;
    }
    let player = -1;
    let best = 0;
    const parts = [];
    for (const [p, n] of [...bin.byPlayer.entries()].sort((a, b) => a[0] - b[0])) {
      parts.push(`${nameOf(model, p)} ${n}`);
      if (n > best) [player, best] = [p, n];
    }
    out.push({ frame: bin.first.frame, kind, label: `${bin.count} ${kind}s (${parts.join(", ")})`, player });
  }
  return out;
}

function buildMarkers(model) {
  const { events, units } = model;
  const name = (i) => (i >= 0 ? units[i].id : "?");
  const frameCount = model.ticks.length;
  const ofKind = (...kinds) => events.filter((e) => kinds.includes(e.kind));
  const list = [
    ...binned(model, ofKind("shot"), "shot", frameCount, (e) => `${name(e.unit)} fires`),
    ...binned(model, ofKind("hit", "friendly_hit"), "hit", frameCount, (e) =>
      `${name(e.unit)} hits ${name(e.target)}${e.friendly ? " (friendly)" : ""}`),
    ...ofKind("kill").map((e) => ({
      frame: e.frame, kind: "kill", label: `${name(e.unit)} kills ${name(e.target)}${e.friendly ? " (friendly)" : ""}`, player: e.player,
    })),
    ...ofKind("death").map((e) => ({ frame: e.frame, kind: "death", label: `${name(e.unit)} dies`, player: e.player })),
    ...ofKind("forfeit").map((e) => ({ frame: e.frame, kind: "forfeit", label: `${nameOf(model, e.player)} forfeits`, player: e.player })),
  ];
  list.sort((a, b) => a.frame - b.frame);
  return list;
}

/** options: {names?}: the players' names by seat (the viewer's; "player N" when absent). */
export function prepare(replay, options = {}) {
  replay = isObject(replay) ? replay : {};
  const frames = Array.isArray(replay.frames) ? replay.frames : [];
  const cfg = readConfig(replay);
  const frame0 = frames.find((f) => isObject(f) && isObject(f.map)) || frames[0] || {};
  const declared = Number.isInteger(replay.num_players) ? replay.num_players : 0;
  let units = readUnits(frame0, cfg, declared || 2);
  const numPlayers = Math.max(declared, 1 + units.reduce((m, u) => Math.max(m, u.team), -1), 1);
  const unitIndex = new Map(units.map((u) => [u.id, u.index]));
  const ticks = frames.map((f, i) => frameTick(f, i, cfg));
  // Ticks must rise for the binary searches; a malformed replay gets its order forced.
  for (let i = 1; i < ticks.length; i++) if (!(ticks[i] > ticks[i - 1])) ticks[i] = ticks[i - 1] + 1e-6;
  const model = {
    replay, frames, cfg, map: readMap(frame0, cfg), units, unitIndex, numPlayers, ticks,
    truncated: isObject(replay.truncated), projectilePairs: new Map(),
    names: Array.isArray(options?.names) ? options.names : [],
  };
  model.events = readEvents(replay, model);
  model.eventTicks = model.events.map((e) => e.tick);
  model.kills = model.events.filter((e) => e.kind === "kill");
  model.killTicks = model.kills.map((e) => e.tick);
  const byUnit = (kind) => {
    const lists = units.map(() => []);
    for (const e of model.events) if (e.kind === kind && e.unit >= 0) lists[e.unit].push(e.tick);
    return lists;
  };
  model.shotTicks = byUnit("shot");
  model.dodgeTicks = byUnit("dodge");
  Object.assign(model, readTurns(replay, model));
  model.markerList = buildMarkers(model);
  // Canvas shape for the player: the arena plus the strip above it for the clock and the counts.
  model.aspect = model.map.width / (model.map.height * 1.08);
  // Replay frames per second of game time (10 by default): real-time playback at 1x.
  model.framesPerSecond = model.cfg.frame_hz;
  return model;
}

export function extend(model, replay, fromFrame) {
  // Preparing again is cheap (milliseconds for a long match); keep projectile matches of frames that
  // did not change.
  const cache = model.projectilePairs;
  const fresh = prepare(replay, { names: model.names });
  const keep = Math.max(0, (Number.isInteger(fromFrame) ? fromFrame : 0) - 1);
  for (const [i, pairs] of cache) if (i < keep) fresh.projectilePairs.set(i, pairs);
  Object.assign(model, fresh);
  return model;
}

export function markers(model) {
  return model.markerList;
}

/** The colour of player `player`'s team (its units and its name). */
export function playerColour(model, player) {
  return TEAM_COLOURS[player % TEAM_COLOURS.length];
}

/** The turn a frame shows: the one whose orders are being played (turn k runs from tick
 * (k - 1) * ticks_per_turn to k * ticks_per_turn; two frames a turn with the default config). */
export function turnOfFrame(model, index) {
  const tick = model.ticks[Math.max(0, Math.min(model.ticks.length - 1, index))] ?? 0;
  return Math.max(0, Math.ceil(tick / model.cfg.ticks_per_turn - 1e-6));
}

/** The first frame after `turn` turns were played (the last frame for a turn past the end). */
export function frameOfTurn(model, turn) {
  const target = turn * model.cfg.ticks_per_turn - 1e-6;
  const ticks = model.ticks;
  const before = lastAtOrBefore(ticks, target);
  return Math.min(ticks.length - 1, before + 1);
}

/** The secondary clock beside the turn counter: game time, physics tick and frame. */
export function clockNote(model, index) {
  const tick = model.ticks[Math.max(0, Math.min(model.ticks.length - 1, index))] ?? 0;
  return `${fmt(tick / model.cfg.physics_hz)} s \u00b7 tick ${Math.round(tick)} \u00b7 frame ${index}`;
}

// ------------------------------------------------------------------ state at a time

function frameUnits(frame) {
  return isObject(frame) && Array.isArray(frame.units) ? frame.units : [];
}

function frameProjectiles(frame) {
  return isObject(frame) && Array.isArray(frame.projectiles) ? frame.projectiles : [];
}

function unitState(raw) {
  if (!Array.isArray(raw) || raw.length < 4) return null;
  const [x, y, heading, hp] = raw;
  if (num(x) === null || num(y) === null) return null;
  return { x, y, heading: num(heading) ?? 0, hp: num(hp) ?? 0 };
}

/** Units at float frame t: positions and headings interpolated, hp from the earlier frame (a
 * dead unit stays where it fell). Frames further apart than a few frame steps (a truncated
 * replay, or a live viewer that joined late) are not interpolated. */
function stateAt(model, t) {
  const { frames, ticks, cfg } = model;
  const last = frames.length - 1;
  const clamped = Math.max(0, Math.min(last, Number.isFinite(t) ? t : 0));
  const i = Math.min(last, Math.floor(clamped));
  let f = clamped - i;
  const j = Math.min(last, i + 1);
  if (j === i || ticks[j] - ticks[i] > 3 * cfg.frameEvery) f = 0;
  const a = frameUnits(frames[i]);
  const b = frameUnits(frames[j]);
  const units = model.units.map((u) => {
    const s = unitState(a[u.index]);
    if (!s) return null;
    const n = f > 0 ? unitState(b[u.index]) : null;
    if (n && s.hp > 0) {
      s.x += (n.x - s.x) * f;
      s.y += (n.y - s.y) * f;
      s.heading = lerpAngle(s.heading, n.heading, f);
    }
    s.alive = s.hp > 0;
    return s;
  });
  return { i, j, f, tick: ticks[i] + (ticks[j] - ticks[i]) * f, units };
}

/** Projectiles of frame i matched to frame i + 1 (frames give no ids): each pairs with the nearest
 * unclaimed one within a frame's travel; the rest appear or vanish half-way. */
function projectilePairs(model, i) {
  const cached = model.projectilePairs.get(i);
  if (cached) return cached;
  const a = frameProjectiles(model.frames[i]).map(point).filter(Boolean);
  const b = frameProjectiles(model.frames[i + 1]).map(point).filter(Boolean);
  const span = (model.ticks[i + 1] - model.ticks[i]) / model.cfg.physics_hz;
  const reach = model.cfg.projectile_speed * span * 1.25 + 0.5;
  const claimed = new Array(b.length).fill(false);
  const pairs = [];
  for (const p of a) {
    let best = -1;
    let bestD = reach * reach;
    for (let k = 0; k < b.length; k++) {
      if (claimed[k]) continue;
      const d = (b[k][0] - p[0]) ** 2 + (b[k][1] - p[1]) ** 2;
      if (d < bestD) [best, bestD] = [k, d];
    }
    if (best >= 0) claimed[best] = true;
    pairs.push([p, best >= 0 ? b[best] : null]);
  }
  b.forEach((q, k) => { if (!claimed[k]) pairs.push([null, q]); });
  model.projectilePairs.set(i, pairs);
  return pairs;
}

function currentSignal(model, u, tick) {
  const s = model.signals[u];
  const k = lastAtOrBefore(s.ticks, tick);
  if (k < 0) return null;
  return { ...s.list[k], tick: s.ticks[k] };
}

function remaining(ticksList, tick, length) {
  const k = lastAtOrBefore(ticksList, tick);
  return k < 0 ? 0 : Math.max(0, ticksList[k] + length - tick);
}

// ------------------------------------------------------------------ drawing

function layout(model, view) {
  const pad = 8;
  const font = Math.round(Math.min(14, Math.max(11, view.width / 70)));
  const top = Math.max(HUD_HEIGHT, font + 10) + 4;
  const { width, height } = model.map;
  const scale = Math.max(0.01, Math.min((view.width - 2 * pad) / width, (view.height - top - pad) / height));
  const ox = (view.width - width * scale) / 2;
  const oy = top + (view.height - top - pad - height * scale) / 2;
  // A unit is drawn at its true size, but never smaller than MIN_UNIT_PX (a phone's canvas).
  const unitR = Math.max(MIN_UNIT_PX, model.cfg.unit_radius * scale);
  // Game y points up; the canvas's points down.
  return { scale, sx: (x) => ox + x * scale, sy: (y) => oy + (height - y) * scale, ox, oy, font, top, unitR };
}

/** Boxes already drawn ([x0, y0, x1, y1]); a label goes to the first candidate spot that meets none. */
class LabelSpace {
  constructor() {
    this.boxes = [];
  }

  take(box) {
    this.boxes.push(box);
  }

  free(box) {
    return !this.boxes.some((b) => box[0] < b[2] && box[2] > b[0] && box[1] < b[3] && box[3] > b[1]);
  }

  /** The first of `spots` ([x, y] top-left corners for a w x h box) that is free, taken; or null. */
  place(spots, w, h) {
    for (const [x, y] of spots) {
      const box = [x, y, x + w, y + h];
      if (this.free(box)) {
        this.take(box);
        return box;
      }
    }
    return null;
  }
}

/** Spots around a unit at (x, y) of drawn radius r for a w x h label: right, left, below, above
 * its hp bar. */
function spotsAround(x, y, r, w, h) {
  const gap = 3;
  return [
    [x + r + gap, y - h / 2],
    [x - r - gap - w, y - h / 2],
    [x - w / 2, y + r + gap],
    [x - w / 2, y - r - h - Math.max(2, r * 0.3) - 2 * gap],
    [x + r + gap, y + r * 0.6],
    [x - r - gap - w, y + r * 0.6],
  ];
}

function drawArena(ctx, model, L) {
  const { width, height, walls, solid } = model.map;
  ctx.fillStyle = THEME.floor;
  ctx.fillRect(L.ox, L.oy, width * L.scale, height * L.scale);
  ctx.fillStyle = THEME.solid;
  for (const [x, y, size] of solid) ctx.fillRect(L.sx(x), L.sy(y + size), size * L.scale + 0.5, size * L.scale + 0.5);
  ctx.strokeStyle = THEME.wall;
  ctx.lineWidth = 2;
  ctx.lineCap = "round";
  ctx.beginPath();
  for (const [x1, y1, x2, y2] of walls) {
    ctx.moveTo(L.sx(x1), L.sy(y1));
    ctx.lineTo(L.sx(x2), L.sy(y2));
  }
  ctx.stroke();
}

/** Where a ray from (ox, oy) along (dx, dy) first meets a wall, as a distance capped at `range`. */
function rayDistance(ox, oy, dx, dy, range, walls) {
  let best = range;
  for (const [x1, y1, x2, y2] of walls) {
    const sx = x2 - x1;
    const sy = y2 - y1;
    const denom = dx * sy - dy * sx;
    if (Math.abs(denom) < 1e-12) continue;
    const px = x1 - ox;
    const py = y1 - oy;
    const t = (px * sy - py * sx) / denom;
    const u = (px * dy - py * dx) / denom;
    if (t > 0 && t < best && u >= 0 && u <= 1) best = t;
  }
  return best;
}

/** Walls with a bounding box [minX, minY, maxX, maxY] each, for the range test of the cones. */
function wallBoxes(model) {
  if (!model.wallBoxes) {
    model.wallBoxes = model.map.walls.map(([x1, y1, x2, y2]) => [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)]);
  }
  return model.wallBoxes;
}

/** Field-of-view cones (angle and range from the match's config), cut where walls block sight:
 * rays every few degrees stop at the first wall, as the game's line-of-sight test does. */
function drawFov(ctx, model, state, L) {
  const range = model.cfg.sensor_range;
  const fov = Math.min(360, model.cfg.fov_deg);
  const half = (fov * Math.PI) / 360;
  const full = fov >= 360;
  const rays = Math.max(8, Math.ceil(fov / 3));
  const boxes = wallBoxes(model);
  const walls = model.map.walls;
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.ox, L.oy, model.map.width * L.scale, model.map.height * L.scale);
  ctx.clip();
  // One path per team, filled once: a team's overlapping cones show what the team sees together,
  // and a single fill per team is far cheaper than one per unit on a software-rendered canvas.
  for (let team = 0; team < model.numPlayers; team++) {
    ctx.beginPath();
    state.units.forEach((s, k) => {
      if (!s || !s.alive || model.units[k].team !== team) return;
      const near = [];
      for (let w = 0; w < walls.length; w++) {
        const b = boxes[w];
        if (b[0] <= s.x + range && b[2] >= s.x - range && b[1] <= s.y + range && b[3] >= s.y - range) near.push(walls[w]);
      }
      for (let r = 0; r <= rays; r++) {
        const a = full ? (r / rays) * TWO_PI : s.heading - half + (2 * half * r) / rays;
        const dx = Math.cos(a);
        const dy = Math.sin(a);
        const d = rayDistance(s.x, s.y, dx, dy, range, near);
        if (r === 0 && full) ctx.moveTo(L.sx(s.x + dx * d), L.sy(s.y + dy * d));
        else if (r === 0) {
          ctx.moveTo(L.sx(s.x), L.sy(s.y));
          ctx.lineTo(L.sx(s.x + dx * d), L.sy(s.y + dy * d));
        } else ctx.lineTo(L.sx(s.x + dx * d), L.sy(s.y + dy * d));
      }
      ctx.closePath();
    });
    // No outline: stroking these many-sided paths costs several times the fill.
    ctx.fillStyle = TEAM_COLOURS[team % 4] + "2a";
    ctx.fill("nonzero");
  }
  ctx.restore();
}

function drawProjectiles(ctx, model, state, L) {
  const { i, j, f } = state;
  const r = Math.max(2, model.cfg.projectile_radius * L.scale * 1.5);
  ctx.lineCap = "round";
  const draw = (x, y, tx, ty) => {
    if (tx !== null) {
      ctx.strokeStyle = "rgba(255, 200, 80, 0.5)";
      ctx.lineWidth = r;
      ctx.beginPath();
      ctx.moveTo(L.sx(tx), L.sy(ty));
      ctx.lineTo(L.sx(x), L.sy(y));
      ctx.stroke();
    }
    ctx.fillStyle = "#ffd24a";
    ctx.strokeStyle = "#fff3c4";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.arc(L.sx(x), L.sy(y), r, 0, TWO_PI);
    ctx.fill();
    ctx.stroke();
  };
  if (j === i || f === 0) {
    for (const p of frameProjectiles(model.frames[i]).map(point)) if (p) draw(p[0], p[1], null, null);
    return;
  }
  for (const [p, q] of projectilePairs(model, i)) {
    if (p && q) {
      const x = p[0] + (q[0] - p[0]) * f;
      const y = p[1] + (q[1] - p[1]) * f;
      const back = Math.min(f, 0.35);
      draw(x, y, x - (q[0] - p[0]) * back, y - (q[1] - p[1]) * back);
    } else if (p && f < 0.5) {
      draw(p[0], p[1], null, null);
    } else if (q && f >= 0.5) {
      draw(q[0], q[1], null, null);
    }
  }
}

function hpBarBox(x, y, r) {
  const w = Math.max(12, r * 2.2);
  const h = Math.max(3, r * 0.3);
  const by = y - r - h - 3;
  return [x - w / 2, by, x + w / 2, by + h];
}

/** Units with their heading and hp bar; each living unit's number inside it when it is big enough,
 * else beside it where no other label is. Fills `space` with what it drew. */
function drawUnits(ctx, model, state, L, space) {
  const r = L.unitR;
  const maxHp = model.cfg.unit_hp;
  const inside = r >= INSIDE_LABEL_PX;
  const living = [];
  state.units.forEach((s, k) => {
    if (!s) return;
    const team = model.units[k].team;
    const x = L.sx(s.x);
    const y = L.sy(s.y);
    if (!s.alive) {
      ctx.strokeStyle = TEAM_COLOURS[team % 4] + "90";
      ctx.lineWidth = 2;
      const d = r * 0.6;
      ctx.beginPath();
      ctx.moveTo(x - d, y - d);
      ctx.lineTo(x + d, y + d);
      ctx.moveTo(x + d, y - d);
      ctx.lineTo(x - d, y + d);
      ctx.stroke();
      return;
    }
    living.push([s, k, x, y]);
    ctx.fillStyle = TEAM_COLOURS[team % 4];
    ctx.strokeStyle = TEAM_EDGE[team % 4];
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.arc(x, y, r, 0, TWO_PI);
    ctx.fill();
    ctx.stroke();
    // Heading: a nose from the centre past the rim.
    const hx = Math.cos(s.heading);
    const hy = -Math.sin(s.heading);
    ctx.strokeStyle = "#f5f7fa";
    ctx.lineWidth = Math.max(1.5, r * 0.25);
    ctx.lineCap = "round";
    ctx.beginPath();
    ctx.moveTo(x + hx * r * 0.2, y + hy * r * 0.2);
    ctx.lineTo(x + hx * r * 1.6, y + hy * r * 1.6);
    ctx.stroke();
    // Hp bar above the unit.
    const bar = hpBarBox(x, y, r);
    const share = Math.max(0, Math.min(1, s.hp / maxHp));
    ctx.fillStyle = "rgba(0, 0, 0, 0.55)";
    ctx.fillRect(bar[0], bar[1], bar[2] - bar[0], bar[3] - bar[1]);
    ctx.fillStyle = share > 0.5 ? "#27b34a" : share > 0.25 ? "#e0a800" : "#d62f1f";
    ctx.fillRect(bar[0], bar[1], (bar[2] - bar[0]) * share, bar[3] - bar[1]);
    space.take([x - r, y - r, x + r, y + r]);
    space.take(bar);
  });
  const size = inside ? Math.max(9, Math.round(r * 0.95)) : Math.max(10, L.font - 1);
  ctx.font = `600 ${size}px system-ui, sans-serif`;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  for (const [, k, x, y] of living) {
    const text = model.units[k].id.replace(/^p\d+u/, "");
    const w = ctx.measureText(text).width;
    if (inside) {
      ctx.fillStyle = "#0c1018";
      ctx.fillText(text, x - w / 2, y + 0.5);
      continue;
    }
    const box = space.place(spotsAround(x, y, r, w + 4, size + 2), w + 4, size + 2);
    if (!box) continue;
    ctx.fillStyle = THEME.box;
    ctx.fillRect(box[0], box[1], box[2] - box[0], box[3] - box[1]);
    ctx.fillStyle = TEAM_EDGE[model.units[k].team % 4];
    ctx.fillText(text, box[0] + 2, (box[1] + box[3]) / 2 + 0.5);
  }
}

function drawEffects(ctx, model, state, L) {
  const hz = model.cfg.physics_hz;
  const now = state.tick;
  const r = L.unitR;
  const start = lastAtOrBefore(model.eventTicks, now - MAX_EFFECT_S * hz) + 1;
  for (let k = start; k < model.events.length && model.eventTicks[k] <= now; k++) {
    const e = model.events[k];
    const life = EFFECT_S[e.kind];
    if (!life) continue;
    const age = (now - e.tick) / (life * hz);
    if (age < 0 || age >= 1) continue;
    const fade = 1 - age;
    const who = e.kind === "kill" || e.kind === "hit" || e.kind === "friendly_hit" ? e.target : e.unit;
    const s = who >= 0 ? state.units[who] : null;
    if (!s) continue;
    const x = L.sx(s.x);
    const y = L.sy(s.y);
    if (e.kind === "shot") {
      const a = e.angle ?? s.heading;
      ctx.fillStyle = `rgba(255, 220, 80, ${fade})`;
      ctx.beginPath();
      ctx.arc(x + Math.cos(a) * r * 1.7, y - Math.sin(a) * r * 1.7, r * 0.6, 0, TWO_PI);
      ctx.fill();
    } else if (e.kind === "hit" || e.kind === "friendly_hit") {
      ctx.strokeStyle = e.friendly ? `rgba(200, 0, 200, ${fade})` : `rgba(255, 60, 20, ${fade})`;
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.arc(x, y, r * (1.2 + age), 0, TWO_PI);
      ctx.stroke();
    } else if (e.kind === "kill") {
      ctx.fillStyle = `rgba(255, 120, 0, ${0.5 * fade})`;
      ctx.beginPath();
      ctx.arc(x, y, r * (1.5 + 3 * age), 0, TWO_PI);
      ctx.fill();
      ctx.strokeStyle = `rgba(255, 235, 200, ${fade})`;
      ctx.lineWidth = 2;
      ctx.stroke();
    } else if (e.kind === "dodge") {
      const side = e.side === "right" ? -1 : 1;
      const a = s.heading + (side * Math.PI) / 2;
      const dx = Math.cos(a);
      const dy = -Math.sin(a);
      ctx.strokeStyle = `rgba(90, 220, 255, ${fade})`;
      ctx.lineWidth = 2;
      for (const off of [-0.5, 0, 0.5]) {
        ctx.beginPath();
        ctx.moveTo(x - dx * r * 1.2 + dy * r * off, y - dy * r * 1.2 - dx * r * off);
        ctx.lineTo(x - dx * r * 2.6 + dy * r * off, y - dy * r * 2.6 - dx * r * off);
        ctx.stroke();
      }
    }
  }
}

/** Each living unit's current signal word beside it, where it overlaps no other label: solid while
 * fresh, faint after; a word with no free spot near its unit is left out (the panel lists it). */
function drawSignals(ctx, model, state, L, space) {
  const hz = model.cfg.physics_hz;
  const r = L.unitR;
  const size = Math.max(10, L.font - 2);
  ctx.font = `${size}px system-ui, sans-serif`;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  state.units.forEach((s, k) => {
    if (!s || !s.alive) return;
    const sig = currentSignal(model, k, state.tick);
    if (!sig || sig.word === "none") return;
    const fresh = (state.tick - sig.tick) / hz < SIGNAL_FRESH_S;
    const x = L.sx(s.x);
    const y = L.sy(s.y);
    const w = ctx.measureText(sig.word).width + 6;
    const h = size + 4;
    const box = space.place(spotsAround(x, y, r, w, h), w, h);
    if (!box) return;
    ctx.globalAlpha = fresh ? 0.9 : 0.4;
    ctx.fillStyle = THEME.box;
    ctx.fillRect(box[0], box[1], w, h);
    ctx.fillStyle = TEAM_EDGE[model.units[k].team % 4];
    ctx.fillText(sig.word, box[0] + 3, box[1] + h / 2);
    ctx.globalAlpha = 1;
  });
}

/** The latest kills up to `tick`, newest first: at most `limit`, and none older than `seconds`. */
function recentKills(model, tick, seconds, limit) {
  const end = lastAtOrBefore(model.killTicks, tick);
  const out = [];
  for (let k = end; k >= 0 && out.length < limit; k--) {
    if (seconds !== null && tick - model.killTicks[k] > seconds * model.cfg.physics_hz) break;
    out.push(model.kills[k]);
  }
  return out;
}

/** `text` cut (with an ellipsis) to at most `width` pixels in the context's font. */
function fitText(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let cut = text;
  while (cut.length > 1 && ctx.measureText(`${cut}\u2026`).width > width) cut = cut.slice(0, -1);
  return `${cut}\u2026`;
}

/** The strip above the arena: the turn, then each player's name (in its colour) and units alive;
 * the kill feed in the arena's top right corner. */
function drawHud(ctx, model, state, view, L, feedOn) {
  const font = L.font;
  ctx.font = `${font}px system-ui, sans-serif`;
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  const alive = new Array(model.numPlayers).fill(0);
  state.units.forEach((s, k) => { if (s && s.alive) alive[model.units[k].team]++; });
  const mid = (L.top - 4) / 2 + 1;
  let x = L.ox;
  const right = L.ox + model.map.width * L.scale;
  ctx.fillStyle = THEME.text;
  const turn = `turn ${Math.max(0, Math.ceil(state.tick / model.cfg.ticks_per_turn - 1e-6))}`;
  ctx.fillText(turn, x, mid);
  x += ctx.measureText(turn).width + font;
  const square = Math.round(font * 0.8);
  const each = (right - x) / Math.max(1, model.numPlayers);
  alive.forEach((n, p) => {
    ctx.fillStyle = TEAM_COLOURS[p % 4];
    ctx.fillRect(x, mid - square / 2, square, square);
    const count = `: ${n} alive`;
    const room = each - square - 4 - ctx.measureText(count).width - font;
    ctx.fillStyle = TEAM_EDGE[p % 4];
    const name = fitText(ctx, nameOf(model, p), Math.max(font * 2, room));
    ctx.fillText(name, x + square + 4, mid);
    ctx.fillStyle = THEME.text;
    ctx.fillText(count, x + square + 4 + ctx.measureText(name).width, mid);
    x += each;
  });
  if (!feedOn) return;
  ctx.textAlign = "right";
  const feedRight = right - 4;
  const line = font + 5;
  recentKills(model, state.tick, FEED_S, FEED_LINES).forEach((e, n) => {
    const y = L.oy + line / 2 + 2 + n * (line + 1);
    const shooter = e.unit >= 0 ? model.units[e.unit] : null;
    const victim = e.target >= 0 ? model.units[e.target] : null;
    const parts = [
      [shooter ? shooter.id : "?", shooter ? TEAM_EDGE[shooter.team % 4] : THEME.text],
      [e.friendly ? " \u2715 (friendly) " : " \u2715 ", THEME.text],
      [victim ? victim.id : "?", victim ? TEAM_EDGE[victim.team % 4] : THEME.text],
    ];
    const total = parts.reduce((sum, [text]) => sum + ctx.measureText(text).width, 0);
    ctx.fillStyle = THEME.box;
    ctx.fillRect(feedRight - total - 4, y - line / 2, total + 8, line);
    let rx = feedRight;
    for (const [text, colour] of parts.reverse()) {
      ctx.fillStyle = colour;
      ctx.fillText(text, rx, y);
      rx -= ctx.measureText(text).width;
    }
  });
}

export function draw(ctx, model, t, view) {
  const width = view && view.width > 0 ? view.width : ctx.canvas.width;
  const height = view && view.height > 0 ? view.height : ctx.canvas.height;
  const on = view && view.overlays instanceof Set ? view.overlays : new Set(overlays.filter((o) => o.on).map((o) => o.id));
  ctx.save();
  // Draw in CSS pixels whatever transform the caller left: the backing store may be dpr times larger.
  ctx.setTransform(ctx.canvas.width / width, 0, 0, ctx.canvas.height / height, 0, 0);
  ctx.fillStyle = THEME.background;
  ctx.fillRect(0, 0, width, height);
  const L = layout(model, { width, height });
  drawArena(ctx, model, L);
  if (model.frames.length > 0) {
    const state = stateAt(model, t);
    if (on.has("fov")) drawFov(ctx, model, state, L);
    drawProjectiles(ctx, model, state, L);
    const space = new LabelSpace();
    drawUnits(ctx, model, state, L, space);
    drawEffects(ctx, model, state, L);
    if (on.has("signals")) drawSignals(ctx, model, state, L, space);
    drawHud(ctx, model, state, { width, height }, L, on.has("feed"));
  }
  ctx.restore();
}

// ------------------------------------------------------------------ side panel

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function describePoint(value) {
  const p = point(value);
  return p ? `(${fmt(p[0])}, ${fmt(p[1])})` : "?";
}

/** One line for a unit's raw order, whatever the bot sent. */
export function describeOrder(order) {
  if (order === undefined) return "—";
  if (!isObject(order)) return "invalid order";
  const parts = [];
  let unknown = 0;
  for (const [key, v] of Object.entries(order)) {
    if (key === "move") parts.push(v === "stop" ? "stop" : `move ${describePoint(v)}`);
    else if (key === "turn") parts.push(num(v) === null ? "turn ?" : `turn ${Math.round((v * 180) / Math.PI)}°`);
    else if (key === "fire") parts.push(`fire ${describePoint(v)}`);
    else if (key === "dodge") parts.push(v === "left" || v === "right" ? `dodge ${v}` : "dodge ?");
    else if (key === "signal") {
      const word = isObject(v) && typeof v.word === "string" ? v.word : "?";
      parts.push(`signal ${short(word, 12)}${SIGNAL_WORDS.includes(word) ? "" : " (invalid)"}`);
    } else unknown++;
  }
  if (unknown) parts.push(`+${unknown} unknown`);
  return short(parts.length ? parts.join(", ") : "no orders", 90);
}

function lastOrder(model, u, turn) {
  const list = model.orderTurns[u];
  const k = lastAtOrBefore(list, turn);
  if (k < 0) return { text: "—", age: null };
  const t = list[k];
  const action = model.replay.turns[t].actions[model.units[u].team];
  return { text: describeOrder(action.units[model.units[u].id]), age: turn - t };
}

function actionNote(model, player, turn) {
  const turns = Array.isArray(model.replay.turns) ? model.replay.turns : [];
  const entry = turn >= 0 && turn < turns.length ? turns[turn] : null;
  if (!isObject(entry)) return null;
  if (Array.isArray(entry.dropped) && entry.dropped.includes(player)) return "action too large to keep";
  const action = Array.isArray(entry.actions) ? entry.actions[player] : undefined;
  if (action === null || action === undefined) return "no action (units hold)";
  if (!isObject(action)) return "invalid action (units hold)";
  return null;
}

function swatch(team) {
  const mark = el("span", null, "viewer-swatch");
  mark.style.setProperty("background", TEAM_COLOURS[team % 4]);
  return mark;
}

/** The side panel at integer frame `frame`: per player its memory size and action state, per unit
 * hp, fire and dodge cooldowns (derived from the shot and dodge events and the config), its current
 * signal and the last order its bot gave it; then the kills so far. */
export function panel(model, frame) {
  const root = el("div", null, "battle-panel");
  const last = model.frames.length - 1;
  const index = Math.max(0, Math.min(last, Number.isFinite(frame) ? Math.floor(frame) : 0));
  const state = stateAt(model, index);
  const tick = state.tick;
  const hz = model.cfg.physics_hz;
  const tpt = model.cfg.ticks_per_turn;
  // The turn whose orders were in force when this frame was taken (none before the first).
  const turn = tick > 0 ? Math.ceil(tick / tpt) - 1 : -1;
  if (model.truncated) root.append(el("p", "This replay was truncated: some frames or actions are missing.", "battle-note"));

  for (let p = 0; p < model.numPlayers; p++) {
    const section = el("section", null, "battle-team");
    section.dataset.player = String(p);
    const title = el("h3");
    const name = el("span", nameOf(model, p), "viewer-name");
    name.title = nameOf(model, p);
    title.append(swatch(p), name);
    section.append(title);
    const mem = model.memory[p];
    const m = mem ? lastAtOrBefore(mem.turns, turn) : -1;
    const info = [`memory ${m >= 0 ? mem.sizes[m] : 0} / ${model.cfg.memory_limit_bytes} bytes`];
    const note = actionNote(model, p, turn);
    if (note) info.push(note);
    section.append(el("p", info.join(" · "), "battle-team-info"));

    const table = el("table", null, "battle-units");
    const headRow = el("tr");
    for (const h of ["unit", "hp", "fire", "dodge", "signal"]) headRow.append(el("th", h));
    table.append(el("thead"));
    table.firstChild.append(headRow);
    const body = el("tbody");
    model.units.forEach((u, k) => {
      if (u.team !== p) return;
      const s = state.units[k];
      const alive = s ? s.alive : false;
      const row = el("tr");
      row.dataset.unit = u.id;
      row.append(el("td", u.id));
      if (!alive) {
        row.classList.add("battle-dead");
        row.append(el("td", "dead"), el("td", "—"), el("td", "—"), el("td", "—"));
        body.append(row);
        return;
      }
      const fire = remaining(model.shotTicks[k], tick, model.cfg.cooldownTicks) / hz;
      const dodge = remaining(model.dodgeTicks[k], tick, model.cfg.dodgeTicks) / hz;
      const sig = currentSignal(model, k, tick);
      row.append(
        el("td", Math.round(s.hp)),
        el("td", fire > 0 ? `${fmt(fire, 2)} s` : "ready"),
        el("td", dodge > 0 ? `${fmt(dodge)} s` : "ready"),
        el("td", sig && sig.word !== "none" ? sig.word : "—"),
      );
      body.append(row);
      // The last order on a row of its own: it is the widest thing in the panel.
      const order = lastOrder(model, k, turn);
      const detail = el("tr", null, "battle-order");
      detail.dataset.orderOf = u.id;
      const cell = el("td", null, "viewer-action");
      cell.colSpan = 5;
      const parts = [order.age ? `${order.text} (${order.age} turns ago)` : order.text];
      if (sig && sig.word !== "none" && sig.values.length) {
        parts.push(`signal ${sig.word} [${sig.values.map((v) => fmt(v, 2)).join(", ")}], ${fmt((tick - sig.tick) / hz)} s ago`);
      }
      cell.textContent = parts.join("\n");
      detail.append(cell);
      body.append(detail);
    });
    table.append(body);
    section.append(table);
    root.append(section);
  }

  const feed = el("section", null, "battle-feed");
  feed.append(el("h3", "Kills"));
  const kills = recentKills(model, tick, null, PANEL_KILLS);
  if (kills.length === 0) feed.append(el("p", "none yet"));
  else {
    const list = el("ol");
    list.reversed = true;
    for (const e of kills) {
      const shooter = e.unit >= 0 ? model.units[e.unit].id : "?";
      const victim = e.target >= 0 ? model.units[e.target].id : "?";
      list.append(el("li", `${fmt(e.tick / hz)} s: ${shooter} killed ${victim}${e.friendly ? " (friendly)" : ""}`));
    }
    feed.append(list);
  }
  root.append(feed);
  return root;
}
