// The chat page: sends the conversation to POST /api/v1/chat, reads its server-sent events
// (tool_call, tool_result, delta, done, error) and shows them; entities found become links to a
// small neighbourhood drawn from get_neighbors. Everything it needs is served by Atlas.
"use strict";

const conversationEl = document.getElementById("conversation");
const entitiesEl = document.getElementById("entities");
const graphEl = document.getElementById("graph");
const form = document.getElementById("ask");
const input = document.getElementById("question");
const sendButton = document.getElementById("send");

let messages = [];
const entities = new Map();
const el = Atlas.el;

function post(path, body) {
  return Atlas.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

const ID_FIELDS = { process_id: "business", impl_id: "implementation", resource_id: "data_resource" };

// Every entity a tool result names: candidates, contexts, neighbours and paths alike.
function collectEntities(value) {
  if (Array.isArray(value)) { value.forEach(collectEntities); return; }
  if (!value || typeof value !== "object") return;
  for (const [field, type] of Object.entries(ID_FIELDS)) {
    if (typeof value[field] === "string" && typeof value.name === "string") addEntity(type, value[field], value.name);
  }
  if (typeof value.id === "string" && typeof value.type === "string" && typeof value.name === "string" && value.type !== "step") {
    addEntity(value.type, value.id, value.name);
  }
  Object.values(value).forEach(collectEntities);
}

function addEntity(type, id, name) {
  const key = type + ":" + id;
  if (entities.has(key)) return;
  if (entities.size === 0) entitiesEl.textContent = "";
  entities.set(key, { type, id, name });
  const chip = el("span", { class: "entity", "data-type": type, "data-id": id, title: type + " " + id }, name + " · " + id);
  chip.addEventListener("click", () => showNeighbours(type, id));
  entitiesEl.appendChild(chip);
}

async function showNeighbours(type, id) {
  graphEl.textContent = "…";
  const response = await post("/api/v1/get_neighbors", { node_type: type, node_id: id, depth: 1 });
  const data = await response.json();
  if (!response.ok) { graphEl.textContent = (data.error && data.error.message) || "error"; return; }
  drawNeighbourhood(data);
}

const COLOURS = { business: "#6c8ef5", step: "#9aa4b5", implementation: "#3aa675", data_resource: "#e3a008" };

function drawNeighbourhood(data) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 340 330");
  svg.setAttribute("data-center", data.center.id);
  const nodes = [data.center];
  for (const group of Object.values(data.neighbors)) nodes.push(...group);
  const place = new Map();
  place.set(data.center.id, [170, 165]);
  const ring = nodes.slice(1);
  ring.forEach((n, i) => {
    const angle = (2 * Math.PI * i) / Math.max(ring.length, 1);
    place.set(n.id, [170 + 125 * Math.cos(angle), 165 + 125 * Math.sin(angle)]);
  });
  for (const e of data.edges) {
    const a = place.get(e.from), b = place.get(e.to);
    if (!a || !b) continue;
    const line = document.createElementNS(ns, "line");
    line.setAttribute("x1", a[0]); line.setAttribute("y1", a[1]);
    line.setAttribute("x2", b[0]); line.setAttribute("y2", b[1]);
    line.setAttribute("stroke", "#c5cbd6");
    const title = document.createElementNS(ns, "title");
    title.textContent = e.edge_type;
    line.appendChild(title);
    svg.appendChild(line);
  }
  for (const n of nodes) {
    const [x, y] = place.get(n.id);
    const g = document.createElementNS(ns, "g");
    g.setAttribute("class", "node");
    g.setAttribute("data-id", n.id);
    const circle = document.createElementNS(ns, "circle");
    circle.setAttribute("cx", x); circle.setAttribute("cy", y);
    circle.setAttribute("r", n === data.center ? 9 : 6);
    circle.setAttribute("fill", COLOURS[n.type] || "#888");
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", x + 8); label.setAttribute("y", y + 3);
    label.textContent = n.name;
    g.appendChild(circle); g.appendChild(label);
    if (n !== data.center && n.type !== "step") g.addEventListener("click", () => showNeighbours(n.type, n.id));
    svg.appendChild(g);
  }
  graphEl.textContent = "";
  graphEl.appendChild(el("div", { class: "hint" }, data.center.name + "（" + data.center.id + "）的一跳邻居"));
  graphEl.appendChild(svg);
}

function pretty(value) {
  return JSON.stringify(value, null, 2);
}

async function ask(question) {
  const turn = el("div", { class: "turn" });
  turn.appendChild(el("div", { class: "user" }, question));
  const reply = el("div", { class: "turn assistant" });
  const answer = el("div", { class: "answer" });
  conversationEl.appendChild(turn);
  conversationEl.appendChild(reply);
  reply.appendChild(answer);
  const calls = new Map();
  messages.push({ role: "user", content: question });
  sendButton.disabled = true;
  try {
    const response = await post("/api/v1/chat", { messages, stream: true });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error((data.error && data.error.message) || response.statusText);
    }
    await Atlas.readEvents(response, handle, () => {
      conversationEl.scrollTop = conversationEl.scrollHeight;
    });
  } catch (e) {
    messages.pop();
    reply.appendChild(el("div", { class: "error" }, "出错了 / failed: " + e.message));
  } finally {
    sendButton.disabled = false;
  }

  function handle(event) {
    if (event.type === "tool_call") {
      const details = el("details", { class: "tool-call", "data-tool": event.name });
      details.appendChild(el("summary", {}, "🔧 " + event.name));
      details.appendChild(el("pre", { class: "arguments" }, pretty(event.arguments)));
      reply.insertBefore(details, answer);
      calls.set(event.id, details);
    } else if (event.type === "tool_result") {
      const details = calls.get(event.id);
      if (details) {
        if (event.is_error) details.classList.add("failed");
        details.querySelector("summary").textContent += event.is_error ? " ✗" : " ✓";
        details.appendChild(el("pre", { class: "result" }, pretty(event.result)));
      }
      if (!event.is_error) collectEntities(event.result);
    } else if (event.type === "delta") {
      answer.textContent += event.content;
    } else if (event.type === "done") {
      answer.textContent = event.content;
      messages = event.messages;
      reply.setAttribute("data-done", "true");
    } else if (event.type === "error") {
      messages.pop();
      reply.appendChild(el("div", { class: "error" }, event.message));
      reply.setAttribute("data-done", "true");
    }
  }
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const question = input.value.trim();
  if (!question) return;
  input.value = "";
  ask(question);
});

document.getElementById("reset").addEventListener("click", () => {
  messages = [];
  conversationEl.textContent = "";
});
