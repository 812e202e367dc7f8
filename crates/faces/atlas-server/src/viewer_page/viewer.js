// The viewer: every figure on it comes from Atlas's tools (get_graph_stats, get_app_graph,
// get_page_details, query_path, get_next_action, get_ways), Dify's dataset list, the business graph and
// the live event stream; graphs are kept in graphology (graph-model.js) and drawn with sigma.js
// (WebGL, graph-lib.js) where the browser has WebGL, else on a 2D canvas (graph-canvas.js), all
// served by Atlas too. Its state is kept in window.atlasViewer, which the browser tests read.
"use strict";

const { Graph } = window.AtlasGraphModel;

// ---- words ---------------------------------------------------------------------------------

const WORDS = {
  zh: {
    skip: "跳到内容", title: "Atlas 图谱浏览器", chat: "业务图谱对话", testRuns: "测试运行", apps: "应用", app: "应用",
    pages: "页面", transitions: "转换", intents: "意图", reports: "上报", lastHour: "近一小时上报",
    trust: "信任", checked: "次核对", wrongAnswers: "次错", doubted: "（此页上次核对出错，暂不直接执行）", trustColumn: "信任（下界）",
    successRate: "平均成功率", updated: "最近更新", knowledge: "知识库", business: "业务图谱",
    askChat: "在对话页提问 →", searchLabel: "按名称找页面", searchPlaceholder: "按名称找页面（按 / 聚焦）",
    legendHigh: "成功 ≥98%", legendGood: "90–98%", legendFlaky: "75–90%", legendLow: "<75%", legendUnused: "未使用", legendWidth: "线宽、页面大小 = 使用次数", legendHome: "首页",
    graphLabel: "应用的页面图：点击页面查看详情", pageTab: "页面", askTab: "问路",
    intentLabel: "意图（中文或英文）", intentPlaceholder: "例如：点外卖", askPath: "查询路径", askNext: "下一步操作",
    noApps: "还没有应用。用 add_page 添加页面，或 atlas serve --demo 载入示例。",
    noDatasets: "没有知识库。", documents: "篇文档", words: "字",
    bizCounts: (b) => `${b.processes} 个流程 · ${b.implementations} 个实现 · ${b.resources} 个数据资源`,
    bizEmpty: "业务图谱为空。",
    shown: (n, total, e) => `显示 ${n} / ${total} 个页面，${e} 条转换`,
    truncated: "（只显示离首页最近的页面；选择页面可看其邻域）",
    pickPage: "点击图中的页面，或用上方搜索框找页面。Tab 键可逐个浏览操作。",
    type: "类型", depth: "离首页步数", visited: "识别为此页的画面", arrivals: "到达次数", departures: "操作使用次数", folder: "文件夹", screenshot: "截图",
    widgets: "控件", actionsOut: "可用操作", actionsIn: "从这些页面到达", servedIntents: "服务的意图",
    recent: "最近上报", none: "无", unreachable: "首页不可达", success: "成功", failure: "失败",
    uses: "次", ms: "毫秒", seconds: "秒", from: "从", fromHome: "从首页出发（可先在图中选择页面）",
    fromPage: (name) => `从「${name}」出发`, pathFound: "主路径", alternative: "备选路径", steps: "步",
    confidence: "置信度", estimated: "预计用时", noPath: "没有找到路径", nextAction: "下一步",
    complete: "已在目标页面，任务完成", basis: "依据", remaining: "剩余步数", live: (n) => `● 实时 ${n}`,
    liveOff: "○ 连接中…", tokenPrompt: "这个 Atlas 需要令牌 / This Atlas needs a token",
    failed: "请求失败", home: "首页", target: "目标页面",
    nearOnly: "（所选页面两步以内的页面）", focusOn: "只看所选页面的邻域", focusOff: "显示整个应用", pickFirst: "请先选择一个页面",
    versionFrom: "比较版本", versionTo: "到", compare: "显示变化", compareOff: "隐藏变化", changesTab: "变化",
    legendAdded: "新增", legendChanged: "有变化", legendRemoved: "已移除", legendUnchecked: "未核对", legendSame: "未变",
    goneIn: (v) => `已于版本 ${v} 移除（保留为历史，不再用于规划路径）`,
    diffCounts: (p) => `新增 ${p.added.length} 页 · 变化 ${p.changed.length} · 移除 ${p.removed.length} · 未变 ${p.unchanged} · 未核对 ${p.unchecked.length}`,
    diffTransitions: (tr) => `转换：新增 ${tr.added.length} · 移除 ${tr.removed.length} · 保留 ${tr.kept}`,
    pagesAdded: "新增的页面", pagesChanged: "有变化的页面", pagesRemoved: "移除的页面", pagesUnchecked: "未核对的页面（新版本中尚未见到）",
    titleChanged: "标题", textsAdded: "新文字", textsRemoved: "去掉的文字", actionsAdded: "新操作", actionsRemoved: "去掉的操作",
    transitionsAdded: "新增的转换", transitionsRemoved: "移除的转换", intentPaths: "路径有变化的意图", noWay: "（无路径）",
    waysTab: "记住的路径", noWays: "还没有记住的路径：智能体完成的任务会被记住，下次直接重放。",
    wayRecord: (w) => `确认 ${w.confirmed} 次（本版本 ${w.confirmed_here}，经判定 ${w.judged ?? 0}）· 重放经过 ${w.passed} · 偏离 ${w.parted} · 置信度 ${percent(w.confidence)}`,
    wayRun: (r) => `${r.session_id}：${{ passed: "判定通过", claimed: "仅智能体自称完成", failed: "判定失败" }[r.outcome] || r.outcome}${r.verdict?.judge ? `（${r.verdict.judge}${r.verdict.reason ? `：${r.verdict.reason}` : ""}）` : ""}`,
    wayReplays: "下次直接重放", wayHeld: (why) => `暂不重放：${why}`, wayDoubted: (n) => `从第 ${n} 步起存疑`,
    showWay: "在图中显示", forgetHint: (app, key) => `忘记这条路径：atlas forget-way ${app} ${key}（或 forget_way 工具）`,
    canvasNote: "此浏览器没有 WebGL：图用 2D 画布绘制（比有 GPU 的 WebGL 慢）",
  },
  en: {
    skip: "Skip to content", title: "Atlas graph viewer", chat: "Business graph chat", testRuns: "Test runs", apps: "Apps", app: "App",
    pages: "Pages", transitions: "Transitions", intents: "Intents", reports: "Reports", lastHour: "Reports, last hour",
    trust: "trust", checked: "checked", wrongAnswers: "wrong", doubted: "(its last check here was wrong: asks the model)", trustColumn: "Trust (lower bound)",
    successRate: "Mean success rate", updated: "Last updated", knowledge: "Knowledge bases", business: "Business graph",
    askChat: "Ask on the chat page →", searchLabel: "Find a page by name", searchPlaceholder: "Find a page by name (press /)",
    legendHigh: "succeeds ≥98%", legendGood: "90–98%", legendFlaky: "75–90%", legendLow: "<75%", legendUnused: "unused", legendWidth: "width, page size = uses", legendHome: "home page",
    graphLabel: "The app's pages: click one for its details", pageTab: "Page", askTab: "Ask",
    intentLabel: "Intent (Chinese or English)", intentPlaceholder: "e.g. order food", askPath: "Find the path", askNext: "Next action",
    noApps: "No apps yet. Add pages with add_page, or start atlas serve --demo.",
    noDatasets: "No knowledge bases.", documents: "documents", words: "words",
    bizCounts: (b) => `${b.processes} processes · ${b.implementations} implementations · ${b.resources} data resources`,
    bizEmpty: "The business graph is empty.",
    shown: (n, total, e) => `${n} of ${total} pages, ${e} transitions`,
    truncated: " (the pages nearest the home page; select a page to see its neighbourhood)",
    pickPage: "Click a page in the graph, or find one with the search box. Tab walks through its actions.",
    type: "Type", depth: "Steps from home", visited: "Screens recognised", arrivals: "Arrivals", departures: "Uses of its actions", folder: "Folder", screenshot: "Screenshot",
    widgets: "Widgets", actionsOut: "Actions", actionsIn: "Reached from", servedIntents: "Intents served",
    recent: "Recent reports", none: "none", unreachable: "not reachable from home", success: "succeeded", failure: "failed",
    uses: "uses", ms: "ms", seconds: "s", from: "from", fromHome: "From the home page (select a page to start elsewhere)",
    fromPage: (name) => `From “${name}”`, pathFound: "Path", alternative: "Alternative", steps: "steps",
    confidence: "confidence", estimated: "estimated", noPath: "No path found", nextAction: "Next action",
    complete: "Already on the target page: done", basis: "basis", remaining: "steps left", live: (n) => `● live ${n}`,
    liveOff: "○ connecting…", tokenPrompt: "This Atlas needs a token / 这个 Atlas 需要令牌",
    failed: "Request failed", home: "home", target: "target",
    nearOnly: " (the pages within two steps of the selected one)", focusOn: "Only the selected page's neighbourhood", focusOff: "The whole app", pickFirst: "Select a page first",
    versionFrom: "Compare version", versionTo: "to", compare: "Show changes", compareOff: "Hide changes", changesTab: "Changes",
    legendAdded: "added", legendChanged: "changed", legendRemoved: "removed", legendUnchecked: "unchecked", legendSame: "same",
    goneIn: (v) => `Gone in version ${v} (kept as history, on no route)`,
    diffCounts: (p) => `${p.added.length} pages added · ${p.changed.length} changed · ${p.removed.length} removed · ${p.unchanged} the same · ${p.unchecked.length} unchecked`,
    diffTransitions: (tr) => `Transitions: ${tr.added.length} added · ${tr.removed.length} removed · ${tr.kept} kept`,
    pagesAdded: "Pages added", pagesChanged: "Pages changed", pagesRemoved: "Pages removed", pagesUnchecked: "Pages unchecked (not yet seen in the newer version)",
    titleChanged: "Title", textsAdded: "Texts added", textsRemoved: "Texts removed", actionsAdded: "Actions added", actionsRemoved: "Actions removed",
    transitionsAdded: "Transitions added", transitionsRemoved: "Transitions removed", intentPaths: "Intents whose way changed", noWay: "(no way)",
    waysTab: "Ways", noWays: "No remembered ways yet: a task an agent finishes is remembered, and replayed on its next run.",
    wayRecord: (w) => `confirmed ${w.confirmed} (this version ${w.confirmed_here}, judged ${w.judged ?? 0}) · replays passed ${w.passed} · parted ${w.parted} · confidence ${percent(w.confidence)}`,
    wayRun: (r) => `${r.session_id}: ${{ passed: "passed by a verdict", claimed: "claimed by its agent alone", failed: "failed by a verdict" }[r.outcome] || r.outcome}${r.verdict?.judge ? ` (${r.verdict.judge}${r.verdict.reason ? `: ${r.verdict.reason}` : ""})` : ""}`,
    wayReplays: "replayed on the next run", wayHeld: (why) => `not replayed: ${why}`, wayDoubted: (n) => `doubted from step ${n}`,
    showWay: "Show on the graph", forgetHint: (app, key) => `To forget it: atlas forget-way ${app} ${key} (or the forget_way tool)`,
    canvasNote: "This browser has no WebGL: the graph is drawn on a 2D canvas (slower than WebGL on a GPU)",
  },
};
let lang = localStorage.getItem("atlas-lang") || "zh";
const t = (key, ...args) => {
  const word = WORDS[lang][key] ?? WORDS.zh[key] ?? key;
  return typeof word === "function" ? word(...args) : word;
};

function translatePage() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.title = t("title") + " · Atlas";
  for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  for (const node of document.querySelectorAll("[data-tp]")) node.placeholder = t(node.dataset.tp);
  for (const node of document.querySelectorAll("[data-t-aria]")) node.setAttribute("aria-label", t(node.dataset.tAria));
  document.getElementById("lang").textContent = lang === "zh" ? "English" : "中文";
}

// ---- the API -------------------------------------------------------------------------------

const request = (path, options = {}) => Atlas.request(path, options, t("tokenPrompt"));

async function call(tool, body) {
  const response = await request("/api/v1/" + tool, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(answer.error?.message || answer.message || `${tool}: HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return answer;
}

async function getJson(path) {
  const response = await request(path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

// Images behind the token cannot be plain <img src>: they are fetched and shown as blobs.
const imageUrls = new Map();
async function imageUrl(path) {
  if (!Atlas.hasToken()) return path;
  if (!imageUrls.has(path)) {
    imageUrls.set(path, request(path).then((r) => (r.ok ? r.blob() : Promise.reject(new Error(r.status)))).then((b) => URL.createObjectURL(b)));
  }
  return imageUrls.get(path);
}

// ---- helpers -------------------------------------------------------------------------------

const el = Atlas.el;

// Replaces a node's children, leaving out the absent ones (replaceChildren would write "null").
function fill(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

const percent = (rate) => (rate * 100).toFixed(0) + "%";
function rateClass(used, rate) {
  if (!used) return "none";
  return rate >= 0.8 ? "good" : rate >= 0.5 ? "mid" : "bad";
}
function rateSpan(step) {
  const used = step.success_count + step.fail_count;
  return el("span", { class: "rate " + rateClass(used, step.success_rate) }, used ? percent(step.success_rate) : "—");
}
function showError(error) {
  const message = document.getElementById("message");
  message.hidden = !error;
  message.textContent = error ? `${t("failed")}: ${error.message || error}` : "";
}
const actionLabel = (a) => [a.action_type, a.widget_text || a.widget_id].filter(Boolean).join(" ");

// A page named in a list, a button that goes to it.
const goButton = (pageId, name) =>
  el("button", { type: "button", class: "go", "data-page": pageId, onclick: () => navigate(viewer.appId, pageId) }, name || pageId);

// ---- state ---------------------------------------------------------------------------------

// Pages beyond which an app is large: drawn smaller, labels hidden while moving, and its
// neighbourhood view offered.
const LARGE_APP = 2000;

const viewer = (window.atlasViewer = {
  view: "loading",
  appId: null,
  selected: null,
  nodes: 0,
  edges: 0,
  totalPages: 0,
  truncated: false,
  highlighted: { pages: [], transitions: [] },
  liveEvents: 0,
  flashing: 0,
  errors: [],
  timing: {},
  rendered: false,
  pageDetails: null,
  answer: null,
  // The app's versions, oldest first, and the changes between two drawn (get_app_diff).
  versions: [],
  diff: null,
});
window.addEventListener("error", (e) => viewer.errors.push(String(e.message)));

let sigma = null;
let graph = null;

// ---- the drawing ---------------------------------------------------------------------------

// sigma.js's library (window.AtlasGraphLib) once loaded, where the browser has WebGL; without
// it the graph is drawn on a 2D canvas. The library is loaded only after WebGL answered,
// because its modules create WebGL resources as they load and would throw without it.
let webgl = null;
const drawingReady = loadDrawing();

async function loadDrawing() {
  if (webglWorks()) {
    await new Promise((resolve) => {
      const script = document.createElement("script");
      script.src = "/viewer/graph-lib.js";
      script.onload = script.onerror = resolve;
      document.head.append(script);
    });
    webgl = window.AtlasGraphLib || null;
  }
  setDrawing(webgl ? "webgl" : "canvas");
}

function webglWorks() {
  try {
    const gl = document.createElement("canvas").getContext("webgl2");
    return !!gl && typeof gl.getParameter(gl.MAX_TEXTURE_SIZE) === "number";
  } catch {
    return false;
  }
}

function setDrawing(kind) {
  viewer.drawing = kind;
  document.getElementById("drawing-note").hidden = kind !== "canvas";
}

// The renderer of `graph` in `container`: sigma.js, else (no WebGL, or sigma failed to start)
// the 2D canvas, which takes the same settings.
function makeRenderer(container, settings) {
  if (webgl) {
    try {
      return new webgl.Sigma(graph, container, {
        ...settings,
        defaultEdgeType: "arrow",
        edgeProgramClasses: { arrow: webgl.EdgeArrowProgram },
        nodeProgramClasses: { image: webgl.createNodeImageProgram({ size: { mode: "force", value: 128 } }) },
      });
    } catch (error) {
      console.warn("WebGL drawing failed, drawing on a 2D canvas:", error);
      webgl = null;
      container.replaceChildren();
      setDrawing("canvas");
    }
  }
  return new window.AtlasCanvasGraph.CanvasRenderer(graph, container, settings);
}
const flashUntil = new Map();
let highlight = { pages: new Set(), main: new Set(), alt: new Set() };
let neighbours = new Set();

// ---- apps ----------------------------------------------------------------------------------

async function showApps() {
  viewer.view = "apps";
  viewer.rendered = false;
  destroyGraph();
  document.getElementById("apps-view").hidden = false;
  document.getElementById("app-view").hidden = true;
  document.getElementById("crumbs").replaceChildren();
  const [stats, datasets, business] = await Promise.all([
    call("get_graph_stats", {}),
    getJson("/v1/datasets?limit=100").catch(() => ({ data: [] })),
    getJson("/api/v1/business-graph").catch(() => null),
  ]);
  const body = document.querySelector("#apps tbody");
  body.replaceChildren();
  if (!stats.by_app.length) body.append(el("tr", {}, el("td", { colspan: 9 }, t("noApps"))));
  for (const app of stats.by_app) {
    body.append(
      el("tr", { "data-app": app.app_id },
        el("th", { scope: "row" }, el("a", { href: "#/app/" + encodeURIComponent(app.app_id) }, app.app_id)),
        el("td", { class: "num" }, app.pages),
        el("td", { class: "num" }, app.transitions),
        el("td", { class: "num" }, app.intents),
        el("td", { class: "num", "data-field": "reports" }, app.reports),
        el("td", { class: "num", "data-field": "last-hour" }, app.reports_last_hour ?? 0),
        el("td", { class: "num" }, percent(app.avg_success_rate)),
        el("td", { "data-field": "trust" }, (app.trust || []).map((v) =>
          (v.version ? v.version + " " : "") + trustLabel(v)).join("; ") || t("none")),
        el("td", {}, (app.last_updated || "").replace("T", " ").slice(0, 19)),
      ),
    );
  }
  const list = document.getElementById("datasets");
  list.replaceChildren(
    ...(datasets.data || []).map((d) =>
      el("li", {}, el("strong", {}, d.name), ` · ${d.document_count ?? 0} ${t("documents")} · ${d.word_count ?? 0} ${t("words")}`),
    ),
  );
  if (!list.children.length) list.append(el("li", { class: "muted" }, t("noDatasets")));
  const counts = business && {
    processes: (business.businesses || []).length,
    implementations: (business.implementations || []).length,
    resources: (business.data_resources || []).length,
  };
  document.getElementById("business").textContent =
    counts && counts.processes + counts.implementations + counts.resources ? t("bizCounts", counts) : t("bizEmpty");
  viewer.apps = stats.by_app.map((a) => a.app_id);
  viewer.rendered = true;
}

// What an app's record lets the graph be trusted with: the kind of answer, the lower bound of its
// precision (the fast path acts at 0.95 and above), and the checks it rests on.
function trustLabel(trust) {
  const doubt = trust.doubted ? ` ${t("doubted")}` : "";
  return `${t("trust")} ${trust.kind} ${trust.bound.toFixed(2)} (${trust.checked} ${t("checked")}, ${trust.wrong} ${t("wrongAnswers")})${doubt}`;
}

// ---- an app's graph ------------------------------------------------------------------------

function destroyGraph() {
  if (sigma) sigma.kill();
  sigma = null;
  graph = null;
}

// Success rates in buckets, for an action and for a page (its actions' uses together): taken
// almost always, mostly, flaky, failing; grey when never used. Buckets rather than a gradient,
// because agents' actions mostly succeed: a gradient painted nearly every edge the same green.
const RATE_BUCKETS = [[0.98, "#2e7d32"], [0.9, "#8bc34a"], [0.75, "#f9a825"], [0, "#c62828"]];
const UNUSED = "#9aa3b2";
function rateColor(success, fail) {
  const used = success + fail;
  if (!used) return UNUSED;
  return RATE_BUCKETS.find(([floor]) => success / used >= floor)[1];
}
const edgeColor = rateColor;
// What a release removed: kept in the graph as history, drawn pale.
const GONE = "#d3d7de";

// A page's colour: blue for home, else its actions' uses together in the same buckets, as the
// server counted them (every action of the page, also those to pages a neighbourhood leaves out).
const pageColor = (pageId, home, success, fail) => (pageId === home ? "#1a4fd6" : rateColor(success, fail));

// Where a node's label goes, in viewport pixels: beside the disc, which is drawn a little wider
// than its size says (clear it by half as much again).
const labelOrigin = (data, fontSize) => ({ x: data.x + data.size * 1.5 + 4, y: data.y + fontSize / 3 });

// A label beside its node, clear of it, on a halo that keeps it readable over the edges.
function drawLabel(context, data, settings) {
  if (!data.label) return;
  const size = settings.labelSize;
  context.font = `${settings.labelWeight} ${size}px ${settings.labelFont}`;
  const { x, y } = labelOrigin(data, size);
  context.lineWidth = 3;
  context.strokeStyle = "rgba(250, 251, 253, 0.9)";
  context.strokeText(data.label, x, y);
  context.fillStyle = "#1b2333";
  context.fillText(data.label, x, y);
}

// A selected or hovered page: its label on a card, where its plain label is (sigma's own card
// sits elsewhere and would leave the label written twice).
function drawHover(context, data, settings) {
  if (!data.label) return;
  const size = settings.labelSize;
  context.font = `${settings.labelWeight} ${size}px ${settings.labelFont}`;
  const { x, y } = labelOrigin(data, size);
  const width = context.measureText(data.label).width;
  context.fillStyle = "#ffffff";
  context.shadowColor = "rgba(0, 0, 0, 0.3)";
  context.shadowBlur = 6;
  context.fillRect(x - 4, y - size, width + 8, size + 6);
  context.shadowBlur = 0;
  drawLabel(context, data, settings);
}
const edgeSize = (success, fail) => 0.6 + Math.min(4, 0.5 * Math.log2(1 + success + fail));

// Hierarchical from the home page, left to right: a column per depth (wrapped into several
// columns when it is tall), each page placed near the pages that lead to it.
function layout(pages, transitions) {
  const parents = new Map();
  for (const tr of transitions) {
    if (!parents.has(tr.to_page)) parents.set(tr.to_page, []);
    parents.get(tr.to_page).push(tr.from_page);
  }
  const layers = new Map();
  const deepest = Math.max(0, ...pages.map((p) => p.depth ?? 0));
  for (const page of pages) {
    const d = page.depth ?? deepest + 1;
    if (!layers.has(d)) layers.set(d, []);
    layers.get(d).push(page);
  }
  const rows = Math.max(14, Math.ceil(Math.sqrt(pages.length / 2)));
  const position = new Map();
  let column = 0;
  for (const d of [...layers.keys()].sort((a, b) => a - b)) {
    const layer = layers.get(d);
    const weight = (page) => {
      const ys = (parents.get(page.page_id) || []).map((p) => position.get(p)?.y).filter((y) => y !== undefined);
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : 0;
    };
    const keyed = layer.map((p) => [weight(p), -(p.arrivals + p.departures), p]);
    keyed.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const perColumn = Math.min(rows, keyed.length);
    keyed.forEach(([, , page], i) => {
      const c = Math.floor(i / perColumn);
      const r = i % perColumn;
      position.set(page.page_id, { x: (column + c) * 1.2 + d * 2.4, y: -(r - (perColumn - 1) / 2) });
    });
    column += Math.ceil(keyed.length / perColumn);
  }
  return position;
}

// `crowd`: how many pages are drawn; a large app's pages are drawn smaller, so that its
// overview shows its shape rather than a blot.
function nodeAttributes(page, home, crowd) {
  const scale = crowd > 2000 ? 0.35 : crowd > 300 ? 0.6 : 1;
  // Sized by traffic: the uses of the actions that reach it and leave it.
  const size = scale * (page.page_id === home ? 12 : 4 + Math.min(8, Math.log2(1 + page.arrivals + page.departures) / 2));
  const [success, fail] = [page.successful_departures, page.departures - page.successful_departures];
  return {
    label: page.page_name,
    size,
    color: page.gone_in ? GONE : pageColor(page.page_id, home, success, fail),
    goneIn: page.gone_in,
    success,
    fail,
    depth: page.depth,
    pageType: page.page_type,
  };
}

async function showApp(appId, pageId) {
  viewer.view = "app";
  document.getElementById("apps-view").hidden = true;
  document.getElementById("app-view").hidden = false;
  document.getElementById("crumbs").replaceChildren(el("a", { href: "#/" }, t("apps")), " / ", appId);
  if (viewer.appId !== appId || !graph) await drawApp(appId);
  if (pageId) await selectPage(pageId, true);
  else renderPagePanel(null);
}

async function drawApp(appId) {
  // Another app: nothing of the last one's lights, path or comparison carries over.
  if (viewer.appId !== appId) {
    viewer.diff = null;
    highlight = { pages: new Set(), main: new Set(), alt: new Set() };
    viewer.highlighted = { pages: [], transitions: [] };
  }
  neighbours = new Set();
  viewer.appId = appId;
  viewer.selected = null;
  viewer.rendered = false;
  viewer.focus = false;
  const started = performance.now();
  const answer = await call("get_app_graph", { app_id: appId });
  const fetched = performance.now();
  mount(answer);
  // Time to first render: the request, the layout and sigma's first frame on screen.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  viewer.timing = {
    fetchMs: Math.round(fetched - started),
    firstRenderMs: Math.round(performance.now() - started),
    pages: answer.pages.length,
    transitions: answer.transitions.length,
  };
  viewer.rendered = true;
  connectLive();
}

// Draws an answer of get_app_graph: the whole app, or a page's neighbourhood.
function mount(answer) {
  destroyGraph();
  graph = new Graph({ multi: true, type: "directed" });
  const position = layout(answer.pages, answer.transitions);
  for (const page of answer.pages) {
    graph.addNode(page.page_id, { ...nodeAttributes(page, answer.home_page, answer.pages.length), ...position.get(page.page_id) });
  }
  for (const tr of answer.transitions) addEdge(tr);
  viewer.home = answer.home_page;
  markTree();
  // An app of many transitions draws the way each page is first reached from home (its
  // breadth-first tree), a large app's overview its pages alone; every other edge shows once one
  // of its pages is selected, asked about or reported on.
  viewer.sparse = answer.transitions.length > 3000 ? (answer.pages.length > LARGE_APP ? "pages" : "tree") : null;
  viewer.totalPages = answer.total_pages;
  viewer.truncated = answer.truncated;
  showVersions(answer.versions || []);
  const focus = document.getElementById("focus");
  focus.hidden = answer.total_pages <= LARGE_APP;
  focus.setAttribute("aria-pressed", viewer.focus ? "true" : "false");
  focus.textContent = t(viewer.focus ? "focusOff" : "focusOn");
  updateCounts();
  const container = document.getElementById("graph");
  sigma = makeRenderer(container, {
    renderEdgeLabels: false,
    labelFont: "system-ui, 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', sans-serif",
    labelRenderedSizeThreshold: answer.pages.length > 500 ? 9 : 4,
    // One label a 36-pixel cell: every page of a small app is named (the layout keeps them
    // apart); a large app's overview keeps sigma's 100, so that it names what has room.
    labelGridCellSize: answer.pages.length > 500 ? 100 : 36,
    defaultDrawNodeLabel: drawLabel,
    defaultDrawNodeHover: drawHover,
    // While the camera moves, a large graph is drawn without its edges and labels.
    hideEdgesOnMove: answer.transitions.length > 5000,
    hideLabelsOnMove: answer.pages.length > LARGE_APP,
    zIndex: true,
    nodeReducer,
    edgeReducer,
  });
  sigma.on("clickNode", ({ node }) => navigate(viewer.appId, node));
  sigma.on("enterNode", () => (container.style.cursor = "pointer"));
  sigma.on("leaveNode", () => (container.style.cursor = ""));
  for (const page of answer.pages.filter((p) => p.screenshot).slice(0, 300)) {
    imageUrl(page.screenshot)
      .then((url) => graph?.hasNode(page.page_id) && graph.mergeNodeAttributes(page.page_id, { type: "image", image: url, size: 14 }))
      .catch(() => {});
  }
}

// Marks, for each page, one edge from a page a step nearer home: together, the tree that the
// hierarchical layout draws.
function markTree() {
  graph.forEachNode((node, attributes) => {
    if (!attributes.depth) return;
    const parent = graph.findInboundEdge(node, (_, __, source) => graph.getNodeAttribute(source, "depth") === attributes.depth - 1);
    if (parent) graph.setEdgeAttribute(parent, "tree", true);
  });
}

function addEdge(tr) {
  if (!graph.hasNode(tr.from_page) || !graph.hasNode(tr.to_page) || graph.hasEdge(tr.transition_id)) return;
  graph.addDirectedEdgeWithKey(tr.transition_id, tr.from_page, tr.to_page, {
    success: tr.success_count,
    fail: tr.fail_count,
    label: tr.widget_text,
    size: edgeSize(tr.success_count, tr.fail_count),
    color: tr.gone_in ? GONE : edgeColor(tr.success_count, tr.fail_count),
    goneIn: tr.gone_in,
  });
}

function updateCounts() {
  viewer.nodes = graph.order;
  viewer.edges = graph.size;
  document.getElementById("graph-counts").textContent =
    t("shown", graph.order, viewer.totalPages, graph.size) + (viewer.focus ? t("nearOnly") : viewer.truncated ? t("truncated") : "");
}

function nodeReducer(node, data) {
  const out = { ...data };
  if (viewer.diff) out.color = DIFF_COLOURS[viewer.diff.pages.get(node) || "same"];
  const lit = highlight.pages.size > 0;
  if (node === viewer.selected) {
    out.highlighted = true;
    out.zIndex = 2;
    out.size = data.size + 4;
  } else if (highlight.pages.has(node)) {
    out.zIndex = 1;
    out.size = data.size + 2;
    out.color = "#1a4fd6";
    out.forceLabel = true;
  } else if ((viewer.selected && !neighbours.has(node)) || lit) {
    out.color = "#d5d9e2";
    out.label = "";
    out.zIndex = 0;
  } else if (viewer.selected) {
    out.forceLabel = neighbours.size <= 40;
  }
  return out;
}

function edgeReducer(edge, data) {
  const out = { ...data };
  if ((flashUntil.get(edge) || 0) > performance.now()) {
    out.color = "#ffb300";
    out.size = data.size + 4;
    out.zIndex = 3;
    return out;
  }
  const [from, to] = graph.extremities(edge);
  const touchesSelected = from === viewer.selected || to === viewer.selected;
  const shown = viewer.sparse === "tree" ? data.tree : !viewer.sparse;
  if (!shown && !touchesSelected && !highlight.main.has(edge) && !highlight.alt.has(edge)) {
    out.hidden = true;
    return out;
  }
  if (viewer.diff) {
    const kind = viewer.diff.transitions.get(edge);
    out.color = DIFF_COLOURS[kind || "same"];
    if (kind) out.size = data.size + 1;
  }
  if (highlight.main.has(edge)) {
    out.color = "#1a4fd6";
    out.size = data.size + 3;
    out.zIndex = 2;
  } else if (highlight.alt.has(edge)) {
    out.color = "#8e44ad";
    out.size = data.size + 1.5;
    out.zIndex = 1;
  } else if (highlight.pages.size || (viewer.selected && !touchesSelected)) {
    out.color = "#e3e6ec";
  }
  return out;
}

// ---- a page --------------------------------------------------------------------------------

function navigate(appId, pageId) {
  const hash = "#/app/" + encodeURIComponent(appId) + (pageId ? "/page/" + encodeURIComponent(pageId) : "");
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function selectPage(pageId, moveCamera) {
  let details;
  try {
    details = await call("get_page_details", { app_id: viewer.appId, page_id: pageId });
  } catch (error) {
    showError(error);
    return;
  }
  if (graph && (viewer.focus || !graph.hasNode(pageId))) {
    // Looking closely, or beyond what was drawn (a very large app): this page's neighbourhood.
    viewer.focus = true;
    await drawNeighbourhood(pageId);
  }
  viewer.selected = pageId;
  neighbours = new Set(graph ? [pageId, ...graph.neighbors(pageId)] : []);
  viewer.pageDetails = details;
  renderPagePanel(details);
  sigma?.refresh();
  if (moveCamera && sigma && graph.hasNode(pageId)) {
    const position = sigma.getNodeDisplayData(pageId);
    if (position) sigma.getCamera().animate({ x: position.x, y: position.y, ratio: Math.min(sigma.getCamera().ratio, graph.order > 200 ? 0.15 : 1) }, { duration: 300 });
  }
  updateAskFrom();
}

// A page and the pages within two steps of it, alone: how a large app is looked at closely
// (and, without a GPU, quickly).
async function drawNeighbourhood(pageId) {
  mount(await call("get_app_graph", { app_id: viewer.appId, center: pageId, radius: 2 }));
}

function stepList(steps, otherField) {
  if (!steps.length) return el("p", { class: "muted" }, t("none"));
  return el("ul", { class: "steps" },
    steps.map((s) =>
      el("li", { "data-transition": s.transition_id },
        rateSpan(s), " ",
        actionLabel(s), " → ",
        goButton(s[otherField], s.other_page_name),
        el("span", { class: "muted" }, ` · ${s.success_count + s.fail_count} ${t("uses")}` + (s.avg_latency_ms ? ` · ${Math.round(s.avg_latency_ms)} ${t("ms")}` : "")),
      ),
    ),
  );
}

function renderPagePanel(details) {
  const panel = document.getElementById("page-panel");
  if (!details) {
    panel.replaceChildren(el("p", { class: "muted" }, t("pickPage")));
    return;
  }
  const shot = el("div", { id: "shot" });
  if (details.screenshot) {
    imageUrl(details.screenshot).then((url) => shot.replaceChildren(el("img", { class: "shot", src: url, alt: t("screenshot") + ": " + details.page_name }))).catch(() => {});
  }
  fill(panel,
    el("h2", { id: "page-title" }, details.page_name),
    el("p", { class: "muted" },
      `${t("type")}: ${details.page_type} · ${t("depth")}: ${details.depth ?? t("unreachable")}`),
    el("p", { class: "muted", id: "page-traffic" },
      `${t("arrivals")}: ${details.arrivals} · ${t("departures")}: ${details.departures} · ${t("visited")}: ${details.visited_count}`),
    graph?.hasNode(details.page_id) && graph.getNodeAttribute(details.page_id, "goneIn")
      ? el("p", { class: "gone", id: "page-gone" }, t("goneIn", graph.getNodeAttribute(details.page_id, "goneIn")))
      : null,
    pageChange(details.page_id),
    details.description ? el("p", {}, details.description) : null,
    el("p", { class: "muted" }, el("code", {}, details.page_id)),
    shot,
    el("h3", {}, t("servedIntents")),
    details.intents.length
      ? el("div", { class: "chips", id: "page-intents" }, details.intents.map((i) => el("span", {}, i.intent_text)))
      : el("p", { class: "muted" }, t("none")),
    el("h3", {}, `${t("actionsOut")} (${details.actions.length})`),
    el("div", { id: "page-actions" }, stepList(details.actions, "to_page")),
    el("h3", {}, `${t("actionsIn")} (${details.incoming.length})`),
    stepList(details.incoming, "from_page"),
    el("h3", {}, `${t("widgets")} (${details.widgets.length})`),
    details.widgets.length
      ? el("div", { class: "chips" }, details.widgets.slice(0, 80).map((w) => el("span", { title: w.id }, `${w.type || "?"} ${w.text || w.id}`)))
      : el("p", { class: "muted" }, t("none")),
    el("h3", {}, t("recent")),
    el("ul", { class: "steps", id: "page-reports" },
      details.recent_reports.length
        ? details.recent_reports.map((r) => el("li", {}, `${r.at.slice(11, 19)} · ${actionLabel(r)} · ${r.failed ? t("failure") : t("success")}` + (r.reports > 1 ? ` ×${r.reports}` : "")))
        : el("li", { class: "muted" }, t("none")),
    ),
    details.folder ? [el("h3", {}, t("folder")), el("code", { class: "path" }, details.folder)] : null,
  );
}

// ---- ask -----------------------------------------------------------------------------------

function updateAskFrom() {
  const from = viewer.selected && graph?.hasNode(viewer.selected) ? graph.getNodeAttribute(viewer.selected, "label") : null;
  document.getElementById("ask-from").textContent = from ? t("fromPage", from) : t("fromHome");
}

function edgeOf(step) {
  if (!graph || !graph.hasNode(step.from_page) || !graph.hasNode(step.expected_page)) return null;
  const edges = graph.edges(step.from_page, step.expected_page);
  return edges.find((e) => graph.getEdgeAttribute(e, "label") === step.widget_text) || edges[0] || null;
}

function pathBox(kind, title, info) {
  return el("div", { class: "path-box " + kind },
    el("strong", {}, title), " ",
    el("span", { class: "muted" }, `${info.total_steps} ${t("steps")} · ${t("estimated")} ${(info.estimated_time_ms / 1000).toFixed(1)} ${t("seconds")}` + (info.confidence !== undefined ? ` · ${t("confidence")} ${percent(info.confidence)}` : "")),
    info.reason ? el("p", { class: "muted" }, info.reason) : null,
    el("ol", { class: "steps" },
      info.steps.map((s) =>
        el("li", { "data-page": s.expected_page },
          `${actionLabel(s)} → `,
          goButton(s.expected_page, s.expected_page_name),
          el("span", { class: "muted" }, ` · ${t("confidence")} ${percent(s.confidence)}`),
        ),
      ),
    ),
  );
}

async function askPath(event) {
  event.preventDefault();
  const intent = document.getElementById("intent").value.trim();
  if (!intent) return;
  const body = { app_id: viewer.appId, intent };
  if (viewer.selected) body.current_page = viewer.selected;
  const out = document.getElementById("answer");
  let answer;
  try {
    answer = await call("query_path", body);
  } catch (error) {
    out.replaceChildren(el("p", { class: "error" }, error.message));
    return;
  }
  viewer.answer = answer;
  highlight = { pages: new Set(), main: new Set(), alt: new Set() };
  const mark = (steps, set) => {
    for (const s of steps) {
      highlight.pages.add(s.from_page);
      highlight.pages.add(s.expected_page);
      const edge = edgeOf(s);
      if (edge) set.add(edge);
    }
  };
  if (answer.path) mark(answer.path.steps, highlight.main);
  for (const alt of answer.alternatives) mark(alt.steps, highlight.alt);
  viewer.highlighted = { pages: [...highlight.pages], transitions: [...highlight.main], alternatives: [...highlight.alt] };
  sigma?.refresh();
  fill(out,
    el("p", { id: "answer-message" }, answer.message, answer.target_page ? ` · ${t("target")}: ${answer.target_page.page_name}` : ""),
    answer.path ? pathBox("main", t("pathFound"), { ...answer.path, confidence: answer.confidence }) : el("p", { class: "error" }, t("noPath")),
    answer.alternatives.map((alt) => pathBox("alt", t("alternative"), alt)),
  );
}

async function askNext() {
  const intent = document.getElementById("intent").value.trim();
  if (!intent) {
    document.getElementById("intent").reportValidity();
    return;
  }
  const out = document.getElementById("answer");
  const from = viewer.selected || viewer.home;
  let answer;
  try {
    answer = await call("get_next_action", { app_id: viewer.appId, current_page: from, intent });
  } catch (error) {
    out.replaceChildren(el("p", { class: "error" }, error.message));
    return;
  }
  viewer.answer = answer;
  highlight = { pages: new Set([from]), main: new Set(), alt: new Set() };
  if (answer.action?.expected_page) {
    highlight.pages.add(answer.action.expected_page);
    const edge = edgeOf({ ...answer.action, from_page: from });
    if (edge) highlight.main.add(edge);
  }
  viewer.highlighted = { pages: [...highlight.pages], transitions: [...highlight.main], alternatives: [] };
  sigma?.refresh();
  const a = answer.action;
  fill(out,
    el("div", { class: "path-box main", id: "next-action" },
      el("strong", {}, t("nextAction")), " ",
      answer.is_complete ? t("complete") : a ? `${actionLabel(a)} → ${a.expected_page ? graph?.getNodeAttribute(a.expected_page, "label") ?? a.expected_page : "?"}` : answer.error || t("noPath"),
      el("p", { class: "muted" },
        [a ? `${t("confidence")} ${percent(a.confidence)}` : null, answer.basis ? `${t("basis")}: ${answer.basis}` : null,
          answer.remaining_steps !== undefined ? `${t("remaining")}: ${answer.remaining_steps}` : null,
          answer.trust ? trustLabel(answer.trust) : null].filter(Boolean).join(" · ")),
      a?.description ? el("p", {}, a.description) : null,
    ),
  );
}

// ---- live ----------------------------------------------------------------------------------

let live = null;

async function connectLive() {
  if (live) live.abort();
  const controller = (live = new AbortController());
  const indicator = document.getElementById("live");
  const scope = viewer.view === "app" && viewer.appId ? "?app_id=" + encodeURIComponent(viewer.appId) : "";
  while (!controller.signal.aborted) {
    indicator.textContent = t("liveOff");
    try {
      const response = await request("/api/v1/events" + scope, { signal: controller.signal, headers: { Accept: "text/event-stream" } });
      if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
      indicator.textContent = t("live", viewer.liveEvents);
      // An event the page cannot show is passed over, not a reason to drop the stream.
      await Atlas.readEvents(response, (event) => {
        try { onEvent(event); } catch (_) { /* passed over */ }
      });
    } catch (_) {
      if (controller.signal.aborted) return;
    }
    // The server ends the stream of a client that fell behind: come back and carry on.
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
}

function onEvent(event) {
  viewer.liveEvents += 1;
  document.getElementById("live").textContent = t("live", viewer.liveEvents);
  if (viewer.view === "apps") {
    const row = document.querySelector(`#apps tr[data-app="${CSS.escape(event.app_id)}"]`);
    if (row && event.type === "report") {
      for (const field of ["reports", "last-hour"]) {
        const cell = row.querySelector(`[data-field="${field}"]`);
        cell.textContent = Number(cell.textContent) + 1;
      }
      row.classList.add("flash");
      setTimeout(() => row.classList.remove("flash"), 1200);
    } else if (!row && event.type === "app") {
      showApps();
    }
    return;
  }
  if (!graph || event.app_id !== viewer.appId) return;
  if (event.type === "page" && !graph.hasNode(event.page_id)) {
    const x = Math.max(...graph.mapNodes((_, a) => a.x)) + 2;
    graph.addNode(event.page_id, { label: event.page_name, size: 6, color: UNUSED, success: 0, fail: 0, x, y: (graph.order % 20) - 10 });
  } else if (event.type === "report" || event.type === "transition") {
    // The page's uses grow as its action's did: by the edge's drawn counts, or by the one report.
    const edge = graph.hasEdge(event.transition_id) ? graph.getEdgeAttributes(event.transition_id) : null;
    if (event.type === "report" && graph.hasNode(event.from_page)) {
      const grew = (now, before) => Math.max(0, (now || 0) - before);
      const page = graph.getNodeAttributes(event.from_page);
      const [success, fail] = edge
        ? [page.success + grew(event.success_count, edge.success), page.fail + grew(event.fail_count, edge.fail)]
        : [page.success + (event.success ? 1 : 0), page.fail + (event.success ? 0 : 1)];
      graph.mergeNodeAttributes(event.from_page, { success, fail, color: pageColor(event.from_page, viewer.home, success, fail) });
    }
    if (edge) {
      graph.mergeEdgeAttributes(event.transition_id, {
        success: event.success_count,
        fail: event.fail_count,
        size: edgeSize(event.success_count, event.fail_count),
        color: edgeColor(event.success_count, event.fail_count),
      });
    } else {
      addEdge({ ...event, success_count: event.success_count || 0, fail_count: event.fail_count || 0 });
    }
    if (graph.hasEdge(event.transition_id)) {
      flashUntil.set(event.transition_id, performance.now() + 1500);
      viewer.flashing += 1;
      viewer.lastFlashed = event.transition_id;
      setTimeout(() => sigma?.refresh(), 1600);
    }
  }
  updateCounts();
  sigma?.refresh();
  if (event.type === "report" && viewer.selected && (event.from_page === viewer.selected || event.to_page === viewer.selected)) {
    selectPage(viewer.selected, false);
  }
}

// ---- frame time ----------------------------------------------------------------------------

// Pans and zooms the camera for `ms` and measures the frames the browser drew meanwhile: what
// the benchmark of a large app reads (window.atlasViewer.measureFrames()).
// For tests and for people at the console: where a page is drawn (pixels within #graph), an
// edge's counts as drawn, how many pages show their screenshot.
viewer.sigma = () => sigma;
viewer.nodePosition = (id) => (sigma && graph?.hasNode(id) ? sigma.graphToViewport(graph.getNodeAttributes(id)) : null);
viewer.edge = (id) => (graph?.hasEdge(id) ? graph.getEdgeAttributes(id) : null);
// The boxes of the labels drawn now, in viewport pixels (the browser tests check that none
// overlaps another).
viewer.labelBoxes = () => {
  if (!sigma) return [];
  const settings = sigma.getSettings();
  const context = document.createElement("canvas").getContext("2d");
  context.font = `${settings.labelWeight} ${settings.labelSize}px ${settings.labelFont}`;
  return [...sigma.getNodeDisplayedLabels()].map((node) => {
    const data = sigma.getNodeDisplayData(node);
    const at = sigma.framedGraphToViewport(data);
    const { x, y } = labelOrigin({ ...at, size: sigma.scaleSize(data.size) }, settings.labelSize);
    const label = graph.getNodeAttribute(node, "label");
    return { node, label, x, y: y - settings.labelSize, width: context.measureText(label).width, height: settings.labelSize };
  });
};
viewer.imageNodes = () => (graph ? graph.filterNodes((_, a) => a.type === "image").length : 0);
viewer.measureFrames = (ms = 2000) =>
  new Promise((resolve) => {
    if (!sigma) return resolve(null);
    const camera = sigma.getCamera();
    const frames = [];
    const start = performance.now();
    let last = start;
    const step = (now) => {
      frames.push(now - last);
      last = now;
      const phase = (now - start) / ms;
      camera.setState({ x: 0.5 + 0.3 * Math.sin(phase * 2 * Math.PI), y: 0.5 + 0.2 * Math.cos(phase * 2 * Math.PI), ratio: 0.4 + 0.5 * phase });
      if (now - start < ms) requestAnimationFrame(step);
      else {
        frames.sort((a, b) => a - b);
        const mean = frames.reduce((a, b) => a + b, 0) / frames.length;
        resolve({ frames: frames.length, meanMs: +mean.toFixed(2), p95Ms: +frames[Math.floor(frames.length * 0.95)].toFixed(2) });
      }
    };
    requestAnimationFrame(step);
  });

// The script's own share of a frame: sigma's render() at the camera states measureFrames passes
// through, without waiting for the GPU (or, without one, the CPU's WebGL) to raster it.
viewer.measureRender = (n = 20) => {
  if (!sigma) return null;
  const camera = sigma.getCamera();
  const times = [];
  for (let i = 0; i < n; i++) {
    const phase = i / n;
    camera.setState({ x: 0.5 + 0.3 * Math.sin(phase * 2 * Math.PI), y: 0.5 + 0.2 * Math.cos(phase * 2 * Math.PI), ratio: 0.4 + 0.5 * phase });
    const started = performance.now();
    sigma.render();
    times.push(performance.now() - started);
  }
  return +(times.reduce((a, b) => a + b, 0) / n).toFixed(2);
};

// ---- versions ------------------------------------------------------------------------------

// Colours of a comparison: what the newer version added, changed and removed, what nothing has
// checked in it yet, and what is the same (pale, so that the changes stand out).
const DIFF_COLOURS = { added: "#00897b", changed: "#ef6c00", removed: "#c62828", unchecked: "#9aa3b2", same: "#dfe4ec" };

// The version pickers, shown for an app of two versions or more: by default the one before the
// current, and the current.
function showVersions(versions) {
  viewer.versions = versions;
  const box = document.getElementById("versions");
  box.hidden = versions.length < 2;
  document.getElementById("legend").hidden = !!viewer.diff;
  document.getElementById("diff-legend").hidden = !viewer.diff;
  document.getElementById("tab-changes").hidden = !viewer.diff;
  const compare = document.getElementById("compare");
  compare.setAttribute("aria-pressed", viewer.diff ? "true" : "false");
  compare.textContent = t(viewer.diff ? "compareOff" : "compare");
  if (box.hidden) return;
  const pick = (id, fallback) => {
    const select = document.getElementById(id);
    const keep = versions.includes(select.value) ? select.value : fallback;
    select.replaceChildren(...versions.map((v) => el("option", { value: v }, v)));
    select.value = keep;
  };
  pick("version-from", versions[versions.length - 2]);
  pick("version-to", versions[versions.length - 1]);
}

// Colours the graph by what changed between the two versions picked (get_app_diff).
async function compareVersions() {
  const diff = await call("get_app_diff", {
    app_id: viewer.appId,
    from_version: document.getElementById("version-from").value,
    to_version: document.getElementById("version-to").value,
  });
  const pages = new Map();
  for (const [kind, list] of [["added", diff.pages.added], ["removed", diff.pages.removed], ["unchecked", diff.pages.unchecked]]) {
    for (const p of list) pages.set(p.page_id, kind);
  }
  for (const c of diff.pages.changed) pages.set(c.page.page_id, "changed");
  const transitions = new Map();
  for (const tr of diff.transitions.added) transitions.set(tr.transition_id, "added");
  for (const tr of diff.transitions.removed) transitions.set(tr.transition_id, "removed");
  viewer.diff = { answer: diff, pages, transitions };
  showVersions(viewer.versions);
  renderChanges(diff);
  setTab("changes");
  sigma?.refresh();
  if (viewer.pageDetails) renderPagePanel(viewer.pageDetails);
}

async function hideChanges() {
  viewer.diff = null;
  showVersions(viewer.versions);
  setTab("page");
  sigma?.refresh();
  if (viewer.pageDetails) renderPagePanel(viewer.pageDetails);
}

// A list of pages, each a link to it.
// A page of a comparison in a list: its colour, a button to it, and what follows.
const pageItem = (page, kind, ...rest) =>
  el("li", {}, el("span", { class: "swatch " + kind }), " ", goButton(page.page_id, page.page_name), ...rest);

function pageLinks(pages, kind) {
  return el("ul", { class: "steps diff-" + kind },
    pages.map((p) => pageItem(p, kind, p.url ? el("span", { class: "muted" }, " " + p.url) : null)));
}

// What changed in one page: its title, texts and actions.
function changeLines(change) {
  const line = (key, items) => (items?.length ? el("li", {}, `${t(key)}: ${items.join(" · ")}`) : null);
  const lines = [
    change.title ? el("li", {}, `${t("titleChanged")}: ${change.title[0]} → ${change.title[1]}`) : null,
    line("textsAdded", change.texts_added),
    line("textsRemoved", change.texts_removed),
    line("actionsAdded", change.actions_added),
    line("actionsRemoved", change.actions_removed),
  ].filter(Boolean);
  return el("ul", { class: "changes" }, lines);
}

// The selected page's changes, when the graph is coloured by a comparison.
function pageChange(pageId) {
  if (!viewer.diff) return null;
  const { answer, pages } = viewer.diff;
  const kind = pages.get(pageId) || "same";
  const change = answer.pages.changed.find((c) => c.page.page_id === pageId);
  return el("div", { id: "page-change", class: "page-change" },
    el("p", {}, el("span", { class: "swatch " + kind }), ` ${answer.from} → ${answer.to}: ${t(LEGEND_KEYS[kind])}`),
    change ? changeLines(change) : null);
}
const LEGEND_KEYS = { added: "legendAdded", changed: "legendChanged", removed: "legendRemoved", unchecked: "legendUnchecked", same: "legendSame" };

const transitionList = (transitions) =>
  el("ul", { class: "steps" }, transitions.map((tr) => el("li", {}, `${tr.from}: ${tr.action} → ${tr.to}`)));

function renderChanges(diff) {
  const way = (steps) => (steps ? steps.join(" → ") : t("noWay"));
  const section = (key, items, body) => (items.length ? [el("h3", {}, `${t(key)} (${items.length})`), body] : null);
  fill(document.getElementById("changes-panel"),
    el("h2", { id: "changes-title" }, `${diff.from} → ${diff.to}`),
    el("p", { class: "muted", id: "changes-counts" }, t("diffCounts", diff.pages)),
    el("p", { class: "muted" }, t("diffTransitions", diff.transitions)),
    section("pagesAdded", diff.pages.added, pageLinks(diff.pages.added, "added")),
    section("pagesChanged", diff.pages.changed, el("ul", { class: "steps diff-changed" },
      diff.pages.changed.map((c) => pageItem(c.page, "changed", changeLines(c))))),
    section("pagesRemoved", diff.pages.removed, pageLinks(diff.pages.removed, "removed")),
    section("pagesUnchecked", diff.pages.unchecked, pageLinks(diff.pages.unchecked, "unchecked")),
    section("transitionsAdded", diff.transitions.added, transitionList(diff.transitions.added)),
    section("transitionsRemoved", diff.transitions.removed, transitionList(diff.transitions.removed)),
    section("intentPaths", diff.intents.path_changed, el("ul", { class: "steps", id: "changes-intents" },
      diff.intents.path_changed.map((c) => el("li", {}, el("strong", {}, c.intent), el("br"),
        el("span", { class: "muted" }, "− " + way(c.from)), el("br"), "+ " + way(c.to))))),
  );
}

// ---- routes and keys -----------------------------------------------------------------------

async function route() {
  await drawingReady;
  showError(null);
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    if (parts[0] === "app" && parts[1]) {
      const wasApps = viewer.view !== "app";
      await showApp(parts[1], parts[2] === "page" ? parts[3] : null);
      if (wasApps && !live) connectLive();
    } else {
      await showApps();
      connectLive();
    }
  } catch (error) {
    showError(error);
  }
}

// ---- remembered ways -----------------------------------------------------------------------

// The app's remembered ways (get_ways), each with its own record: what the fast path replays.
async function showWays() {
  const panel = document.getElementById("ways-panel");
  const answer = await call("get_ways", { app_id: viewer.appId });
  viewer.ways = answer.ways;
  if (!answer.ways.length) {
    fill(panel, el("p", { class: "muted" }, t("noWays")));
    return;
  }
  fill(panel, el("ol", { class: "ways", id: "ways" }, answer.ways.map((way) => {
    const w = way.record;
    return el("li", { "data-way": w.way },
      el("strong", {}, w.task), " ",
      el("span", { class: "muted" }, `${w.steps} ${t("steps")}`),
      el("p", { class: "muted" }, t("wayRecord", w)),
      el("p", { class: w.replay ? "replays" : "held" },
        w.replay ? t("wayReplays") : t("wayHeld", w.held || ""),
        w.doubted_from !== undefined && w.doubted_from !== null ? ` · ${t("wayDoubted", w.doubted_from + 1)}` : ""),
      el("ol", { class: "steps" }, way.steps.map((s) =>
        el("li", { "data-page": s.to_page }, `${actionLabel(s)}${s.input_text ? ` “${s.input_text}”` : ""} → `, goButton(s.to_page, pageName(s.to_page))))),
      el("ul", { class: "runs muted" }, (way.runs || []).map((r) => el("li", { "data-outcome": r.outcome }, t("wayRun", r)))),
      el("button", { type: "button", onclick: () => highlightWay(way) }, t("showWay")),
      el("p", { class: "muted" }, el("code", {}, t("forgetHint", viewer.appId, w.way))),
    );
  })));
}

// A page's name as the graph draws it (its id where it is not drawn).
const pageName = (pageId) => (graph?.hasNode(pageId) ? graph.getNodeAttribute(pageId, "label") : pageId);

// Lights a way's pages and transitions on the graph, as a path is lit.
function highlightWay(way) {
  highlight = { pages: new Set(), main: new Set(), alt: new Set() };
  for (const s of way.steps) {
    highlight.pages.add(s.from_page);
    highlight.pages.add(s.to_page);
    const edge = edgeOf({ from_page: s.from_page, expected_page: s.to_page, widget_text: s.widget_text });
    if (edge) highlight.main.add(edge);
  }
  viewer.highlighted = { pages: [...highlight.pages], transitions: [...highlight.main] };
  sigma?.refresh();
}

function setTab(name) {
  if (name === "ways") showWays().catch(showError);
  for (const [tab, panel] of [["tab-page", "page-panel"], ["tab-ask", "ask-panel"], ["tab-changes", "changes-panel"], ["tab-ways", "ways-panel"]]) {
    const on = tab === "tab-" + name;
    document.getElementById(tab).setAttribute("aria-selected", on);
    document.getElementById(panel).hidden = !on;
  }
}

const search = document.getElementById("search");
const results = document.getElementById("search-results");
search.addEventListener("input", () => {
  const query = search.value.trim().toLowerCase();
  results.replaceChildren();
  if (!query || !graph) return;
  // Exact names first, then names that start with the query, then the rest.
  const rank = (label) => (label === query ? 0 : label.startsWith(query) ? 1 : 2);
  const found = graph
    .filterNodes((_, a) => (a.label || "").toLowerCase().includes(query))
    .map((id) => [rank(graph.getNodeAttribute(id, "label").toLowerCase()), id])
    .sort((a, b) => a[0] - b[0])
    .slice(0, 20)
    .map(([, id]) => id);
  highlight = { pages: new Set(found), main: new Set(), alt: new Set() };
  sigma?.refresh();
  for (const id of found) {
    results.append(el("li", { role: "option" }, el("button", { type: "button", "data-page": id, onclick: () => { results.replaceChildren(); highlight.pages.clear(); navigate(viewer.appId, id); } }, graph.getNodeAttribute(id, "label"))));
  }
});
search.addEventListener("keydown", (e) => {
  if (e.key === "Enter") results.querySelector("button")?.click();
  if (e.key === "ArrowDown") results.querySelector("button")?.focus();
  if (e.key === "Escape") { search.value = ""; results.replaceChildren(); highlight.pages.clear(); sigma?.refresh(); }
});
results.addEventListener("keydown", (e) => {
  const item = document.activeElement.closest("li");
  if (e.key === "ArrowDown") item?.nextElementSibling?.querySelector("button")?.focus();
  if (e.key === "ArrowUp") (item?.previousElementSibling?.querySelector("button") || search).focus();
});
document.addEventListener("keydown", (e) => {
  if (e.key === "/" && document.activeElement.tagName !== "INPUT") {
    e.preventDefault();
    search.focus();
  }
});
document.getElementById("focus").addEventListener("click", async () => {
  try {
    if (viewer.focus) {
      const selected = viewer.selected;
      await drawApp(viewer.appId);
      if (selected) await selectPage(selected, true);
    } else if (viewer.selected) {
      viewer.focus = true;
      await selectPage(viewer.selected, true);
    } else {
      showError(new Error(t("pickFirst")));
    }
  } catch (error) {
    showError(error);
  }
});
document.getElementById("tab-page").addEventListener("click", () => setTab("page"));
document.getElementById("tab-ask").addEventListener("click", () => setTab("ask"));
document.getElementById("tab-changes").addEventListener("click", () => setTab("changes"));
document.getElementById("tab-ways").addEventListener("click", () => setTab("ways"));
document.getElementById("compare").addEventListener("click", () => (viewer.diff ? hideChanges() : compareVersions()).catch(showError));
for (const id of ["version-from", "version-to"]) {
  document.getElementById(id).addEventListener("change", () => viewer.diff && compareVersions().catch(showError));
}
document.getElementById("ask-form").addEventListener("submit", askPath);
document.getElementById("ask-next").addEventListener("click", askNext);
document.getElementById("lang").addEventListener("click", () => {
  lang = lang === "zh" ? "en" : "zh";
  localStorage.setItem("atlas-lang", lang);
  translatePage();
  if (viewer.view === "app") showVersions(viewer.versions);
  if (viewer.diff) renderChanges(viewer.diff.answer);
  route();
});
window.addEventListener("hashchange", route);
translatePage();
route();
