// Example podracing bot in JavaScript, Node's standard library only (Node 18+).
// It speaks protocol v1 exactly like the Python SDK: signed requests (Standard Webhooks style, v2
// signatures bound to method and path, replayed ids refused), GET /health and POST /turn, which
// shows the protocol does not depend on Python.
//
//   ARENA_BOT_SECRET=whsec_... node examples/bots/js/podracing_bot.js --port 8083
//   ARENA_BOT_SECRET=whsec_... node examples/bots/js/podracing_bot.js --unix-socket /tmp/bot.sock
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const http = require("node:http");

const TOLERANCE_S = 300; // how old a request may be
const MAX_FUTURE_SKEW_S = 30; // how far ahead of our clock a timestamp may be
const MAX_SEEN_IDS = 100000; // replay memory; when full of live ids, refuse (503) rather than forget
const MAX_BODY = 1000000;

function secretKey(secret) {
  if (!secret || !secret.startsWith("whsec_")) throw new Error("ARENA_BOT_SECRET must start with whsec_");
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  if (key.length < 24) throw new Error("secret too short");
  return key;
}

// Message ids accepted within the window, with the time they stop mattering (timestamp + window).
const seenIds = new Map();

// Returns null when the request is properly signed (v2: method and path included) and fresh,
// else [status, reason]. `target` is the request target exactly as on the request line.
function checkSignature(key, method, target, headers, body) {
  const id = headers["webhook-id"];
  const ts = headers["webhook-timestamp"];
  const sigs = headers["webhook-signature"];
  if (!id || !ts || !sigs) return [401, "missing signature headers"];
  if (!/^\d{1,12}$/.test(ts) || id.length > 256) return [401, "bad timestamp or id"];
  const now = Date.now() / 1000;
  if (Number(ts) < now - TOLERANCE_S) return [401, "stale timestamp"];
  if (Number(ts) > now + MAX_FUTURE_SKEW_S) return [401, "timestamp in the future"];
  const mac = crypto.createHmac("sha256", key);
  mac.update(`${id}.${ts}.${method.toUpperCase()}.${target}.`);
  mac.update(body);
  const expected = mac.digest();
  let valid = false;
  for (const candidate of sigs.split(" ")) {
    const [version, value] = candidate.split(",", 2);
    if (version !== "v2" || !value) continue;
    const given = Buffer.from(value, "base64");
    if (given.length === expected.length && crypto.timingSafeEqual(given, expected)) valid = true;
  }
  if (!valid) return [401, "no valid v2 signature"];
  for (const [seenId, expiry] of seenIds) {
    if (expiry < now) seenIds.delete(seenId); // ids expire in insertion order, near enough
    else break;
  }
  if (seenIds.has(id)) return [401, "replayed request"];
  if (seenIds.size >= MAX_SEEN_IDS) {
    for (const [seenId, expiry] of seenIds) if (expiry < now) seenIds.delete(seenId);
    if (seenIds.size >= MAX_SEEN_IDS) return [503, "too many requests to check for replays"];
  }
  seenIds.set(id, Number(ts) + TOLERANCE_S);
  return null;
}

// The policy: each pod aims at its next checkpoint, corrected for drift; the first pod boosts once.
function drivePod(pod, obs, mayBoost) {
  const cps = obs.checkpoints;
  const target = cps[pod.next_checkpoint % cps.length];
  const aimX = target[0] - 3 * pod.vx;
  const aimY = target[1] - 3 * pod.vy;
  const wanted = (Math.atan2(aimY - pod.y, aimX - pod.x) * 180) / Math.PI;
  const error = Math.abs((((wanted - pod.angle + 180) % 360) + 360) % 360 - 180);
  const distance = Math.hypot(target[0] - pod.x, target[1] - pod.y);
  const maxThrust = obs.max_thrust || 100;
  let thrust;
  if (mayBoost && pod.boost_available && error < 5 && distance > 5000) thrust = "BOOST";
  else if (error > 90) thrust = 0;
  else thrust = Math.round(maxThrust * Math.cos((error * Math.PI) / 180));
  return { x: Math.round(aimX), y: Math.round(aimY), thrust };
}

function decide(obs) {
  return { pods: obs.pods.map((pod, i) => drivePod(pod, obs, i === 0)) };
}

function reply(res, status, payload) {
  const data = Buffer.from(JSON.stringify(payload));
  res.writeHead(status, { "content-type": "application/json", "content-length": data.length });
  res.end(data);
}

function main() {
  const key = secretKey(process.env.ARENA_BOT_SECRET);
  const args = process.argv.slice(2);
  const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const server = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(chunk);
    });
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const path = (req.url || "").split("?")[0];
      if (path !== "/health" && path !== "/turn") return reply(res, 404, { error: "not found" });
      const refused = checkSignature(key, req.method || "", req.url || "", req.headers, body);
      if (refused) return reply(res, refused[0], { error: `bad signature: ${refused[1]}` });
      if (path === "/health") return reply(res, 200, { status: "ok" });
      if (req.method !== "POST") return reply(res, 405, { error: "/turn expects POST" });
      let request;
      try {
        request = JSON.parse(body.toString("utf8"));
      } catch (err) {
        return reply(res, 400, { error: "body is not JSON" });
      }
      if (!request || request.protocol !== 1 || typeof request.observation !== "object") {
        return reply(res, 400, { error: "unsupported request" });
      }
      try {
        return reply(res, 200, { action: decide(request.observation) });
      } catch (err) {
        return reply(res, 500, { error: String(err).slice(0, 300) });
      }
    });
  });
  server.keepAliveTimeout = 60000;
  const socketPath = opt("--unix-socket");
  if (socketPath) {
    if (fs.existsSync(socketPath)) fs.unlinkSync(socketPath);
    server.listen(socketPath);
  } else {
    server.listen(Number(opt("--port") || 8083), opt("--host") || "127.0.0.1");
  }
}

main();
