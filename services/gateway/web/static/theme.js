// The page's theme (arena.css custom properties) for what is drawn on canvas, which CSS cannot
// style: charts read their colours here when they draw, and draw again when the system switches
// between light and dark.

/** The value of custom property `name` (e.g. "--chart-grid"), or `fallback` without one. */
export function themeColour(name, fallback) {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value || fallback;
}

/** Call `redraw` whenever the system's colour scheme changes. */
export function onThemeChange(redraw) {
  window.matchMedia?.("(prefers-color-scheme: dark)")?.addEventListener?.("change", () => redraw());
}
