// Getting a replay and the match around it into a Player: fetching (same origin only), reading a
// dropped file (plain or gzipped JSON), the participants' names, error messages, and the
// `window.arenaViewer` handle that tests and the benchmark wait for.

import { Player, checkReplay, loadRenderer, turnFromUrl } from "./player.js";

/** Load timings (ms since navigation start or durations), read by scripts/bench_viewer.py. */
export const timings = {};

export function viewerOptions(root) {
  const data = root.dataset;
  let renderers = {};
  try {
    renderers = JSON.parse(data.renderers || "{}");
  } catch {
    renderers = {};
  }
  return {
    mode: data.mode || "match",
    matchId: data.matchId || null,
    status: data.status || null,
    replayUrl: data.replayUrl || null,
    matchApi: data.matchApi || null,
    downloadUrl: data.downloadUrl || null,
    autoplay: data.autoplay === "true",
    loop: data.loop === "true",
    renderers,
  };
}

export function showStatus(root, message, isError = false) {
  const box = root.querySelector("[data-viewer-status]");
  if (!box) return;
  box.textContent = message || "";
  box.hidden = !message;
  box.classList.toggle("viewer-error", isError);
}

export function showError(root, error) {
  showStatus(root, error instanceof Error ? error.message : String(error), true);
}

/** A same-origin URL for `src`, or an error saying why not. */
export function sameOriginUrl(src) {
  const url = new URL(src, window.location.href);
  if (url.origin !== window.location.origin) {
    throw new Error("the replay must come from this site (?src= takes a path on this server)");
  }
  return url;
}

async function errorText(response) {
  try {
    const body = await response.json();
    return typeof body.detail === "string" ? body.detail : response.statusText;
  } catch {
    return response.statusText;
  }
}

/** Fetch and parse a replay; the server sends it gzip-compressed, the browser inflates it. */
export async function fetchReplay(url) {
  const started = performance.now();
  const response = await fetch(sameOriginUrl(url), { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`cannot load the replay: ${response.status} ${await errorText(response)}`);
  const text = await response.text();
  const received = performance.now();
  const replay = checkReplay(JSON.parse(text));
  Object.assign(timings, {
    fetchStart: started,
    received,
    parsed: performance.now(),
    parseMs: performance.now() - received,
    jsonChars: text.length,
  });
  return replay;
}

/** Participants by slot ({name, botId, metrics, ordinalChange}) from the match API. */
export async function fetchParticipants(matchApi) {
  if (!matchApi) return [];
  const response = await fetch(sameOriginUrl(matchApi), { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`cannot load the match: ${response.status} ${await errorText(response)}`);
  return participantsOf(await response.json());
}

export function participantsOf(match) {
  const participants = [];
  for (const part of match?.participants || []) {
    participants[part.slot] = {
      name: String(part.bot_name ?? part.name ?? `player ${part.slot}`),
      botId: part.bot_id || null,
      metrics: part.metrics && Object.keys(part.metrics).length ? part.metrics : null,
      ordinalChange: typeof part.ordinal_change === "number" ? part.ordinal_change : null,
    };
  }
  return participants;
}

/** Read a dropped or chosen file: JSON, or gzipped JSON (the API's download). */
export async function readReplayFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    text = await new Response(stream).text();
  } else {
    text = new TextDecoder().decode(bytes);
  }
  try {
    return checkReplay(JSON.parse(text));
  } catch (error) {
    throw new Error(`${file.name} is not a replay: ${error.message}`);
  }
}

let current = null;

/** Show `replay` in the viewer (replacing what it showed), then publish `window.arenaViewer`. */
export async function startPlayer(root, replay, options = {}) {
  const renderer = await loadRenderer(replay.game, options.renderers || {});
  if (current) current.destroy();
  window.arenaViewer = { player: null, ready: false, timings };
  delete root.dataset.ready;
  showStatus(root, "");
  root.querySelector("[data-viewer-stage]")?.removeAttribute("hidden");
  const player = new Player(root, {
    replay,
    renderer,
    participants: options.participants || [],
    downloadUrl: options.downloadUrl || null,
    live: Boolean(options.live),
    startTurn: options.live ? null : turnFromUrl(),
    linkable: options.linkable !== false,
    loop: Boolean(options.loop),
  });
  const still = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches;
  if (options.autoplay && !options.live && !still) player.play();
  current = player;
  await player.whenDrawn();
  timings.firstDraw = player.firstDrawAt;
  window.arenaViewer = { player, ready: true, timings };
  root.dataset.ready = "true";
  return player;
}
