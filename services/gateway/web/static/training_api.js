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
