// The viewer page's entry point: decides where the replay comes from (a stored match, a running
// match, ?src=, a dropped file or the one file of `arena view`) and starts the player.

import {
  fetchParticipants,
  fetchReplay,
  readReplayFile,
  sameOriginUrl,
  showError,
  showStatus,
  startPlayer,
  viewerOptions,
} from "./load.js";

const LIVE_STATES = new Set(["queued", "running"]);

async function bootMatch(root, options) {
  if (LIVE_STATES.has(options.status)) {
    const live = await import("./live.js");
    return live.startLive(root, options);
  }
  showStatus(root, "loading the replay\u2026");
  const [replay, participants] = await Promise.all([
    fetchReplay(options.replayUrl),
    fetchParticipants(options.matchApi).catch(() => []),
  ]);
  return startPlayer(root, replay, { ...options, participants });
}

function bootDropZone(root, options) {
  const zone = root.querySelector("[data-dropzone]");
  if (!zone) return;
  zone.hidden = false;
  const open = async (file) => {
    if (!file) return;
    try {
      showStatus(root, `reading ${file.name}\u2026`);
      const replay = await readReplayFile(file);
      await startPlayer(root, replay, { ...options, downloadUrl: null, linkable: false });
    } catch (error) {
      showError(root, error);
    }
  };
  zone.querySelector("input[type=file]")?.addEventListener("change", (event) => open(event.target.files?.[0]));
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("viewer-drop-active");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("viewer-drop-active"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("viewer-drop-active");
    open(event.dataTransfer?.files?.[0]);
  });
}

async function bootFile(root, options) {
  const src = new URLSearchParams(window.location.search).get("src");
  const url = src !== null ? sameOriginUrl(src).href : options.replayUrl;
  if (!url) {
    bootDropZone(root, options);
    return null;
  }
  showStatus(root, "loading the replay\u2026");
  const replay = await fetchReplay(url);
  return startPlayer(root, replay, { ...options, downloadUrl: options.downloadUrl || url });
}

const root = document.querySelector("[data-viewer]");
if (root) {
  const options = viewerOptions(root);
  const boot = options.mode === "file" ? bootFile : bootMatch;
  boot(root, options).catch((error) => showError(root, error));
}
