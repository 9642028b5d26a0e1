// A running match, live: WebSocket /ws/matches/{id} (protocol: docs/live.md). `live.start` brings
// frame 0 and the participants, then each `match.frames` adds a batch of played turns, and `match.finished`
// swaps in the stored replay. A socket that drops (the server sheds slow clients with 1013) is
// opened again; the server then starts over with `live.start`, and turns already seen are skipped.

import { fetchParticipants, fetchReplay, participantsOf, showError, showStatus, startPlayer } from "./load.js";

const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000];
const CLOSE_UNKNOWN_MATCH = 4404;

/** ws:// or wss:// URL of the match's socket, under the same root path as the page. */
export function liveSocketUrl(matchId, location = window.location) {
  const root = location.pathname.replace(/\/matches\/[^/]*\/?$/, "");
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${root}/ws/matches/${encodeURIComponent(matchId)}`;
}

export class LiveSession {
  constructor(root, options) {
    this.root = root;
    this.options = options;
    this.player = null;
    this.starting = null;
    this.pending = [];
    this.lastTurn = -1;
    this.finished = false;
    this.failures = 0;
    this.socket = null;
  }

  connect() {
    const socket = new WebSocket(liveSocketUrl(this.options.matchId));
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.failures = 0;
    });
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", (event) => this.closed(event.code, event.reason));
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.type === "live.start") this.start(message);
    else if (this.player) this.handle(message);
    else this.pending.push(message);
  }

  start(message) {
    if (this.player || this.starting) return; // a reconnect: carry on from the frames we have
    if (message.status) showStatus(this.root, `match ${message.status}: waiting for turns\u2026`);
    const participants = participantsOf(message);
    this.starting = startPlayer(this.root, message.replay, { ...this.options, participants, live: true })
      .then((player) => {
        this.player = player;
        showStatus(this.root, "");
        for (const queued of this.pending.splice(0)) this.handle(queued);
      })
      .catch((error) => showError(this.root, error));
  }

  handle(message) {
    if (message.type === "match.frames") this.frames(message);
    else if (message.type === "match.finished") this.finish(message);
  }

  frames(message) {
    // A batch of consecutive turns: `turn` is the first, `actions` has one entry per turn.
    const first = Number(message.turn);
    const actions = Array.isArray(message.actions) ? message.actions : [];
    if (!Number.isInteger(first) || first <= this.lastTurn || actions.length === 0) return;
    this.lastTurn = first + actions.length - 1;
    const replay = this.player.replay;
    // `turn` indexes replay.turns; a viewer that joined late (or an unwatched pause) leaves a gap.
    const turns = [];
    for (let k = replay.turns.length; k < first; k += 1) turns.push({ actions: [] });
    actions.forEach((perPlayer, k) => {
      if (first + k >= replay.turns.length) turns.push({ actions: Array.isArray(perPlayer) ? perPlayer : [] });
    });
    this.player.append({
      frames: Array.isArray(message.frames) ? message.frames : [],
      events: Array.isArray(message.events) ? message.events : [],
      turns,
    });
  }

  async finish(message) {
    if (this.finished) return;
    this.finished = true;
    const status = this.root.ownerDocument.querySelector("[data-match-status]");
    if (status && typeof message.status === "string") status.textContent = message.status;
    try {
      const [replay, participants] = await Promise.all([
        fetchReplay(this.options.replayUrl),
        fetchParticipants(this.options.matchApi).catch(() => null),
      ]);
      if (participants) this.player.participants = participants;
      this.player.finish(replay);
    } catch (error) {
      if (this.player) this.player.finish({ ...this.player.replay, result: null });
      showStatus(this.root, `The match ${message.status || "ended"} without a replay (${error.message}).`, true);
    }
  }

  closed(code, reason) {
    if (this.finished) return;
    if (code === CLOSE_UNKNOWN_MATCH) {
      showError(this.root, new Error("There is no such match."));
      return;
    }
    if (this.failures >= RETRY_DELAYS_MS.length) {
      showError(this.root, new Error(`The live view was cut off (${code}${reason ? ": " + reason : ""}); reload the page to try again.`));
      return;
    }
    const delay = RETRY_DELAYS_MS[this.failures];
    this.failures += 1;
    setTimeout(() => this.connect(), delay);
  }
}

/** Start following `options.matchId` live; the session (its `player` appears with live.start). */
export function startLive(root, options) {
  showStatus(root, "connecting to the live match\u2026");
  const session = new LiveSession(root, options);
  session.connect();
  window.arenaLive = session;
  return session;
}
