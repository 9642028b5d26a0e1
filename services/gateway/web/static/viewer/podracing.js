// Podracing renderer for the replay viewer (interface: docs/viewer.md). One frame per turn:
// frames[0] is the start (with the track), frame i the state after turn i. Pods 2p and 2p+1 belong
// to player p. An event of turn k happens between frame k and frame k+1 (data.time: when in it).
// Checkpoints are numbered rings; pods are arrow-shaped ships in their player's colours (a darker
// and a lighter shade for a player's first and second pod), never numbered, so the two read apart.

import { el, num, shortJson } from "./dom.js";

export const framesPerSecond = 8;

export const overlays = [
  { id: "vectors", label: "velocity and thrust", on: true },
  { id: "trails", label: "trails", on: true },
  { id: "targets", label: "targets", on: false },
];

const WIDTH = 16000;
const HEIGHT = 9000;
const CHECKPOINT_RADIUS = 600;
const POD_RADIUS = 400;
const TRAIL_FRAMES = 24;
const FLASH_FRAMES = 2.5;
const BOOST_FRAMES = 2;
const VELOCITY_SCALE = 3;
const THRUST_LENGTH = 1500;
const MESSAGE_CHARS = 40;
const PLAYER_COLOURS = [
  ["#ff7043", "#ffb74d"],
  ["#42a5f5", "#80deea"],
  ["#66bb6a", "#c5e1a5"],
  ["#ab47bc", "#e1bee7"],
];
const MARKED = new Set(["checkpoint", "collision", "boost", "shield", "win", "timeout"]);
const FIELD = "#131a26";
const OUTSIDE = "#0b0e14";
/** A band outside the field narrower than this (CSS pixels) is covered by the field instead. */
const SEAM_PX = 3;

/** The timeline's legend: what each marker kind stands for. */
export const markerKinds = {
  checkpoint: "checkpoint passed",
  collision: "collision",
  boost: "boost",
  shield: "shield raised",
  win: "win",
  timeout: "ran out of turns to reach a checkpoint",
};

/** One line per row of the result table: what the figure counts. */
export const resultNotes = {
  rank: "#1 won the race; equal ranks are a draw",
  score: "checkpoints passed by the player's best pod (a finisher: laps \u00d7 checkpoints + 1)",
  checkpoints: "passes by both pods together: one pod finishing first wins, so the winner can show fewer",
  boosts_used: "BOOSTs used (one per pod a race)",
  shields_used: "SHIELDs raised",
  collisions: "collisions its pods were in",
  invalid_actions: "pod orders the game could not use (replaced by the default order)",
  timed_out_turns: "turns with no answer in time (both pods got the default order)",
  finished_turn: "the turn its pod crossed the finish; -1: it did not finish",
};

export function podColour(pod, podsPerPlayer = 2) {
  const player = Math.floor(pod / podsPerPlayer);
  const shades = PLAYER_COLOURS[player % PLAYER_COLOURS.length];
  return shades[(pod % podsPerPlayer) % shades.length];
}

/** The colour of player `player`'s name (its first pod's). */
export function playerColour(model, player) {
  return PLAYER_COLOURS[player % PLAYER_COLOURS.length][0];
}

function nameOf(model, player) {
  return model.names?.[player] ?? `player ${player}`;
}

/** "name pod 2": pods are numbered 1.. within their player. */
function podName(model, pod) {
  const player = Math.floor(pod / model.podsPerPlayer);
  return `${nameOf(model, player)} pod ${(pod % model.podsPerPlayer) + 1}`;
}

function firstWith(frames, key) {
  for (const frame of frames) if (frame && frame[key] !== undefined) return frame[key];
  return undefined;
}

/** options: {names?}: the players' names by seat (the viewer's; "player N" when absent). */
export function prepare(replay, options = {}) {
  const frames = replay.frames;
  const first = frames[0] || {};
  const width = Number(firstWith(frames, "width")) || WIDTH;
  const height = Number(firstWith(frames, "height")) || HEIGHT;
  const pods = Array.isArray(first.pods) ? first.pods.length : 4;
  const players = replay.num_players || 2;
  const model = {
    replay,
    width,
    height,
    bounds: null,
    checkpoints: firstWith(frames, "checkpoints") || [],
    laps: Number(firstWith(frames, "laps")) || Number(replay.config?.laps) || 3,
    players,
    podsPerPlayer: Math.max(1, Math.round(pods / players)),
    frameOfTurn: new Map(),
    collisions: [],
    boosts: [],
    markerList: [],
    names: Array.isArray(options.names) ? options.names : [],
  };
  index(model, 0);
  return model;
}

/**
 * The part of the field worth showing (model.view): the checkpoints and wherever a pod went, plus a
 * margin, cut to the field, so that nothing outside it is shown unless a pod went there
 * (model.limit: the field, grown to hold every position a pod reached).
 */
function growBounds(model, from) {
  const margin = CHECKPOINT_RADIUS + 400;
  let b = model.bounds;
  let pods = model.podBounds;
  const take = (box, x, y) => {
    if (!Number.isFinite(x) || !Number.isFinite(y)) return box;
    if (!box) return { x0: x, y0: y, x1: x, y1: y };
    return { x0: Math.min(box.x0, x), y0: Math.min(box.y0, y), x1: Math.max(box.x1, x), y1: Math.max(box.y1, y) };
  };
  if (from === 0) for (const [x, y] of model.checkpoints) b = take(b, x, y);
  const frames = model.replay.frames;
  for (let i = from; i < frames.length; i += 1) {
    for (const pod of frames[i]?.pods || []) {
      b = take(b, pod.x, pod.y);
      pods = take(pods, pod.x, pod.y);
    }
  }
  model.bounds = b;
  model.podBounds = pods;
  const field = { x0: 0, y0: 0, x1: model.width, y1: model.height };
  // A pod that went outside the field is shown there, with the same margin.
  model.limit = pods
    ? {
        x0: pods.x0 < field.x0 ? pods.x0 - margin : field.x0,
        y0: pods.y0 < field.y0 ? pods.y0 - margin : field.y0,
        x1: pods.x1 > field.x1 ? pods.x1 + margin : field.x1,
        y1: pods.y1 > field.y1 ? pods.y1 + margin : field.y1,
      }
    : field;
  const limit = model.limit;
  model.view = b
    ? {
        x0: Math.max(limit.x0, b.x0 - margin),
        y0: Math.max(limit.y0, b.y0 - margin),
        x1: Math.min(limit.x1, b.x1 + margin),
        y1: Math.min(limit.y1, b.y1 + margin),
      }
    : field;
}

/** Live: new frames and events were appended from frame `fromFrame` on. */
export function extend(model, replay, fromFrame) {
  model.replay = replay;
  if (!model.checkpoints.length) Object.assign(model, prepare(replay, { names: model.names }));
  else index(model, fromFrame);
}

/** Turn numbers to frame indexes, and the events placed on frames, for frames >= `from`. */
function index(model, from) {
  const { frames, events } = model.replay;
  for (let i = from; i < frames.length; i += 1) {
    const turn = typeof frames[i]?.turn === "number" ? frames[i].turn : i;
    model.frameOfTurn.set(turn, i);
  }
  if (from === 0) {
    model.bounds = null;
    model.podBounds = null;
  }
  growBounds(model, from);
  if (from === 0) {
    model.collisions = [];
    model.boosts = [];
    model.markerList = [];
    model.eventsSeen = 0;
  }
  for (let k = model.eventsSeen || 0; k < events.length; k += 1) {
    const event = events[k];
    const data = event?.data || {};
    const after = model.frameOfTurn.get(Number(event?.turn) + 1);
    if (after === undefined) continue; // its frame was left out (truncated replay)
    const start = after - 1;
    const time = Math.min(1, Math.max(0, Number(data.time) || 0));
    const pod = Number.isInteger(data.pod) ? data.pod : null;
    const player = event.player ?? (pod === null ? null : Math.floor(pod / model.podsPerPlayer));
    if (event.kind === "collision" && pod !== null) {
      model.collisions.push({ at: start + time, frame: start, a: pod, b: data.other });
    }
    if (event.kind === "boost" && pod !== null) model.boosts.push({ at: start, pod });
    if (MARKED.has(event.kind)) {
      model.markerList.push({ frame: after, kind: event.kind, label: eventLabel(model, event, pod, player), player });
    }
  }
  model.eventsSeen = events.length;
}

function eventLabel(model, event, pod, player) {
  const data = event.data || {};
  const who = pod === null ? nameOf(model, player) : podName(model, pod);
  switch (event.kind) {
    case "checkpoint":
      return `${who} passed checkpoint ${data.checkpoint}`;
    case "collision":
      return Number.isInteger(data.other) ? `${who} and ${podName(model, data.other)} collided` : `${who} collided`;
    case "boost":
      return `${who} boosted`;
    case "shield":
      return `${who} raised its shield`;
    case "win":
      return `${nameOf(model, player)} won`;
    case "timeout":
      return `${nameOf(model, player)} ran out of turns to reach a checkpoint`;
    default:
      return `${event.kind} ${who}`;
  }
}

export function markers(model) {
  return model.markerList;
}

/** The turn frame `index` shows (frames carry it; frame i is turn i in a whole replay). */
export function turnOfFrame(model, index) {
  const frame = model.replay.frames[index];
  return typeof frame?.turn === "number" ? frame.turn : index;
}

/** The frame after `turn` turns: that turn's frame, or the first later one a truncated replay kept. */
export function frameOfTurn(model, turn) {
  const exact = model.frameOfTurn.get(turn);
  if (exact !== undefined) return exact;
  const frames = model.replay.frames;
  for (let i = 0; i < frames.length; i += 1) if (turnOfFrame(model, i) >= turn) return i;
  return frames.length - 1;
}

/** The action (per player) that answered frame `index`; undefined while live and not yet sent. */
export function actionsAt(model, index) {
  const frame = model.replay.frames[index];
  const turn = typeof frame?.turn === "number" ? frame.turn : index;
  return model.replay.turns[turn]?.actions;
}

function lerp(a, b, u) {
  return a + (b - a) * u;
}

function lerpAngle(a, b, u) {
  let diff = (((b - a) % 360) + 540) % 360 - 180;
  return a + diff * u;
}

/** Pod `j` at float frame `t`: position, angle and velocity interpolated between frames. */
function podAt(model, t, j) {
  const frames = model.replay.frames;
  const i = Math.min(frames.length - 1, Math.max(0, Math.floor(t)));
  const a = frames[i]?.pods?.[j];
  const next = frames[i + 1];
  const b = next?.pods?.[j];
  const u = t - i;
  const adjacent = b && (typeof next.turn !== "number" || next.turn - (frames[i].turn ?? i) === 1);
  if (!a) return null;
  if (!adjacent || u <= 0) return { ...a, u: 0 };
  return {
    ...(u < 0.5 ? a : b),
    x: lerp(a.x, b.x, u),
    y: lerp(a.y, b.y, u),
    vx: lerp(a.vx || 0, b.vx || 0, u),
    vy: lerp(a.vy || 0, b.vy || 0, u),
    angle: lerpAngle(a.angle || 0, b.angle || 0, u),
    u,
  };
}

/**
 * Where a window `length` long lies on one axis, as its centre: centred on the part worth showing
 * [a0, a1], moved to stay within [l0, l1] where it fits there, else centred on that (an even
 * letterbox on both sides).
 */
function place(a0, a1, length, l0, l1) {
  if (length >= l1 - l0) return (l0 + l1) / 2;
  const start = Math.min(Math.max((a0 + a1 - length) / 2, l0), l1 - length);
  return start + length / 2;
}

/**
 * World to canvas: model.view widened to the canvas's shape and scaled to fill it, centred. A
 * band of what lies outside the field narrower than SEAM_PX would read as a stray line along its
 * edge: the field is scaled to cover it instead (cutting as little off the other sides).
 */
function layout(model, view) {
  const area = model.view;
  const limit = model.limit || { x0: 0, y0: 0, x1: model.width, y1: model.height };
  const aspect = view.width / view.height;
  let w = Math.max(1, area.x1 - area.x0);
  let h = Math.max(1, area.y1 - area.y0);
  if (w / h < aspect) w = h * aspect;
  else h = w / aspect;
  const seam = (SEAM_PX * w) / view.width;
  if (w > limit.x1 - limit.x0 && w - (limit.x1 - limit.x0) < seam) w = limit.x1 - limit.x0;
  if (h > limit.y1 - limit.y0 && h - (limit.y1 - limit.y0) < seam) h = limit.y1 - limit.y0;
  const cx = place(area.x0, area.x1, w, limit.x0, limit.x1);
  const cy = place(area.y0, area.y1, h, limit.y0, limit.y1);
  const scale = Math.max(view.width / w, view.height / h);
  return {
    scale,
    x: (wx) => view.width / 2 + (wx - cx) * scale,
    y: (wy) => view.height / 2 + (wy - cy) * scale,
  };
}

/** What lies outside the field (where the view goes beyond it), a shade darker, on whole pixels. */
function drawOutside(ctx, model, map, view) {
  const left = Math.round(map.x(0));
  const top = Math.round(map.y(0));
  const right = Math.round(map.x(model.width));
  const bottom = Math.round(map.y(model.height));
  ctx.fillStyle = OUTSIDE;
  if (left > 0) ctx.fillRect(0, 0, left, view.height);
  if (right < view.width) ctx.fillRect(right, 0, view.width - right, view.height);
  if (top > 0) ctx.fillRect(0, 0, view.width, top);
  if (bottom < view.height) ctx.fillRect(0, bottom, view.width, view.height - bottom);
}

export function draw(ctx, model, t, view) {
  const frames = model.replay.frames;
  const frameIndex = Math.min(frames.length - 1, Math.max(0, Math.floor(t)));
  const frame = frames[frameIndex] || {};
  const map = layout(model, view);

  // The field fills the canvas; what lies outside it (where a pod went, or an even letterbox) is a
  // shade darker, never a line.
  ctx.fillStyle = FIELD;
  ctx.fillRect(0, 0, view.width, view.height);
  drawOutside(ctx, model, map, view);

  drawTrack(ctx, model, map);

  const podCount = frame.pods?.length || 0;
  const pods = [];
  for (let j = 0; j < podCount; j += 1) pods.push(podAt(model, t, j));

  if (view.overlays.has("trails")) drawTrails(ctx, model, map, frameIndex, pods);
  const actions = actionsAt(model, frameIndex);
  pods.forEach((pod, j) => {
    if (!pod) return;
    const colour = podColour(j, model.podsPerPlayer);
    const command = podCommand(actions, j, model.podsPerPlayer);
    if (view.overlays.has("targets") && command) drawTarget(ctx, map, pod, command, colour);
    drawPod(ctx, model, map, pod, j, colour, t, view.overlays.has("vectors") ? command : undefined);
    if (view.overlays.has("vectors")) drawVelocity(ctx, map, pod);
  });
  drawCollisions(ctx, model, map, t);

  ctx.fillStyle = "#cfd8dc";
  ctx.font = `${hudFontSize(view)}px system-ui, sans-serif`;
  ctx.textAlign = "left";
  ctx.textBaseline = "top";
  const turn = typeof frame.turn === "number" ? frame.turn : frameIndex;
  ctx.fillText(`turn ${turn}${frame.finished ? " \u00b7 finished" : ""}`, 8, 8);
}

/** Text on the canvas grows with it: 11 px on a phone, 14 px on a wide screen. */
function hudFontSize(view) {
  return Math.round(Math.min(14, Math.max(11, view.width / 70)));
}

function drawTrack(ctx, model, map) {
  const s = map.scale;
  const cps = model.checkpoints;
  if (cps.length > 1) {
    ctx.save();
    ctx.setLineDash([6, 6]);
    ctx.strokeStyle = "#33415c";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    cps.forEach(([x, y], k) => (k === 0 ? ctx.moveTo(map.x(x), map.y(y)) : ctx.lineTo(map.x(x), map.y(y))));
    ctx.closePath();
    ctx.stroke();
    ctx.restore();
  }
  // A checkpoint: a hollow ring (dashed, so that it never reads as a pod) with its number; 0, in
  // gold, is the start and the finish.
  const radius = Math.max(6, CHECKPOINT_RADIUS * s);
  ctx.font = `600 ${Math.max(11, Math.round(radius * 0.75))}px system-ui, sans-serif`;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  cps.forEach(([x, y], k) => {
    ctx.save();
    ctx.beginPath();
    ctx.arc(map.x(x), map.y(y), radius, 0, Math.PI * 2);
    ctx.fillStyle = k === 0 ? "rgba(249,168,37,0.14)" : "rgba(144,164,174,0.10)";
    ctx.fill();
    ctx.lineWidth = 2;
    ctx.setLineDash([Math.max(3, radius / 4), Math.max(2, radius / 8)]);
    ctx.strokeStyle = k === 0 ? "#f9a825" : "#90a4ae";
    ctx.stroke();
    ctx.restore();
    ctx.fillStyle = k === 0 ? "#ffe082" : "#cfd8dc";
    ctx.fillText(String(k), map.x(x), map.y(y));
  });
}

function drawTrails(ctx, model, map, frameIndex, pods) {
  const frames = model.replay.frames;
  const start = Math.max(0, frameIndex - TRAIL_FRAMES);
  pods.forEach((pod, j) => {
    if (!pod) return;
    ctx.save();
    ctx.strokeStyle = podColour(j, model.podsPerPlayer);
    ctx.lineWidth = 2;
    let previous = null;
    for (let i = start; i <= frameIndex + 1; i += 1) {
      const point = i <= frameIndex ? frames[i]?.pods?.[j] : pod;
      if (!point) continue;
      if (previous) {
        ctx.globalAlpha = 0.6 * ((i - start) / (frameIndex + 1 - start + 1));
        ctx.beginPath();
        ctx.moveTo(map.x(previous.x), map.y(previous.y));
        ctx.lineTo(map.x(point.x), map.y(point.y));
        ctx.stroke();
      }
      previous = point;
    }
    ctx.restore();
  });
}

/** The command pod `j` was given in `actions` ({x, y, thrust}), or null. */
function podCommand(actions, j, podsPerPlayer) {
  const action = actions?.[Math.floor(j / podsPerPlayer)];
  const entry = action && Array.isArray(action.pods) ? action.pods[j % podsPerPlayer] : null;
  if (!entry || typeof entry !== "object" || !Number.isFinite(entry.x) || !Number.isFinite(entry.y)) return null;
  return entry;
}

function arrow(ctx, x0, y0, x1, y1, head) {
  const angle = Math.atan2(y1 - y0, x1 - x0);
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1, y1);
  ctx.lineTo(x1 - head * Math.cos(angle - 0.5), y1 - head * Math.sin(angle - 0.5));
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - head * Math.cos(angle + 0.5), y1 - head * Math.sin(angle + 0.5));
  ctx.stroke();
}

function drawPod(ctx, model, map, pod, j, colour, t, command) {
  const s = map.scale;
  const x = map.x(pod.x);
  const y = map.y(pod.y);
  const r = Math.max(5, POD_RADIUS * s);
  const heading = ((pod.angle || 0) * Math.PI) / 180;

  const boosting = model.boosts.some((b) => b.pod === j && t >= b.at && t < b.at + BOOST_FRAMES);
  if (boosting) {
    ctx.save();
    ctx.fillStyle = "rgba(255,152,0,0.85)";
    ctx.beginPath();
    const back = heading + Math.PI;
    ctx.moveTo(x + Math.cos(back + 0.5) * r, y + Math.sin(back + 0.5) * r);
    ctx.lineTo(x + Math.cos(back) * r * 2.6, y + Math.sin(back) * r * 2.6);
    ctx.lineTo(x + Math.cos(back - 0.5) * r, y + Math.sin(back - 0.5) * r);
    ctx.fill();
    ctx.restore();
  }

  if (command) {
    const thrust = typeof command.thrust === "string" ? command.thrust.toUpperCase() : Number(command.thrust);
    const strength = thrust === "BOOST" ? 1 : typeof thrust === "number" && Number.isFinite(thrust) ? Math.max(0, Math.min(1, thrust / 100)) : 0;
    if (strength > 0) {
      const angle = Math.atan2(command.y - pod.y, command.x - pod.x);
      const length = THRUST_LENGTH * s * strength;
      ctx.save();
      ctx.strokeStyle = colour;
      ctx.lineWidth = thrust === "BOOST" ? 4 : 2;
      ctx.globalAlpha = 0.9;
      arrow(ctx, x, y, x + Math.cos(angle) * (r + length), y + Math.sin(angle) * (r + length), 6);
      ctx.restore();
    }
  }

  // The pod: a solid arrow pointing where it heads, in its player's colour.
  const point = (along, across) => [
    x + Math.cos(heading) * along - Math.sin(heading) * across,
    y + Math.sin(heading) * along + Math.cos(heading) * across,
  ];
  ctx.beginPath();
  [point(r * 1.6, 0), point(-r, r * 0.95), point(-r * 0.45, 0), point(-r, -r * 0.95)].forEach(([px, py], k) =>
    k === 0 ? ctx.moveTo(px, py) : ctx.lineTo(px, py));
  ctx.closePath();
  ctx.fillStyle = colour;
  ctx.fill();
  ctx.lineWidth = 1.5;
  ctx.lineJoin = "round";
  ctx.strokeStyle = OUTSIDE;
  ctx.stroke();

  if (pod.shield) {
    ctx.beginPath();
    ctx.arc(x, y, r * 1.45, 0, Math.PI * 2);
    ctx.strokeStyle = "#4dd0e1";
    ctx.lineWidth = 3;
    ctx.stroke();
  }

  if (typeof pod.message === "string" && pod.message) {
    ctx.textAlign = "center";
    ctx.fillStyle = "#eceff1";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "bottom";
    ctx.fillText(pod.message.slice(0, MESSAGE_CHARS), x, y - r * 1.6);
  }
}

function drawVelocity(ctx, map, pod) {
  const vx = pod.vx || 0;
  const vy = pod.vy || 0;
  if (Math.hypot(vx, vy) < 1) return;
  const x = map.x(pod.x);
  const y = map.y(pod.y);
  ctx.save();
  ctx.strokeStyle = "rgba(255,255,255,0.75)";
  ctx.lineWidth = 1.5;
  ctx.setLineDash([4, 3]);
  arrow(ctx, x, y, x + vx * VELOCITY_SCALE * map.scale, y + vy * VELOCITY_SCALE * map.scale, 5);
  ctx.restore();
}

function drawTarget(ctx, map, pod, command, colour) {
  const tx = map.x(command.x);
  const ty = map.y(command.y);
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.globalAlpha = 0.6;
  ctx.setLineDash([2, 4]);
  ctx.beginPath();
  ctx.moveTo(map.x(pod.x), map.y(pod.y));
  ctx.lineTo(tx, ty);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.beginPath();
  ctx.moveTo(tx - 5, ty - 5);
  ctx.lineTo(tx + 5, ty + 5);
  ctx.moveTo(tx + 5, ty - 5);
  ctx.lineTo(tx - 5, ty + 5);
  ctx.stroke();
  ctx.restore();
}

function drawCollisions(ctx, model, map, t) {
  for (const hit of model.collisions) {
    const age = t - hit.at;
    if (age < 0 || age > FLASH_FRAMES) continue;
    const a = podAt(model, hit.at, hit.a);
    const b = Number.isInteger(hit.b) ? podAt(model, hit.at, hit.b) : null;
    if (!a) continue;
    const cx = b ? (a.x + b.x) / 2 : a.x;
    const cy = b ? (a.y + b.y) / 2 : a.y;
    const fade = 1 - age / FLASH_FRAMES;
    ctx.save();
    ctx.globalAlpha = fade;
    ctx.strokeStyle = "#ffeb3b";
    ctx.fillStyle = "rgba(255,235,59,0.35)";
    ctx.lineWidth = 3;
    ctx.beginPath();
    ctx.arc(map.x(cx), map.y(cy), Math.max(6, POD_RADIUS * map.scale * (0.6 + age)), 0, Math.PI * 2);
    ctx.fill();
    ctx.stroke();
    ctx.restore();
  }
}

/** A coloured dot; styled through CSSOM, which the page's policy allows (a style attribute it would refuse). */
function swatch(colour) {
  const dot = el("span", { class: "viewer-swatch", "aria-hidden": "true" });
  dot.style.background = colour;
  return dot;
}

function lapOf(model, passed) {
  const count = model.checkpoints.length || 1;
  if (passed >= count * model.laps + 1) return "finished";
  return `${Math.min(model.laps, Math.floor((passed - 1) / count) + 1)} / ${model.laps}`;
}

/** The side panel for frame `index`: per player its timeout counter and answer, per pod its state. */
export function panel(model, index) {
  const frame = model.replay.frames[index] || {};
  const pods = frame.pods || [];
  const actions = actionsAt(model, index);
  const box = el("div", { class: "viewer-podracing-panel" });
  for (let p = 0; p < model.players; p += 1) {
    const mine = pods.map((pod, j) => [pod, j]).filter(([, j]) => Math.floor(j / model.podsPerPlayer) === p);
    if (!mine.length) continue;
    const head = el("tr", {}, el("th", {}, ""), mine.map(([, j]) => el("th", { scope: "col", "data-pod": j }, swatch(podColour(j, model.podsPerPlayer)), `pod ${(j % model.podsPerPlayer) + 1}`)));
    const row = (label, value) => el("tr", {}, el("th", { scope: "row" }, label), mine.map(([pod]) => el("td", {}, value(pod))));
    const body = [
      row("speed", (pod) => num(Math.hypot(pod.vx || 0, pod.vy || 0), 0)),
      row("next checkpoint", (pod) => num(pod.next_checkpoint)),
      row("lap", (pod) => (typeof pod.checkpoints_passed === "number" ? lapOf(model, pod.checkpoints_passed) : "-")),
      row("checkpoints passed", (pod) => num(pod.checkpoints_passed)),
      row("boost left", (pod) => (pod.boost_available === undefined ? "-" : pod.boost_available ? "yes" : "no")),
      row("shield", (pod) => (pod.shield ? "on" : pod.shield_cooldown ? `cooldown ${pod.shield_cooldown}` : "off")),
    ];
    const timeout = Array.isArray(frame.timeouts) ? frame.timeouts[p] : undefined;
    const unsent = model.replay.result ? "none (the match ended here)" : "(not sent yet)";
    const action = actions === undefined ? unsent : actions?.[p] === null || actions?.[p] === undefined ? "none (no answer, or left out of the replay)" : shortJson(actions[p], 400);
    box.append(
      el("section", { "data-panel-player": p },
        el("h3", {}, swatch(playerColour(model, p)), el("span", { class: "viewer-name", title: nameOf(model, p) }, nameOf(model, p))),
        el("table", {}, el("thead", {}, head), el("tbody", {}, body)),
        el("p", {}, "turns left to reach a checkpoint: ", el("strong", { "data-timeout": p }, num(timeout))),
        el("p", {}, "answer to this frame:"),
        el("pre", { class: "viewer-action", "data-action-json": p }, action)),
    );
  }
  return box;
}
