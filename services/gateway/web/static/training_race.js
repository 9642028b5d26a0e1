// The run page's live race: the latest showcase race of the policy (GET .../race with the owner's
// key, a replay in the match replays' format) played in a loop by the replay viewer's own Player
// and game renderer. The race is fetched again when asked (the run has a newer checkpoint) and
// every 30 s; a race that differs from the one on screen replaces it when the current lap of the
// loop ends, never mid-race.

import { ApiError, apiFetch } from "./training_api.js";
import { Player, checkReplay, loadRenderer } from "./viewer/player.js";

const REFRESH_MS = 30000;
const LOOP_PAUSE_MS = 1500;
const MIN_FETCH_GAP_MS = 5000;
const STATUS_CHECK_MS = 250;
/** Who drives which pods in a showcase race (services/trainer/showcase.py). */
const SEATS = [{ name: "the policy" }, { name: "built-in bot" }];

export class RaceView {
  /** root: the `[data-race]` element with the viewer's controls; raceUrl: the run's /race. */
  constructor(root, raceUrl, renderers) {
    this.root = root;
    this.raceUrl = raceUrl;
    this.renderers = renderers;
    this.player = null;
    this.shownText = null;
    this.nextText = null;
    this.loads = 0;
    this.swaps = 0;
    this._lastFetch = 0;
    this._fetching = false;
    this._endedAt = null;
    this.status = root.querySelector("[data-race-status]");
    this.stage = root.querySelector("[data-race-stage]");
    this.loop = root.querySelector("input[data-race-loop]");
  }

  start() {
    this.refresh(true);
    setInterval(() => this.refresh(true), REFRESH_MS);
    setInterval(() => this._checkLoop(), STATUS_CHECK_MS);
  }

  _say(text) {
    if (!this.status) return;
    this.status.textContent = text;
    this.status.hidden = !text;
  }

  /** Fetch the race; `force` ignores the minimum gap between fetches (the 30 s timer, the first). */
  async refresh(force = false) {
    const now = performance.now();
    if (this._fetching || (!force && now - this._lastFetch < MIN_FETCH_GAP_MS)) return;
    this._fetching = true;
    this._lastFetch = now;
    try {
      const text = await (await apiFetch(this.raceUrl)).text();
      this.loads += 1;
      this.root.dataset.raceLoads = String(this.loads);
      if (text === this.shownText || text === this.nextText) return;
      if (!this.player) await this._show(text);
      else this.nextText = text;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        if (!this.player) this._say("No showcase race yet: the trainer records one with each new checkpoint.");
      } else {
        this._say(`The race could not be loaded: ${error.message || error}`);
      }
    } finally {
      this._fetching = false;
    }
  }

  async _show(text) {
    const replay = checkReplay(JSON.parse(text));
    const renderer = await loadRenderer(replay.game, this.renderers);
    if (this.player) this.player.destroy();
    this.stage.hidden = false;
    this.player = new Player(this.root, { replay, renderer, participants: SEATS, linkable: false });
    this.shownText = text;
    this.nextText = null;
    this.swaps += 1;
    this._endedAt = null;
    this.player.setSpeed(2);
    this.player.play();
    await this.player.whenDrawn();
    this._say("");
    this.root.dataset.ready = "true";
    this.root.dataset.raceSwaps = String(this.swaps);
  }

  /** At the end of the race: after a short pause, start again (with the newer race if one came). */
  _checkLoop() {
    const player = this.player;
    if (!player || player.playing || player.frame < player.lastFrame) {
      this._endedAt = null;
      return;
    }
    if (this.loop && !this.loop.checked) return;
    const now = performance.now();
    if (this._endedAt === null) {
      this._endedAt = now;
      return;
    }
    if (now - this._endedAt < LOOP_PAUSE_MS) return;
    this._endedAt = null;
    if (this.nextText) {
      this._show(this.nextText).catch((error) => this._say(`The race could not be shown: ${error.message}`));
    } else {
      player.setFrame(0);
      player.play();
    }
  }
}
