// The training runs list (/training), on the shared run list (runs_list.js). The list answer has
// no metrics, so each listed run's latest win rate against the runner comes from its detail
// (GET .../runs/{id}, a few at a time). Progress is against the budget that ends each run (steps
// or training time), and counts on with a running run's elapsed time.

import { cell, numberCell, startRunList } from "./runs_list.js";
import { apiJson, budgetProgress, formatNumber, formatRate } from "./training_api.js";

const DETAIL_REQUESTS_AT_ONCE = 4;

/** "42.0% time": the share of the budget that ends the run, and which budget that is. */
function showProgress(box, run, elapsed) {
  const progress = budgetProgress(run, elapsed);
  box.textContent = `${formatRate(progress.share)} ${progress.by === "time" ? "of time" : "of steps"}`;
  box.title = [progress.text, progress.other].filter(Boolean).join("; ");
  box.dataset.budget = progress.by;
}

function row(run, shared, seconds) {
  const rate = cell("\u2026");
  rate.dataset.winRate = "";
  const progress = cell();
  progress.className = "num";
  showProgress(progress, run, seconds);
  return {
    cells: [
      shared.link,
      shared.status,
      cell(String(run.stage)),
      numberCell(formatNumber(run.iteration)),
      numberCell(formatNumber(run.global_step)),
      progress,
      rate,
      shared.elapsed,
      shared.started,
    ],
    rate,
    tick: (elapsed) => showProgress(progress, run, elapsed),
  };
}

async function winRates(rows, list) {
  const queue = [...rows];
  const worker = async () => {
    while (queue.length) {
      const { run, shown } = queue.shift();
      try {
        const detail = await apiJson(`${list.api}/${encodeURIComponent(run.id)}`);
        shown.rate.textContent = formatRate(detail.latest_metrics?.metrics?.win_rate_runner);
      } catch {
        shown.rate.textContent = "?";
      }
    }
  };
  await Promise.all(Array.from({ length: DETAIL_REQUESTS_AT_ONCE }, worker));
}

startRunList("[data-training-list]", { page: "training", noun: "training runs", row, loaded: winRates });
