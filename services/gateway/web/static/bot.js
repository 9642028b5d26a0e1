// Bot page: the owner's error samples. The page itself never contains them (they are owner-only
// in the API); the owner pastes an API key, kept in this tab's sessionStorage only, and the
// samples of the matches on this page are fetched from /api/v1/matches with it. Everything a bot
// produced is put on the page as text (textContent), never as markup.

const KEY_STORAGE = "arena.apiKey";

function setStatus(element, text) {
  element.textContent = text;
}

function sampleItems(items, botId) {
  const found = [];
  for (const match of items) {
    const mine = match.participants.find((p) => p.bot_id === botId);
    if (mine && Array.isArray(mine.error_samples)) {
      found.push({ match, samples: mine.error_samples });
    }
  }
  return found;
}

function render(list, root, found) {
  list.replaceChildren();
  for (const { match, samples } of found) {
    if (samples.length === 0) continue;
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = `${root}/matches/${match.id}`;
    link.textContent = `match ${match.id.slice(0, 8)}`;
    item.append(link);
    const inner = document.createElement("ul");
    for (const sample of samples) {
      const line = document.createElement("li");
      const turn = sample && sample.turn !== undefined ? `turn ${sample.turn}: ` : "";
      const text = sample && sample.error !== undefined ? String(sample.error) : JSON.stringify(sample);
      line.textContent = turn + text;
      inner.append(line);
    }
    item.append(inner);
    list.append(item);
  }
}

async function load(form, key) {
  const status = document.querySelector("[data-samples-status]");
  const list = document.querySelector("[data-samples]");
  const botId = form.dataset.botId;
  const root = form.dataset.api.replace(/\/api\/v1\/matches$/, "");
  const query = new URLSearchParams({
    bot_id: botId,
    limit: form.dataset.limit,
    offset: form.dataset.offset,
  });
  setStatus(status, "Loading…");
  let answer;
  try {
    answer = await fetch(`${form.dataset.api}?${query}`, { headers: { "X-API-Key": key } });
  } catch (error) {
    setStatus(status, `The API could not be reached: ${error}`);
    return;
  }
  if (answer.status === 401) {
    sessionStorage.removeItem(KEY_STORAGE);
    setStatus(status, "That API key was refused.");
    list.replaceChildren();
    return;
  }
  if (!answer.ok) {
    setStatus(status, `The API answered ${answer.status}.`);
    return;
  }
  const body = await answer.json();
  const found = sampleItems(body.items, botId);
  if (body.items.length > 0 && found.length === 0) {
    setStatus(status, "This key does not own this bot: its samples are not shown.");
    list.replaceChildren();
    return;
  }
  sessionStorage.setItem(KEY_STORAGE, key);
  render(list, root, found);
  const count = found.reduce((total, entry) => total + entry.samples.length, 0);
  setStatus(status, count ? `${count} error samples in the matches on this page.` : "No errors in the matches on this page.");
}

function start() {
  const form = document.querySelector("form[data-owner-samples]");
  if (!form) return;
  form.hidden = false;
  const input = form.elements.namedItem("api_key");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (key) load(form, key);
  });
  form.querySelector("[data-forget-key]").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORAGE);
    input.value = "";
    document.querySelector("[data-samples]").replaceChildren();
    setStatus(document.querySelector("[data-samples-status]"), "The key is forgotten.");
  });
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) {
    input.value = saved;
    load(form, saved);
  }
}

start();
