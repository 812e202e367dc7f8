// The runs page at /runs: test runs as `atlas test run` reports them (`get_test_runs`), polled
// each second while a run is under way: each phone's test and step, each test's result and the
// model calls the graph saved, one test's steps with their screenshots. Text goes in as text.
"use strict";

const TEXT = {
  zh: {
    title: "测试运行", viewer: "图谱浏览器", runs: "运行", run: "运行", suite: "测试集", tests: "用例",
    passed: "通过", failed: "失败", errors: "错误", running: "运行中", modelCalls: "模型调用",
    saved: "图谱节省的调用", state: "状态", devices: "设备", device: "设备", test: "用例", step: "步骤",
    steps: "步骤", seconds: "秒", message: "说明", ended: "已结束", live: "进行中", none: "还没有运行",
    idle: "空闲", pending: "等待", lost: "设备丢失次数",
  },
  en: {
    title: "Test runs", viewer: "Graph viewer", runs: "Runs", run: "Run", suite: "Suite", tests: "Tests",
    passed: "Passed", failed: "Failed", errors: "Errors", running: "Running", modelCalls: "Model calls",
    saved: "Calls the graph saved", state: "State", devices: "Phones", device: "Phone", test: "Test", step: "Step",
    steps: "Steps", seconds: "s", message: "Message", ended: "ended", live: "live", none: "No runs yet",
    idle: "idle", pending: "pending", lost: "lost with a phone",
  },
};
let lang = localStorage.getItem("atlas-lang") || "zh";
const t = (key) => (TEXT[lang] && TEXT[lang][key]) || key;
const el = Atlas.el;

function translate() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  document.getElementById("lang").textContent = lang === "zh" ? "English" : "中文";
}

async function call(tool, input) {
  const response = await Atlas.request("/api/v1/" + tool, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(input),
  });
  const body = await response.json();
  if (!response.ok) throw new Error((body.error && body.error.message) || response.statusText);
  return body;
}

function params() {
  return new URLSearchParams(location.search);
}

function go(run, test, from) {
  const p = new URLSearchParams();
  if (run) p.set("run", run);
  if (test) p.set("test", test);
  if (from) p.set("from", from);
  history.pushState(null, "", "/runs" + (p.toString() ? "?" + p : ""));
  refresh();
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function state(status) {
  return el("span", { class: "state-" + status }, t(status));
}

async function showRuns() {
  const { runs } = await call("get_test_runs", {});
  document.getElementById("runs-view").hidden = false;
  document.getElementById("run-view").hidden = true;
  const rows = runs.map((r) =>
    el("tr", {},
      el("td", {}, el("a", { href: "?run=" + encodeURIComponent(r.run_id), onclick: (e) => { e.preventDefault(); go(r.run_id); } }, r.run_id)),
      el("td", {}, r.suite),
      el("td", { class: "num" }, r.summary.tests),
      el("td", { class: "num" }, r.summary.passed),
      el("td", { class: "num" }, r.summary.failed),
      el("td", { class: "num" }, r.summary.errors),
      el("td", { class: "num" }, r.summary.running),
      el("td", { class: "num" }, r.summary.model_calls),
      el("td", { class: "num" }, r.summary.graph_steps),
      el("td", {}, r.ended_at ? t("ended") : t("live"))));
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: 10 }, t("none"))));
  fill(document.querySelector("#runs tbody"), rows);
  return runs.some((r) => !r.ended_at);
}

async function showRun(runId, testName, from) {
  const input = { run_id: runId };
  if (testName) input.test = testName;
  if (testName && from > 0) input.steps_from = from;
  const { runs } = await call("get_test_runs", input);
  const run = runs[0];
  document.getElementById("runs-view").hidden = true;
  document.getElementById("run-view").hidden = false;
  document.getElementById("run-title").textContent = run.suite + " · " + run.run_id;
  const s = run.summary;
  document.getElementById("run-summary").textContent =
    `${s.tests} ${t("tests")}: ${s.passed} ${t("passed")}, ${s.failed} ${t("failed")}, ${s.errors} ${t("errors")}, ${s.running} ${t("running")} · ${t("modelCalls")} ${s.model_calls} · ${t("saved")} ${s.graph_steps} · ${run.ended_at ? t("ended") : t("live")}`;
  fill(document.querySelector("#devices tbody"), run.devices.map((d) =>
    el("tr", { "data-device": d.device },
      el("td", {}, d.device),
      el("td", {}, d.test || t("idle")),
      el("td", { class: "num" }, d.step ?? ""))));
  fill(document.querySelector("#tests tbody"), run.tests.map((x) => {
    const r = x.result || {};
    return el("tr", { "data-test": x.name },
      el("td", {}, el("a", { href: "?run=" + encodeURIComponent(run.run_id) + "&test=" + encodeURIComponent(x.name), onclick: (e) => { e.preventDefault(); go(run.run_id, x.name); } }, x.name)),
      el("td", {}, state(x.status), x.lost ? ` (${t("lost")}: ${x.lost})` : ""),
      el("td", {}, x.device || ""),
      el("td", { class: "num" }, r.steps ?? ""),
      el("td", { class: "num" }, r.model_calls ?? ""),
      el("td", { class: "num" }, r.graph_steps ?? ""),
      el("td", { class: "num" }, r.seconds !== undefined ? r.seconds.toFixed(1) : ""),
      el("td", {}, x.status === "passed" ? "" : (r.message || "")));
  }));
  const chosen = testName && run.tests.find((x) => x.name === testName);
  document.getElementById("test-view").hidden = !chosen;
  if (chosen) {
    document.getElementById("test-title").textContent = chosen.name;
    // The server answers a page of steps at a time (get_test_runs' steps_from).
    const first = Math.min(from || 0, chosen.steps_total);
    const last = first + chosen.steps.length;
    const page = (at, label) => el("a", { href: "#", onclick: (e) => { e.preventDefault(); go(run.run_id, chosen.name, at); } }, label);
    document.getElementById("steps-page").replaceChildren(
      first > 0 ? page(Math.max(0, first - 100), "←") : "",
      ` ${chosen.steps_total ? first + 1 : 0}–${last} / ${chosen.steps_total} `,
      last < chosen.steps_total ? page(last, "→") : "");
    document.getElementById("steps").replaceChildren(...chosen.steps.map((step) =>
      el("figure", { class: "by-" + (step.chosen_by || "pending") },
        step.screenshot ? el("img", { alt: t("step") + " " + step.step, src: "data:image/png;base64," + step.screenshot }) : null,
        el("figcaption", {},
          el("b", {}, step.step + ". "),
          el("span", { class: "by" }, step.chosen_by || "…"), " ",
          el("code", {}, step.action || ""),
          step.page ? el("div", {}, step.page) : null))));
  }
  return !run.ended_at;
}

let timer = null;
async function refresh() {
  clearTimeout(timer);
  const p = params();
  let live = false;
  try {
    live = p.get("run") ? await showRun(p.get("run"), p.get("test"), Number(p.get("from")) || 0) : await showRuns();
    document.getElementById("live").textContent = live ? t("live") : "";
  } catch (e) {
    document.getElementById("live").textContent = String(e.message || e);
  }
  // Polled while something runs; a finished page stays as it is.
  timer = setTimeout(refresh, live ? 1000 : 5000);
}

document.getElementById("lang").addEventListener("click", () => {
  lang = lang === "zh" ? "en" : "zh";
  localStorage.setItem("atlas-lang", lang);
  translate();
  refresh();
});
window.addEventListener("popstate", refresh);
translate();
refresh();
