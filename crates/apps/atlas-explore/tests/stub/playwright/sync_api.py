"""A stand-in for Playwright's sync API that records each call, one JSON line each, to the file
STUB_LOG names: the generated navigation scripts are run under it in the tests."""
import json, os

def record(*args):
    with open(os.environ["STUB_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps([a if isinstance(a, (str, int, float, bool, type(None))) else type(a).__name__ for a in args]) + "\n")

class Page:
    url = "about:blank"
    def on(self, event, handler): record("on", event)
    def goto(self, url): record("goto", url); self.url = url
    def wait_for_load_state(self, state): record("wait_for_load_state", state)
    def wait_for_timeout(self, ms): record("wait_for_timeout", ms)
    def eval_on_selector(self, selector, script): record("eval_on_selector", selector, script)
    def fill(self, selector, value): record("fill", selector, value)
    def check(self, selector): record("check", selector)
    def evaluate(self, script): record("evaluate", script)
    def title(self): return "stub"

class Browser:
    def new_page(self, **kwargs): return Page()
    def close(self): record("close")

class Chromium:
    def launch(self, **kwargs): return Browser()

class Playwright:
    chromium = Chromium()

class sync_playwright:
    def __enter__(self): return Playwright()
    def __exit__(self, *exc): return False
