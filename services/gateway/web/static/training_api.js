// What both training pages share: the owner's API key (kept in this tab's sessionStorage under the
// bot page's entry, never a cookie or a URL), calls to the training API with it, readable error
// messages, and number formats.

export const KEY_STORAGE = "arena.apiKey";

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

export class ApiError extends Error {
  constructor(message, status = 0) {
    super(message);
    this.status = status;
  }
}

const REASONS = {
  401: "the API key was refused: paste a valid key above",
  403: "this API key may not do that",
  404: "no such run, or not yours (a run is shown to its owner and admins only)",
};

/** The readable reason of a failed answer (FastAPI's `detail`: a string or a list of errors). */
export async function problem(response) {
  let detail = "";
  try {
    const body = await response.json();
    if (typeof body.detail === "string") detail = body.detail;
    else if (Array.isArray(body.detail)) {
      detail = body.detail.map((item) => `${(item.loc || []).slice(1).join(".")}: ${item.msg}`).join("; ");
    }
  } catch {
    detail = "";
  }
  return `${response.status}: ${detail || REASONS[response.status] || response.statusText || "no reason given"}`;
}

/** fetch() with the key; throws ApiError with a readable message for a network error or a non-2xx. */
export async function apiFetch(url, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  const key = apiKey();
  if (key) headers["X-API-Key"] = key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(`the API could not be reached (${error.message || error})`);
  }
  if (!response.ok) throw new ApiError(await problem(response), response.status);
  return response;
}

export async function apiJson(url, options) {
  const response = await apiFetch(url, options);
  return response.status === 204 ? null : response.json();
}

/**
 * Wire the page's key form (`form[data-key-form]`): show it, fill it, and call `changed()` when a
 * key is set or forgotten.
 */
export function setupKeyForm(root, changed) {
  const form = root.querySelector("form[data-key-form]");
  if (!form) return;
  form.hidden = false;
  const input = form.elements.namedItem("api_key");
  const state = form.querySelector("[data-key-state]");
  const show = () => {
    if (state) state.textContent = apiKey() ? "A key is set for this tab." : "No key set.";
  };
  input.value = apiKey();
  show();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_STORAGE, key);
    show();
    changed();
  });
  form.querySelector("[data-forget-key]")?.addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORAGE);
    input.value = "";
    show();
    changed();
  });
}

export function formatNumber(value, digits = 3) {
  if (typeof value !== "number" || !Number.isFinite(value)) return value === null || value === undefined ? "-" : String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  return Math.abs(value) >= 1000 ? Math.round(value).toLocaleString("en-US") : String(+value.toPrecision(digits));
}

export function formatRate(value) {
  return typeof value === "number" && Number.isFinite(value) ? `${(value * 100).toFixed(1)}%` : "-";
}

export function formatDuration(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "-";
  const whole = Math.floor(seconds);
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  if (hours) return `${hours}h ${String(minutes).padStart(2, "0")}m`;
  return minutes ? `${minutes}m ${String(rest).padStart(2, "0")}s` : `${rest}s`;
}

export function formatTime(iso) {
  const moment = new Date(iso);
  return Number.isNaN(moment.getTime()) ? "" : moment.toLocaleString();
}

/** Show `message` in the page's `[data-run-message]` box (an error unless `isError` is false). */
export function say(root, message, isError = true) {
  const box = root.querySelector("[data-run-message]");
  if (!box) return;
  box.textContent = message;
  box.hidden = !message;
  box.classList.toggle("training-error", isError && Boolean(message));
}

/**
 * A run's progress against the budget that ends it. A training run stops at `total_steps` or, with
 * a time budget, at `time_budget_s` of training, whichever comes first: the larger share is the
 * one that ends it. `elapsed` is the training time to count (a running clock on the run's page).
 * {share, text, other}: `text` names the budget ("42.0% of 2h 00m of training"), `other` the other
 * one when there is one ("steps: 12.3% of 10,000,000").
 */
export function budgetProgress(run, elapsed = run?.elapsed_s) {
  const stepsText = `${formatNumber(run?.total_steps)} steps`;
  const steps = run?.total_steps > 0 ? (run.global_step || 0) / run.total_steps : null;
  const budget = typeof run?.time_budget_s === "number" && run.time_budget_s > 0 ? run.time_budget_s : null;
  const time = budget !== null && typeof elapsed === "number" ? elapsed / budget : null;
  const clamp = (share) => Math.min(1, Math.max(0, share));
  if (time !== null && (steps === null || time >= steps)) {
    return {
      share: clamp(time),
      by: "time",
      text: `${formatRate(clamp(time))} of ${formatDuration(budget)} of training`,
      other: steps === null ? "" : `steps: ${formatRate(clamp(steps))} of ${stepsText}`,
    };
  }
  return {
    share: steps === null ? null : clamp(steps),
    by: "steps",
    text: steps === null ? "-" : `${formatRate(clamp(steps))} of ${stepsText}`,
    other: time === null ? "" : `time: ${formatRate(clamp(time))} of ${formatDuration(budget)}`,
  };
}

/**
 * A run's elapsed time that keeps counting while the run works. The API's `elapsed_s` grows only
 * when a chunk of work ends, so from each new value on the clock runs with the wall clock for as
 * long as the run's status is a working one; a new value (or a stop) resets it to the API's figure.
 */
export class ElapsedClock {
  constructor() {
    this.reported = null;
    this.base = null;
    this.at = 0;
    this.running = false;
  }

  /** The run's `elapsed_s` and whether it is working now (e.g. status "running"). */
  update(seconds, running) {
    if (typeof seconds !== "number" || !Number.isFinite(seconds)) return;
    if (seconds !== this.reported || !running || !this.running) {
      this.reported = seconds;
      this.base = seconds;
      this.at = performance.now();
    }
    this.running = running;
  }

  get seconds() {
    if (this.base === null) return null;
    return this.base + (this.running ? (performance.now() - this.at) / 1000 : 0);
  }
}

/** Give each body cell of `table` its column's header as `data-label`: on a phone a wide table's
 * rows become cards and each cell shows the label beside it (arena.css, `table.stack`). */
export function labelCells(table) {
  if (!table) return;
  const headers = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((cell, index) => {
      if (cell.tagName === "TD" && !cell.dataset.label && headers[index]) cell.dataset.label = headers[index];
    });
  }
}
