"""The viewer at GET / in headless Chromium (Debian's, driven by selenium), against
`atlas serve --demo` (ATLAS_URL) and, when ATLAS_BIG_URL is set, a server on a generated
10,000-page app (`atlas import synthetic --pages 10000`).

On the demo: the apps page lists the demo app with its counts and the knowledge base; the app's
graph renders (a screenshot that is not blank; the page's own state counts 35 pages); clicking a
page shows its actions; the keyboard walks from a page to the next through its actions; asking
点外卖 highlights the path; a report sent over HTTP appears live and flashes its edge; a page's
screenshot (put in its seed 001 folder, as the explorer does) becomes its node's picture; an
app of two versions (written over HTTP) shows what its release removed pale, and compared,
colours its pages and transitions added, changed, removed and the same apart and lists the
changes; the English switch works. Throughout: no request leaves the server's origin and the console shows
no error.

With ATLAS_VIEWER_WEBGL=off the browser has no WebGL (Chromium's --disable-3d-apis, as a
machine without a GPU or a remote desktop): the same checks pass on the viewer's 2D canvas
drawing, and the page says it draws the slower way.

On the large app: it renders whole (10,000 pages), a page is found by name, and the time to
first render and the frame time while panning and zooming are measured, against the demo's in
the same browser (the reference). With ATLAS_VIEWER_SHOTS=DIR, each view is saved as a PNG there
(the pictures of README.md and docs/viewer.md).

Usage: ATLAS_URL=http://127.0.0.1:7700 [ATLAS_BIG_URL=…] [ATLAS_VIEWER_WEBGL=off] python3 viewer_page.py
"""

import json
import os
import struct
import sys
import tempfile
import time
import urllib.request
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

URL = os.environ.get("ATLAS_URL", "http://127.0.0.1:7700").rstrip("/")
BIG_URL = (os.environ.get("ATLAS_BIG_URL") or "").rstrip("/")
BIG_PAGES = int(os.environ.get("ATLAS_BIG_PAGES", "10000"))
SHOTS = os.environ.get("ATLAS_VIEWER_SHOTS")
WEBGL = os.environ.get("ATLAS_VIEWER_WEBGL", "on") != "off"
APP = "com.meituan.app"
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1


def call(base, tool, body):
    request = urllib.request.Request(f"{base}/api/v1/{tool}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def png(width, height, colour):
    """A plain PNG of one colour with a darker band, made without any imaging library."""
    rows = b"".join(
        b"\x00" + bytes((colour if y % 20 > 4 else tuple(c // 2 for c in colour)) * width)
        for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# WebGL on the CPU (SwiftShader), as on a machine without a GPU, or no WebGL at all; a laptop's
# screen.
webgl_flag = "--enable-unsafe-swiftshader" if WEBGL else "--disable-3d-apis"
for flag in ["--headless", "--no-sandbox", "--disable-gpu", webgl_flag, "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--window-size=1280,800", f"--user-data-dir={tempfile.mkdtemp()}"]:
    options.add_argument(flag)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
driver.set_script_timeout(120)
# Each command to the browser may wait past selenium's 120 s on a loaded machine, where CPU
# WebGL draws 10,000 pages in a shared half core; a real failure still ends the run (pytest's
# timeout, the suite's).
driver.command_executor.client_config.timeout = 600
state = lambda expression: driver.execute_script("return " + expression)


def shot(name):
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        driver.save_screenshot(os.path.join(SHOTS, name))


def rendered(view, app=None):
    # `window.atlasViewer` is undefined, not an error, until viewer.js has run: a JavaScript error
    # would end the wait at once (WebDriverWait retries a false answer, not an exception). A new
    # address that differs in its hash only keeps the page: the app asked for must be the one
    # drawn, or the last app's drawing would pass for it.
    same_app = f" && atlasViewer.appId === {json.dumps(app)}" if app else ""
    WebDriverWait(driver, 120).until(
        lambda d: state(f"window.atlasViewer && atlasViewer.rendered && atlasViewer.view === '{view}'{same_app}"))


def same_origin_only(base):
    names = state("performance.getEntriesByType('resource').map(e => e.name)")
    outside = [n for n in names if not (n.startswith(base) or n.startswith("blob:") or n.startswith("data:"))]
    check(not outside, f"no request leaves {base}: {outside}")


def no_console_errors():
    # WebGL on the CPU warns about its speed; anything severe is a fault of the page.
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not severe, f"no console errors: {severe}")


CONTRAST = """
const lum = (c) => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
const opaque = (c) => { const m = c.match(/[\\d.]+/g); return m && (m.length < 4 || Number(m[3]) > 0.5); };
const background = (el) => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor; if (opaque(c)) return c; } return "rgb(255, 255, 255)"; };
const worst = [];
for (const el of document.querySelectorAll("body *")) {
  if (el.closest("[hidden]") || !el.offsetParent || el.tagName === "CANVAS") continue;
  const text = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join("");
  if (!text) continue;
  const style = getComputedStyle(el);
  const [a, b] = [lum(style.color), lum(background(el))];
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.6 && Number(style.fontWeight) >= 700);
  if (ratio < (large ? 3 : 4.5)) worst.push(text.slice(0, 30) + " " + ratio.toFixed(2));
}
return worst;
"""


def readable():
    low = driver.execute_script(CONTRAST)
    check(not low, f"every text at least 4.5:1 against its background (WCAG AA): {low}")
    check(state("document.documentElement.scrollWidth <= window.innerWidth"), "and nothing wider than the window")


# The viewer's success-rate buckets (viewer.js RATE_BUCKETS), to check its colours against the
# server's counts.
BUCKETS = [(0.98, "#2e7d32"), (0.9, "#8bc34a"), (0.75, "#f9a825"), (0, "#c62828")]
UNUSED = "#9aa3b2"
HOME = "#1a4fd6"


def rate_colour(success, used):
    if not used:
        return UNUSED
    return next(colour for floor, colour in BUCKETS if success / used >= floor)


def colours_agree(answer):
    """Whether every drawn page is coloured by its actions' uses as the server counts them
    (`answer` is get_app_graph's, for the pages drawn); the pages that disagree."""
    drawn = state("Object.fromEntries(atlasViewer.sigma().getGraph().mapNodes((n, a) => [n, a.color]))")
    wrong = []
    for page in answer["pages"]:
        expected = HOME if page["page_id"] == answer["home_page"] else rate_colour(page["successful_departures"], page["departures"])
        if drawn.get(page["page_id"]) != expected:
            wrong.append((page["page_name"], drawn.get(page["page_id"]), expected))
    return wrong


def overlapping(boxes):
    """The pairs of label boxes that overlap."""
    pairs = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]:
                pairs.append((a["label"], b["label"]))
    return pairs


def blank(png_bytes):
    """Whether a screenshot of the graph is one colour (nothing drawn)."""
    return len(set(png_bytes[len(png_bytes) // 3: len(png_bytes) // 3 + 4000])) < 8


try:
    wait = WebDriverWait(driver, 30)
    # ---- the apps page
    driver.get(URL + "/")
    rendered("apps")
    check("图谱浏览器" in driver.title, f"a Chinese title: {driver.title}")
    drawing = state("atlasViewer.drawing")
    check(drawing == ("webgl" if WEBGL else "canvas"), f"WebGL {'on' if WEBGL else 'off'}: drawn with {drawing}")
    row = driver.find_element(By.CSS_SELECTOR, f'#apps tr[data-app="{APP}"]')
    cells = [c.text for c in row.find_elements(By.CSS_SELECTOR, "td")]
    stats = call(URL, "get_graph_stats", {"app_id": APP})["by_app"][0]
    check(cells[0] == str(stats["pages"]) and cells[1] == str(stats["transitions"]), f"the demo app with its counts: {cells}")
    check("客服问答" in driver.find_element(By.ID, "datasets").text, "the demo knowledge base beside the apps")
    check("流程" in driver.find_element(By.ID, "business").text, "and the business graph's counts")
    before = int(row.find_element(By.CSS_SELECTOR, '[data-field="last-hour"]').text)
    readable()
    shot("apps.png")

    # ---- the app's graph
    # Found again: the list is redrawn when an app appears meanwhile.
    driver.find_element(By.CSS_SELECTOR, f'#apps tr[data-app="{APP}"] a').click()
    rendered("app", APP)
    check(state("atlasViewer.nodes") == stats["pages"], f"every page drawn: {state('atlasViewer.nodes')}")
    check(state("atlasViewer.edges") == stats["transitions"], "and every transition")
    note = driver.find_element(By.ID, "drawing-note")
    check(note.is_displayed() == (not WEBGL) and (WEBGL or "2D" in note.text), f"the slower drawing said so: {note.text!r}")
    canvas_png = driver.find_element(By.ID, "graph").screenshot_as_png
    check(not blank(canvas_png), "the graph is drawn (the screenshot is not blank)")
    demo_timing = state("atlasViewer.timing")
    # Every page named beside its node, no label over another; colour by success rate that
    # separates pages and actions, each page's from its actions' uses as the server counts them.
    boxes = state("atlasViewer.labelBoxes()")
    check(len(boxes) == stats["pages"], f"every page of the demo is named: {len(boxes)} of {stats['pages']}")
    check(not overlapping(boxes), f"no label overlaps another: {overlapping(boxes)[:3]}")
    answer = call(URL, "get_app_graph", {"app_id": APP})
    wrong = colours_agree(answer)
    check(not wrong, f"each page is coloured by its actions' success rate: {wrong[:3]}")
    node_colours = set(state("atlasViewer.sigma().getGraph().mapNodes((n, a) => a.color)"))
    edge_colours = set(state("atlasViewer.sigma().getGraph().mapEdges((e, a) => a.color)"))
    check(len(node_colours) >= 3 and len(edge_colours) >= 4,
          f"colour separates: {len(node_colours)} page colours, {len(edge_colours)} action colours")
    shot("app.png")
    demo_frames = driver.execute_async_script("atlasViewer.measureFrames(2000).then(arguments[0])")
    demo_frames["renderMs"] = state("atlasViewer.measureRender()")

    # ---- a page: clicked in the graph
    graph = call(URL, "get_app_graph", {"app_id": APP})
    names = {p["page_name"]: p["page_id"] for p in graph["pages"]}
    home = graph["home_page"]
    driver.execute_script("atlasViewer.sigma().getCamera().setState({x: 0.5, y: 0.5, ratio: 1, angle: 0})")
    time.sleep(0.3)
    point = state(f"atlasViewer.nodePosition('{home}')")
    area = driver.find_element(By.ID, "graph")
    size = area.size
    ActionChains(driver).move_to_element_with_offset(area, point["x"] - size["width"] / 2, point["y"] - size["height"] / 2).click().perform()
    wait.until(lambda d: state("atlasViewer.selected") == home and state("atlasViewer.pageDetails !== null"))
    actions = driver.find_elements(By.CSS_SELECTOR, "#page-actions li")
    expected = call(URL, "get_page_details", {"app_id": APP, "page_id": home})["actions"]
    check(len(actions) == len(expected) and len(actions) > 0, f"clicking a page shows its {len(expected)} actions: {len(actions)}")
    check("外卖" in driver.find_element(By.ID, "page-actions").text, "with their targets")
    # The page's counts agree with its actions': the uses of its actions are their uses summed.
    details = call(URL, "get_page_details", {"app_id": APP, "page_id": home})
    uses = sum(a["success_count"] + a["fail_count"] for a in details["actions"])
    traffic = driver.find_element(By.ID, "page-traffic").text
    check(details["departures"] == uses and uses > 0 and str(uses) in traffic,
          f"the page says its actions' {uses} uses: {traffic} ({details['departures']})")
    readable()
    panel = driver.find_element(By.ID, "page-panel").text
    check("null" not in panel and "[object" not in panel and "undefined" not in panel, f"nothing absent is written out: {panel}")
    shot("page.png")

    # ---- the keyboard: Tab to an action's target and Enter goes there
    target = driver.find_element(By.CSS_SELECTOR, "#page-actions button.go")
    target_id = target.get_attribute("data-page")
    driver.find_element(By.ID, "page-title").click()
    for _ in range(60):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.switch_to.active_element == target:
            break
    check(driver.switch_to.active_element == target, "the page's actions are reached with Tab")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait.until(lambda d: state("atlasViewer.selected") == target_id)
    check(target_id in driver.current_url, "Enter on an action goes to its target page")

    # ---- ask: 点外卖 from the home page
    # Back to the home page, found by name ("/" focuses the search box).
    ActionChains(driver).send_keys("/").perform()
    check(driver.switch_to.active_element.get_attribute("id") == "search", "/ focuses the search box")
    ActionChains(driver).send_keys("首页").perform()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results button"))
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait.until(lambda d: state("atlasViewer.selected") == home)
    driver.find_element(By.ID, "tab-ask").click()
    driver.find_element(By.ID, "intent").send_keys("点外卖")
    driver.find_element(By.ID, "ask-path").click()
    wait.until(lambda d: state("atlasViewer.answer !== null && atlasViewer.highlighted.transitions.length > 0"))
    answer = call(URL, "query_path", {"app_id": APP, "intent": "点外卖", "current_page": home})
    path_steps = answer["path"]["steps"]
    highlighted = state("atlasViewer.highlighted")
    check(len(highlighted["transitions"]) == len(path_steps), f"the path's {len(path_steps)} edges highlighted: {highlighted}")
    check(path_steps[-1]["expected_page"] in highlighted["pages"], "up to its target page")
    box = driver.find_element(By.CSS_SELECTOR, ".path-box.main").text
    check("置信度" in box and "预计用时" in box, f"each step's confidence and the estimated time: {box}")
    told = driver.find_element(By.ID, "answer").text
    check(len(driver.find_elements(By.CSS_SELECTOR, ".path-box.alt")) == len(answer["alternatives"]) and "[object" not in told,
          f"the alternatives too: {told}")
    shot("ask.png")
    readable()
    driver.find_element(By.ID, "ask-next").click()
    wait.until(lambda d: d.find_elements(By.ID, "next-action"))
    check(path_steps[0]["widget_text"] in driver.find_element(By.ID, "next-action").text, "and get_next_action's answer from the page")

    # ---- live: a report over HTTP flashes its edge and counts
    edge = path_steps[0]
    transition = next(t for t in graph["transitions"] if t["from_page"] == home and t["to_page"] == edge["expected_page"]
                      and t["widget_text"] == edge["widget_text"])
    seen = state("atlasViewer.liveEvents")
    reported = call(URL, "report_transition", {"from_page": home, "to_page": edge["expected_page"], "success": True,
                                               "action": {"type": edge["action_type"], "widget_text": edge["widget_text"]}})
    check(reported["transition_id"] == transition["transition_id"], "the report names the edge drawn")
    wait.until(lambda d: state("atlasViewer.liveEvents") > seen and state("atlasViewer.lastFlashed") == transition["transition_id"])
    drawn = state(f"atlasViewer.edge('{transition['transition_id']}')")
    check(drawn["success"] == transition["success_count"] + 1, f"the edge's count follows live: {drawn}")
    driver.find_element(By.ID, "tab-page").click()
    wait.until(lambda d: "成功" in d.find_element(By.ID, "page-reports").text)
    check(edge["widget_text"] in driver.find_element(By.ID, "page-reports").text, "the selected page's recent reports show it")

    # ---- a screenshot in a page's folder becomes the page's picture
    details = call(URL, "get_page_details", {"app_id": APP, "page_id": home})
    if details.get("folder"):
        os.makedirs(details["folder"], exist_ok=True)
        with open(os.path.join(details["folder"], "screenshot.png"), "wb") as f:
            f.write(png(108, 240, (40, 90, 200)))
        driver.get(URL + "/#/")
        rendered("apps")
        after = int(driver.find_element(By.CSS_SELECTOR, f'#apps tr[data-app="{APP}"] [data-field="last-hour"]').text)
        check(after == before + 1, f"reports in the last hour counted: {before} then {after}")
        driver.get(URL + f"/#/app/{APP}/page/{home}")
        rendered("app", APP)
        wait.until(lambda d: state("atlasViewer.imageNodes()") == 1)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#shot img"))
        check(driver.find_element(By.CSS_SELECTOR, "#shot img").get_attribute("naturalWidth") == "108", "and the page panel shows it")
    same_origin_only(URL)
    no_console_errors()

    # ---- remembered ways: a run its agent finished is a way, listed with its own record
    ways_app = "com.example.ways"

    def widget(wid, text, kind, bounds):
        return {"id": wid, "text": text, "type": kind, "bounds": bounds}

    def observed(widgets, executed, carry):
        return call(URL, "observe_screen", {
            "app_id": ways_app, "task": "打开设置", "session_id": "w1", "ui_hierarchy": {"widgets": widgets},
            "screen_width": 1080, "screen_height": 2400, "executed": executed, "carry": carry})

    first = observed([widget("title", "笔记", "TextView", "[0,0][1080,200]"),
                      widget("settings", "设置", "Button", "[800,0][1080,200]")], None, None)
    second = observed([widget("title", "设置", "TextView", "[0,0][1080,200]"),
                       widget("dark", "深色模式", "Switch", "[0,300][1080,500]")],
                      {"action": {"_metadata": "do", "action": "Tap", "element": [870, 41]}}, first["carry"])
    call(URL, "end_session", {"app_id": ways_app, "session_id": "w1", "intent": "打开设置", "finished": True,
                              "carry": second["carry"], "executed": {"action": {"_metadata": "finish", "message": "done"}}})
    driver.get(URL + f"/#/app/{ways_app}")
    rendered("app", ways_app)
    driver.find_element(By.ID, "tab-ways").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#ways li[data-way]"))
    listed = call(URL, "get_ways", {"app_id": ways_app})["ways"]
    told = driver.find_element(By.ID, "ways").text
    check(len(listed) == 1 and "打开设置" in told and "确认 1 次" in told and "下次直接重放" in told,
          f"the way with its record and whether it is replayed: {told}")
    check(listed[0]["record"]["way"] in told, "and its key, to forget it by")
    check("w1：仅智能体自称完成" in told, f"and its run, judged by nobody: {told}")
    driver.find_element(By.CSS_SELECTOR, "#ways li[data-way] > button").click()
    check(len(state("atlasViewer.highlighted").get("transitions", [])) == 1, "its step lit on the graph")
    readable()
    shot("ways.png")

    # ---- an app of two versions: the versions picked, the changes between them coloured
    release_app = "com.example.release"

    def release_page(name, version, texts):
        return call(URL, "add_page", {
            "app_id": release_app, "page_name": name, "page_type": "home" if name == "Home" else "detail",
            "app_version": version, "title": name,
            "ui_hierarchy": {"widgets": [{"type": "Button", "id": f"b{i}", "text": text} for i, text in enumerate(texts)]},
        })["page_id"]

    def release_step(source, text, target, version):
        return call(URL, "report_transition", {"from_page": source, "to_page": target, "success": True, "app_version": version,
                                               "action": {"type": "click", "widget_text": text}})["transition_id"]

    r_home = release_page("Home", "1.0", ["Search", "Help"])
    r_search = release_page("Search", "1.0", ["Go"])
    r_help = release_page("Help", "1.0", ["Back"])
    to_search = release_step(r_home, "Search", r_search, "1.0")
    to_help = release_step(r_home, "Help", r_help, "1.0")
    release_page("Home", "2.0", ["Search", "Menu"])
    release_page("Search", "2.0", ["Go"])
    r_menu = release_page("Menu", "2.0", ["Search"])
    to_menu = release_step(r_home, "Menu", r_menu, "2.0")
    call(URL, "record_app_version", {"app_id": release_app, "version": "2.0", "seen_transitions": [to_search],
                                     "gone_pages": [r_help]})
    driver.get(URL + f"/#/app/{release_app}")
    rendered("app", release_app)
    check(driver.find_element(By.ID, "versions").is_displayed(), "an app of two versions shows the version pickers")
    picked = [driver.find_element(By.ID, i).get_attribute("value") for i in ("version-from", "version-to")]
    check(picked == ["1.0", "2.0"], f"the version before the current, and the current: {picked}")
    colour = lambda node: state(f"atlasViewer.sigma().getNodeDisplayData('{node}').color")
    edge_colour = lambda edge: state(f"atlasViewer.sigma().getEdgeDisplayData('{edge}').color")
    drawn = (colour(r_help), edge_colour(to_help))
    check(drawn == ("#d3d7de", "#d3d7de"), f"what the release removed is drawn pale, as history: {drawn}")
    check(colour(r_search) != "#d3d7de", "and what it kept is not")
    driver.find_element(By.ID, "compare").click()
    wait.until(lambda d: state("atlasViewer.diff !== null"))
    wait.until(lambda d: d.find_element(By.ID, "changes-panel").is_displayed())
    expected = {r_menu: "#00897b", r_home: "#ef6c00", r_help: "#c62828", r_search: "#dfe4ec"}
    drawn = {node: colour(node) for node in expected}
    check(drawn == expected, f"added, changed, removed and unchanged pages coloured apart: {drawn}")
    drawn = (edge_colour(to_menu), edge_colour(to_help), edge_colour(to_search))
    check(drawn == ("#00897b", "#c62828", "#dfe4ec"), f"and the transitions: {drawn}")
    check(driver.find_element(By.ID, "diff-legend").is_displayed(), "with their legend")
    changes = driver.find_element(By.ID, "changes-panel").text
    check("1.0 → 2.0" in changes and "新增 1 页" in changes and "Menu" in changes and "Help" in changes,
          f"the changes listed: {changes}")
    readable()
    shot("versions.png")
    driver.find_element(By.CSS_SELECTOR, f'#changes-panel .diff-changed button[data-page="{r_home}"]').click()
    wait.until(lambda d: state("atlasViewer.selected") == r_home)
    driver.find_element(By.ID, "tab-page").click()
    change = driver.find_element(By.ID, "page-change").text
    check("有变化" in change and "Menu" in change and "Help" in change, f"a changed page says what changed: {change}")
    driver.get(URL + f"/#/app/{release_app}/page/{r_help}")
    wait.until(lambda d: state("atlasViewer.selected") == r_help and d.find_elements(By.ID, "page-gone"))
    check("2.0" in driver.find_element(By.ID, "page-gone").text, "a removed page says in which version it went")
    same_origin_only(URL)
    no_console_errors()

    # ---- a laptop's screen
    driver.set_window_size(1366, 768)
    time.sleep(0.5)
    readable()
    driver.set_window_size(1280, 800)

    # ---- English
    driver.find_element(By.ID, "lang").click()
    WebDriverWait(driver, 10).until(lambda d: "Graph viewer" in d.title or "graph viewer" in d.title)
    check(driver.find_element(By.ID, "tab-ask").text == "Ask", "the English switch")
    driver.find_element(By.ID, "lang").click()

    # ---- a 10,000-page app
    if BIG_URL:
        driver.get(BIG_URL + "/#/app/synthetic.app")
        rendered("app", "synthetic.app")
        pages = state("atlasViewer.nodes")
        check(pages == BIG_PAGES, f"all {BIG_PAGES} pages drawn: {pages}")
        check(not blank(driver.find_element(By.ID, "graph").screenshot_as_png), "and the large graph is drawn")
        big_timing = state("atlasViewer.timing")
        shot("large.png")
        big_frames = driver.execute_async_script("atlasViewer.measureFrames(3000).then(arguments[0])")
        big_frames["renderMs"] = state("atlasViewer.measureRender()")
        name = state("atlasViewer.sigma().getGraph().getNodeAttribute(atlasViewer.sigma().getGraph().nodes()[Math.floor(atlasViewer.nodes * 0.43)], 'label')")
        search = driver.find_element(By.ID, "search")
        search.send_keys(name)
        search.send_keys(Keys.ENTER)
        wait.until(lambda d: state("atlasViewer.pageDetails && atlasViewer.pageDetails.page_name") == name)
        check(driver.find_element(By.ID, "page-title").text == name, f"a page found by name among 10,000: {name}")
        shot("large-page.png")
        # Looking closely: the selected page's neighbourhood alone, then the whole app again.
        selected = state("atlasViewer.selected")
        driver.find_element(By.ID, "focus").click()
        wait.until(lambda d: state(f"atlasViewer.focus && atlasViewer.nodes < {BIG_PAGES} && atlasViewer.selected") == selected)
        near = state("atlasViewer.nodes")
        expected_near = len(call(BIG_URL, "get_app_graph", {"app_id": "synthetic.app", "center": selected, "radius": 2})["pages"])
        check(near == expected_near, f"the neighbourhood view draws the {expected_near} pages within two steps: {near}")
        # A page at the neighbourhood's edge keeps its colour: its actions to pages left out count.
        wrong = colours_agree(call(BIG_URL, "get_app_graph", {"app_id": "synthetic.app", "center": selected, "radius": 2}))
        check(not wrong, f"the neighbourhood's pages are coloured by all their actions: {wrong[:3]}")
        near_frames = driver.execute_async_script("atlasViewer.measureFrames(2000).then(arguments[0])")
        near_frames["renderMs"] = state("atlasViewer.measureRender()")
        shot("large-neighbourhood.png")
        driver.find_element(By.ID, "focus").click()
        wait.until(lambda d: state("atlasViewer.nodes") == BIG_PAGES and state("atlasViewer.selected") == selected)
        check(True, "and back to the whole app, the page still selected")
        same_origin_only(BIG_URL)
        no_console_errors()
        print(json.dumps({
            "demo": {"pages": demo_timing["pages"], "first_render_ms": demo_timing["firstRenderMs"], "frames": demo_frames},
            "large": {"pages": big_timing["pages"], "transitions": big_timing["transitions"], "fetch_ms": big_timing["fetchMs"],
                      "first_render_ms": big_timing["firstRenderMs"], "frames": big_frames},
            "neighbourhood": {"pages": near, "frames": near_frames},
            "first_render_ratio": round(big_timing["firstRenderMs"] / max(1, demo_timing["firstRenderMs"]), 1),
            "frame_time_ratio": round(big_frames["meanMs"] / max(0.1, demo_frames["meanMs"]), 1),
            "render_ratio": round(big_frames["renderMs"] / max(0.01, demo_frames["renderMs"]), 1),
        }))
finally:
    driver.quit()
print(f"{checks} viewer checks passed")
