// Canvas drawings of an evolution run (no library): the MAP-Elites grid as a heat map and the
// lineage tree. Both draw in CSS pixels on a backing store of device pixels, redraw when their box
// changes size, and report clicks on a cell or a node as the program's name.

import { onThemeChange, themeColour } from "./theme.js";

const INK = "#333";
const FONT = "11px system-ui, sans-serif";
const UNSCORED = "#bdbdbd";

/** A colour from pale yellow (low) to dark blue-green (high) for `t` in [0, 1]. */
export function fitnessColor(t) {
  const stops = [
    [255, 247, 188],
    [161, 218, 180],
    [65, 182, 196],
    [34, 94, 168],
    [12, 44, 132],
  ];
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const mix = stops[i].map((c, k) => Math.round(c + (stops[i + 1][k] - c) * f));
  return `rgb(${mix[0]}, ${mix[1]}, ${mix[2]})`;
}

/** Dark text on light cells, white on dark ones. */
function inkOn(t) {
  return t > 0.55 ? "#fff" : INK;
}

function range(values) {
  const finite = values.filter((v) => typeof v === "number" && Number.isFinite(v));
  if (!finite.length) return [0, 1];
  const low = Math.min(...finite);
  const high = Math.max(...finite);
  return high > low ? [low, high] : [low - 0.5, high + 0.5];
}

/** The theme's colours for text, labels, empty cells and edges (arena.css). */
function colours() {
  return {
    text: themeColour("--text", "#333"),
    muted: themeColour("--chart-text", "#888"),
    empty: themeColour("--chart-empty", "#f3f3f3"),
    line: themeColour("--chart-grid", "#ddd"),
  };
}

function prepare(canvas, height) {
  const dpr = window.devicePixelRatio || 1;
  const width = Math.max(1, canvas.clientWidth);
  const h = height ?? Math.max(1, canvas.clientHeight);
  // Through the CSSOM (which the page's policy allows), not a style attribute.
  if (height !== undefined) canvas.style.height = `${h}px`;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(h * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, h);
  ctx.font = FONT;
  return { ctx, width, height: h, colours: colours() };
}

class Drawing {
  constructor(canvas, onPick) {
    this.canvas = canvas;
    this.onPick = onPick;
    this.hits = [];
    this.draws = 0;
    this._queued = false;
    new ResizeObserver(() => this.redraw()).observe(canvas);
    onThemeChange(() => this.redraw());
    canvas.addEventListener("click", (event) => {
      const box = canvas.getBoundingClientRect();
      const x = event.clientX - box.left;
      const y = event.clientY - box.top;
      const hit = this.hits.find((h) => x >= h.x0 && x <= h.x1 && y >= h.y0 && y <= h.y1);
      if (hit && this.onPick) this.onPick(hit.name);
    });
  }

  redraw() {
    if (this._queued) return;
    this._queued = true;
    requestAnimationFrame(() => {
      this._queued = false;
      this.draws += 1;
      this.draw();
    });
  }
}

/** The MAP-Elites grid: bins x bins cells, x and y the two behaviour descriptors. */
export class HeatMap extends Drawing {
  constructor(canvas, onPick) {
    super(canvas, onPick);
    this.grid = null;
  }

  set(grid) {
    this.grid = grid;
    this.redraw();
  }

  draw() {
    const grid = this.grid;
    const width = Math.max(1, this.canvas.clientWidth);
    const { ctx, colours } = prepare(this.canvas, Math.min(width, 460));
    this.hits = [];
    if (!grid) return;
    const bins = Math.max(1, grid.bins);
    const left = 34;
    const bottom = 30;
    const size = Math.max(8, Math.min(width - left - 8, Math.min(width, 460) - bottom - 8));
    const cellSize = size / bins;
    const top = 6;
    const [low, high] = range(grid.cells.map((c) => c.fitness));
    const byCell = new Map(grid.cells.map((c) => [`${c.x},${c.y}`, c]));
    for (let x = 0; x < bins; x++) {
      for (let y = 0; y < bins; y++) {
        const px = left + x * cellSize;
        const py = top + (bins - 1 - y) * cellSize; // y grows upwards
        const elite = byCell.get(`${x},${y}`);
        const t = elite && typeof elite.fitness === "number" ? (elite.fitness - low) / (high - low) : 0;
        ctx.fillStyle = elite ? fitnessColor(t) : colours.empty;
        ctx.fillRect(px + 1, py + 1, cellSize - 2, cellSize - 2);
        if (!elite) continue;
        this.hits.push({ name: elite.name, x0: px, x1: px + cellSize, y0: py, y1: py + cellSize });
        if (cellSize >= 34) {
          ctx.fillStyle = inkOn(t);
          ctx.textAlign = "center";
          ctx.textBaseline = "middle";
          ctx.fillText(elite.name, px + cellSize / 2, py + cellSize / 2 - 7);
          const score = typeof elite.fitness === "number" ? elite.fitness.toFixed(3) : "-";
          ctx.fillText(score, px + cellSize / 2, py + cellSize / 2 + 7);
        }
      }
    }
    ctx.fillStyle = colours.muted;
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    const [xName, yName] = grid.descriptors.length === 2 ? grid.descriptors : ["x", "y"];
    ctx.fillText(`${xName} \u2192`, left + size / 2, top + size + 14);
    for (let i = 0; i < bins; i++) ctx.fillText(String(i), left + (i + 0.5) * cellSize, top + size + 2);
    ctx.save();
    ctx.translate(12, top + size / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(`${yName} \u2192`, 0, 0);
    ctx.restore();
  }
}

/** The lineage tree: a row per generation, programs ordered by island, edges parent -> child. */
export class LineageTree extends Drawing {
  constructor(canvas, onPick) {
    super(canvas, onPick);
    this.nodes = [];
    this.best = null;
    this.selected = null;
  }

  set(lineage) {
    this.nodes = lineage.nodes || [];
    this.best = lineage.best;
    this.redraw();
  }

  select(name) {
    this.selected = name;
    this.redraw();
  }

  layout(width) {
    const rows = new Map();
    for (const node of this.nodes) {
      if (!rows.has(node.generation)) rows.set(node.generation, []);
      rows.get(node.generation).push(node);
    }
    const generations = [...rows.keys()].sort((a, b) => a - b);
    const rowHeight = 56;
    const left = 52;
    const places = new Map();
    generations.forEach((generation, row) => {
      const members = rows.get(generation).sort((a, b) => a.island - b.island || Number(a.name.slice(1)) - Number(b.name.slice(1)));
      const step = (width - left - 16) / members.length;
      members.forEach((node, i) => places.set(node.name, { x: left + step * (i + 0.5), y: 24 + row * rowHeight, node }));
    });
    return { places, generations, height: 24 + Math.max(1, generations.length) * rowHeight };
  }

  draw() {
    const width = Math.max(1, this.canvas.clientWidth);
    const { places, generations, height } = this.layout(width);
    const { ctx, colours } = prepare(this.canvas, height);
    this.hits = [];
    this.positions = places;
    const [low, high] = range(this.nodes.map((n) => n.fitness));
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    ctx.fillStyle = colours.muted;
    generations.forEach((generation, row) => ctx.fillText(`gen ${generation}`, 4, 24 + row * 56));
    ctx.strokeStyle = colours.line;
    ctx.lineWidth = 1;
    for (const { x, y, node } of places.values()) {
      const parent = node.parent && places.get(node.parent);
      if (!parent) continue;
      ctx.beginPath();
      ctx.moveTo(parent.x, parent.y);
      ctx.lineTo(x, y);
      ctx.stroke();
    }
    const radius = Math.max(4, Math.min(11, (width - 60) / Math.max(1, this.maxRow(places)) / 3));
    for (const { x, y, node } of places.values()) {
      const scored = typeof node.fitness === "number" && node.status === "evaluated";
      ctx.beginPath();
      ctx.arc(x, y, radius, 0, 2 * Math.PI);
      ctx.fillStyle = scored ? fitnessColor((node.fitness - low) / (high - low)) : UNSCORED;
      ctx.fill();
      ctx.lineWidth = node.name === this.selected ? 3 : node.name === this.best ? 2 : 1;
      ctx.strokeStyle = node.name === this.selected ? "#c2410c" : node.name === this.best ? "#1f5fbf" : "#777";
      ctx.stroke();
      if (radius >= 6) {
        ctx.fillStyle = colours.text;
        ctx.textAlign = "center";
        ctx.fillText(node.name, x, y + radius + 8);
      }
      this.hits.push({ name: node.name, x0: x - radius - 2, x1: x + radius + 2, y0: y - radius - 2, y1: y + radius + 2 });
    }
  }

  maxRow(places) {
    const counts = new Map();
    for (const { node } of places.values()) counts.set(node.generation, (counts.get(node.generation) || 0) + 1);
    return Math.max(1, ...counts.values());
  }
}
