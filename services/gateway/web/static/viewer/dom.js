// Small DOM helpers for the viewer. Text always goes in as text nodes (never as markup): bot names,
// messages and actions are chosen by bots and users.

/**
 * el("td", {class: "x", "data-kind": "hit"}, "text", childNode, ...) -> HTMLElement.
 * Attributes with null/undefined/false values are left out; children that are strings or numbers
 * become text nodes, null/undefined children are skipped.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A short, single-line JSON rendering of an untrusted value, cut to `limit` characters. */
export function shortJson(value, limit = 240) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = "null";
  return text.length > limit ? text.slice(0, limit - 1) + "\u2026" : text;
}

/** A number for display: integers as they are, others with `digits` decimals. */
export function num(value, digits = 1) {
  if (typeof value !== "number" || !Number.isFinite(value)) return value === null || value === undefined ? "-" : String(value);
  return Number.isInteger(value) ? String(value) : value.toFixed(digits);
}
