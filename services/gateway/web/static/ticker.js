// The front page, live: follows /ws/events (topic `matches`) and
// - adds a line to the ticker (<ol data-ticker>) for every finished match: its bots with their ranks
//   and rating changes (ordinal = mu - 3 sigma, after minus before), linking to the match;
// - keeps the live-matches table (<tbody id="live-matches">) in step: a row appears on
//   match.started and goes on match.finished.
// Names come from bots: every text goes in with textContent. The socket reconnects with backoff.

const MAX_LINES = 20;
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30000;

// "/prefix/static/ticker.js" -> "/prefix": links work behind a path prefix too.
const scriptPath = new URL(import.meta.url).pathname;
const ROOT = scriptPath.slice(0, scriptPath.lastIndexOf("/static/"));

function link(href, text) {
  const a = document.createElement("a");
  a.href = ROOT + href;
  a.textContent = text;
  return a;
}

function matchLink(id) {
  return link(`/matches/${encodeURIComponent(id)}`, String(id).slice(0, 8));
}

function ordinalChange(seat) {
  if (!seat.rating_before || !seat.rating_after) return null;
  return seat.rating_after.ordinal - seat.rating_before.ordinal;
}

function signed(value) {
  return (value >= 0 ? "+" : "\u2212") + Math.abs(value).toFixed(2);
}

// "a (#1, +1.25) vs b (#2, -1.25)" into `parent`, each bot linked to its page.
function appendPlayers(parent, participants) {
  participants.forEach((seat, index) => {
    if (index > 0) parent.append(" vs ");
    const name = link(`/bots/${encodeURIComponent(seat.bot_id)}`, seat.name);
    name.className = "trunc";
    name.title = seat.name;
    parent.append(name);
    if (seat.rank !== null && seat.rank !== undefined) {
      const change = ordinalChange(seat);
      parent.append(` (#${seat.rank + 1}${change === null ? "" : ", " + signed(change)})`);
    }
  });
}

/** A cell labelled with its column (a phone shows the label beside it: arena.css, `table.stack`). */
function cell(label, ...content) {
  const td = document.createElement("td");
  td.dataset.label = label;
  td.append(...content);
  return td;
}

function timeOf(event) {
  const time = document.createElement("time");
  time.dateTime = event.timestamp;
  const moment = new Date(event.timestamp);
  time.textContent = Number.isNaN(moment.getTime()) ? "" : moment.toLocaleTimeString();
  return time;
}

class FrontPage {
  constructor(ticker, live, liveEmpty) {
    this.ticker = ticker;
    this.live = live;
    this.liveEmpty = liveEmpty;
  }

  liveRow(matchId) {
    if (!this.live) return null;
    for (const row of this.live.querySelectorAll("tr[data-match-id]")) {
      if (row.dataset.matchId === matchId) return row;
    }
    return null;
  }

  syncEmpty() {
    if (this.liveEmpty && this.live) this.liveEmpty.hidden = this.live.querySelector("tr") !== null;
  }

  started(event) {
    if (!this.live || this.liveRow(event.match_id)) return;
    const row = document.createElement("tr");
    row.dataset.matchId = event.match_id;
    const players = cell("players");
    appendPlayers(players, event.participants || []);
    row.append(cell("match", matchLink(event.match_id)), cell("game", event.game), players, cell("started", timeOf(event)));
    this.live.prepend(row);
    this.syncEmpty();
  }

  finished(event) {
    const row = this.liveRow(event.match_id);
    if (row) row.remove();
    this.syncEmpty();
    if (!this.ticker) return;
    const line = document.createElement("li");
    line.dataset.matchId = event.match_id;
    line.dataset.status = event.status;
    line.append(timeOf(event), " ", event.game, " ", matchLink(event.match_id), ": ");
    if (event.status === "finished") {
      appendPlayers(line, event.participants || []);
      if (!event.rated) line.append(" (not rated)");
    } else {
      line.append(`${event.status}: `, event.error || "");
    }
    this.ticker.prepend(line);
    while (this.ticker.children.length > MAX_LINES) this.ticker.lastElementChild.remove();
  }

  handle(event) {
    if (event.type === "match.started") this.started(event);
    else if (event.type === "match.finished") this.finished(event);
  }
}

function follow(page) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const url = `${scheme}//${location.host}${ROOT}/ws/events?topic=matches`;
  let delay = RETRY_FIRST_MS;
  const connect = () => {
    const socket = new WebSocket(url);
    socket.addEventListener("open", () => {
      delay = RETRY_FIRST_MS;
      if (page.ticker) page.ticker.dataset.tickerState = "open";
    });
    socket.addEventListener("message", (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      page.handle(event);
    });
    socket.addEventListener("close", () => {
      if (page.ticker) page.ticker.dataset.tickerState = "closed";
      setTimeout(connect, delay + Math.random() * delay * 0.2);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    });
  };
  connect();
}

const ticker = document.querySelector("[data-ticker]");
const live = document.getElementById("live-matches");
if (ticker || live) follow(new FrontPage(ticker, live, document.querySelector("[data-live-empty]")));
