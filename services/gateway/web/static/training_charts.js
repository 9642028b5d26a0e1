// Line charts of a training run's metrics, drawn on canvas with no library: x is the global step,
// one or more series per chart, each a metric key of the run's time series. Points are appended
// as they arrive (from the metrics endpoint, then live); a chart redraws at most once per
// animation frame and whenever its box changes size. Drawing is in CSS pixels on a backing store
// of device pixels, so lines stay crisp on high-dpi screens.

import { onThemeChange, themeColour } from "./theme.js";

const PADDING = { left: 56, right: 12, top: 10, bottom: 26 };
const FONT = "11px system-ui, sans-serif";
const TICKS = 4;

/** Decimals needed to write multiples of `step` exactly (0.25 -> 2, 5 -> 0). */
function decimalsOf(step) {
  for (let digits = 0; digits < 8; digits++) {
    const scaled = step * 10 ** digits;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return digits;
  }
  return 8;
}

/** An axis label for `value` on an axis with ticks `step` apart: short (12.5k, 0.25, 2e-5), and
 * precise enough that neighbouring ticks read differently. */
export function tickLabel(value, step) {
  if (!Number.isFinite(value)) return "";
  if (Math.abs(value) < step * 1e-9) return "0";
  const size = Math.abs(value);
  for (const [unit, suffix] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]]) {
    if (size >= Math.max(unit, 1e4) && step >= unit / 100) return (value / unit).toFixed(decimalsOf(step / unit)) + suffix;
  }
  if (step < 1e-4) {
    const mantissaStep = step / 10 ** Math.floor(Math.log10(size));
    return value.toExponential(Math.min(3, decimalsOf(mantissaStep)));
  }
  return value.toFixed(decimalsOf(step));
}

/** Rounded tick values covering [low, high], at least `minStep` apart (1: whole numbers only). */
export function niceTicks(low, high, count = TICKS, minStep = 0) {
  if (!(high > low)) return [low];
  const raw = (high - low) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const step = Math.max(nice, minStep);
  const ticks = [];
  for (let tick = Math.ceil(low / step) * step; tick <= high + step * 1e-9; tick += step) {
    ticks.push(Math.abs(tick) < step * 1e-9 ? 0 : tick);
  }
  return ticks;
}

/**
 * Trace a series' line. A long run has far more points than the chart has pixel columns: then each
 * column is drawn as the lowest and highest value that fell in it (in the order they came), which
 * looks the same as every point and costs a few thousand segments at most.
 */
function tracePath(ctx, points, px, py, width) {
  if (points.length <= 2 * width) {
    points.forEach(([x, y], i) => (i === 0 ? ctx.moveTo(px(x), py(y)) : ctx.lineTo(px(x), py(y))));
    return;
  }
  let column = null;
  let low = null;
  let high = null;
  let started = false;
  const flush = () => {
    if (column === null) return;
    const [first, second] = low[2] <= high[2] ? [low, high] : [high, low];
    for (const [x, y] of [first, second]) {
      if (!started) ctx.moveTo(px(x), py(y));
      else ctx.lineTo(px(x), py(y));
      started = true;
    }
  };
  points.forEach(([x, y], index) => {
    const here = Math.floor(px(x));
    if (here !== column) {
      flush();
      column = here;
      low = high = [x, y, index];
    } else {
      if (y < low[1]) low = [x, y, index];
      if (y > high[1]) high = [x, y, index];
    }
  });
  flush();
}

export class LineChart {
  /**
   * canvas: the <canvas> to draw on; series: [{key, label, color}]; options: {min?, max?, xStep?}:
   * fixed y bounds (win rates are 0..1), otherwise the range of the data; the smallest step between
   * x ticks (1 where x counts whole things, such as generations).
   */
  constructor(canvas, series, options = {}) {
    this.canvas = canvas;
    this.series = series;
    this.options = options;
    this.points = series.map(() => []);
    this.draws = 0;
    this._queued = false;
    this._observer = new ResizeObserver(() => this.redraw());
    onThemeChange(() => this.redraw());
    this._observer.observe(canvas);
  }

  /** Add a point per series that has a finite value in `metrics` at global step `x`. */
  add(x, metrics) {
    if (!Number.isFinite(x) || !metrics) return;
    this.series.forEach((series, index) => {
      const value = metrics[series.key];
      if (typeof value === "number" && Number.isFinite(value)) this.points[index].push([x, value]);
    });
    this.redraw();
  }

  /** How many points the chart holds (all series together). */
  get size() {
    return this.points.reduce((total, points) => total + points.length, 0);
  }

  redraw() {
    if (this._queued) return;
    this._queued = true;
    requestAnimationFrame(() => {
      this._queued = false;
      this.draw();
    });
  }

  _bounds() {
    let xLow = Infinity;
    let xHigh = -Infinity;
    let yLow = Infinity;
    let yHigh = -Infinity;
    for (const points of this.points) {
      for (const [x, y] of points) {
        if (x < xLow) xLow = x;
        if (x > xHigh) xHigh = x;
        if (y < yLow) yLow = y;
        if (y > yHigh) yHigh = y;
      }
    }
    if (typeof this.options.min === "number") yLow = Math.min(this.options.min, yLow);
    if (typeof this.options.max === "number") yHigh = Math.max(this.options.max, yHigh);
    if (yLow === yHigh) {
      // A flat line: give it room, but never below a fixed lower bound (a league size of 0).
      const pad = Math.abs(yLow) * 0.1 || 1;
      if (yLow !== this.options.min) yLow -= pad;
      yHigh += pad;
    }
    if (xLow === xHigh) {
      xLow -= 1;
      xHigh += 1;
    }
    return { xLow, xHigh, yLow, yHigh };
  }

  draw() {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(1, this.canvas.clientWidth);
    const height = Math.max(1, this.canvas.clientHeight);
    if (this.canvas.width !== Math.round(width * dpr) || this.canvas.height !== Math.round(height * dpr)) {
      this.canvas.width = Math.round(width * dpr);
      this.canvas.height = Math.round(height * dpr);
    }
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = FONT;
    const GRID = themeColour("--chart-grid", "#e6e6e6");
    const AXIS = themeColour("--chart-axis", "#999");
    const TEXT = themeColour("--chart-text", "#555");
    const left = PADDING.left;
    const right = width - PADDING.right;
    const top = PADDING.top;
    const bottom = height - PADDING.bottom;
    this.draws += 1;
    if (this.size === 0) {
      ctx.fillStyle = TEXT;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText("no data yet", width / 2, height / 2);
      return;
    }
    const { xLow, xHigh, yLow, yHigh } = this._bounds();
    const px = (x) => left + ((x - xLow) / (xHigh - xLow)) * (right - left);
    const py = (y) => bottom - ((y - yLow) / (yHigh - yLow)) * (bottom - top);

    ctx.lineWidth = 1;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    const yTicks = niceTicks(yLow, yHigh);
    const yStep = yTicks.length > 1 ? yTicks[1] - yTicks[0] : Math.abs(yHigh - yLow) || 1;
    for (const tick of yTicks) {
      const y = Math.round(py(tick)) + 0.5;
      ctx.strokeStyle = GRID;
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(right, y);
      ctx.stroke();
      ctx.fillStyle = TEXT;
      ctx.fillText(tickLabel(tick, yStep), left - 6, y);
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    const xTicks = niceTicks(xLow, xHigh, TICKS, this.options.xStep || 0);
    const xStep = xTicks.length > 1 ? xTicks[1] - xTicks[0] : Math.abs(xHigh - xLow) || 1;
    for (const tick of xTicks) {
      const label = tickLabel(tick, xStep);
      // Centred under its tick, but never cut by the canvas's edge (the last tick is at the right).
      const half = ctx.measureText(label).width / 2;
      ctx.fillStyle = TEXT;
      ctx.fillText(label, Math.min(Math.max(px(tick), half + 1), width - half - 1), bottom + 6);
    }
    ctx.strokeStyle = AXIS;
    ctx.beginPath();
    ctx.moveTo(left + 0.5, top);
    ctx.lineTo(left + 0.5, bottom + 0.5);
    ctx.lineTo(right, bottom + 0.5);
    ctx.stroke();

    ctx.save();
    ctx.beginPath();
    ctx.rect(left - 3, top - 3, right - left + 6, bottom - top + 6); // a point at an end is drawn whole
    ctx.clip();
    ctx.lineWidth = 1.75;
    ctx.lineJoin = "round";
    this.series.forEach((series, index) => {
      const points = this.points[index];
      if (points.length === 0) return;
      ctx.strokeStyle = series.color;
      ctx.fillStyle = series.color;
      if (points.length === 1) {
        ctx.beginPath();
        ctx.arc(px(points[0][0]), py(points[0][1]), 2.5, 0, 2 * Math.PI);
        ctx.fill();
        return;
      }
      ctx.beginPath();
      tracePath(ctx, points, px, py, right - left);
      ctx.stroke();
    });
    ctx.restore();
  }
}
