"""Seed 000 §6's example, as written there, against `atlas serve --demo`."""

from agent_interface import KGClient, KGError


def test_the_seeds_example_runs_as_written(atlas_url, monkeypatch):
    monkeypatch.setenv("ATLAS_URL", atlas_url)
    executed = []


    def execute_action(action_type, widget_text):
        executed.append((action_type, widget_text))


    def wait_for_page_load():
        return None


    # --- the seed's example, unchanged ---
    kg = KGClient()

    page_info = kg.match_current_page(
        app_id="com.meituan.app",
        page_title="首页"
    )
    current_page_id = page_info["page"]["page_id"]

    result = kg.query_path(
        app_id="com.meituan.app",
        intent="点外卖",
        current_page=current_page_id
    )

    if result["success"]:
        for step in result["path"]["steps"]:
            execute_action(
                action_type=step["action_type"],
                widget_text=step["widget_text"]
            )
            new_page = wait_for_page_load()
            kg.report_transition(
                from_page=step.get("from_page", current_page_id),
                action={
                    "type": step["action_type"],
                    "widget_text": step["widget_text"]
                },
                to_page=step["expected_page"],
                success=True,
                latency_ms=500
            )
            current_page_id = step["expected_page"]
    # --- end of the seed's example ---

    failures = []
    if not result["success"]:
        failures.append(f"query_path failed: {result['message']}")
    elif result["target_page"]["page_name"] != "外卖首页":
        failures.append(f"点外卖 led to {result['target_page']['page_name']}")
    if executed != [("click", "外卖")]:
        failures.append(f"executed {executed}")
    next_action = kg.get_next_action(current_page=current_page_id, intent="点外卖")
    if not next_action["is_complete"]:
        failures.append(f"after the path the intent should be complete: {next_action}")
    try:
        kg.get_available_actions(page_id="no-such-page")
        failures.append("unknown page did not raise")
    except KGError as e:
        if e.code != "PAGE_NOT_FOUND" or e.status != 404:
            failures.append(f"unknown page gave {e.code} {e.status}")
    nearby = kg.query_path(app_id="com.meituan.app", intent="查找附近餐厅")
    if not nearby["success"] or nearby["target_page"]["page_name"] != "附近餐厅":
        failures.append(f"查找附近餐厅: {nearby}")
    drawn = kg.get_app_graph(app_id="com.meituan.app", center=current_page_id, radius=1)
    if not drawn["truncated"] or not drawn["pages"] or drawn["pages"][0]["page_id"] != current_page_id:
        failures.append(f"get_app_graph around a page: {drawn['pages'][:2]}")
    whole = kg.get_app_graph(app_id="com.meituan.app")
    if whole["truncated"] or len(whole["pages"]) != whole["total_pages"] or not any(p["depth"] == 0 for p in whole["pages"]):
        failures.append("get_app_graph whole: not every page, or no home page at depth 0")
    # A session judged by someone other than its agent: a failed verdict outranks the agent's
    # "finished", so the session confirms no way to replay.
    home = kg.match_current_page(app_id="com.meituan.app", page_title="首页")["page"]["page_id"]
    kg.report_transition(from_page=home, action={"type": "click", "widget_text": "外卖"},
                         to_page=current_page_id, success=True, app_id="com.meituan.app",
                         intent="点外卖", session_id="judged-run")
    kg.end_session(app_id="com.meituan.app", session_id="judged-run", intent="点外卖", finished=True)
    claimed = kg.get_ways(app_id="com.meituan.app", intent="点外卖")["ways"]
    if [r["outcome"] for w in claimed for r in w["runs"]] != ["claimed"]:
        failures.append(f"a finished session nobody judged is a claim: {claimed}")
    judged = kg.report_verdict(app_id="com.meituan.app", session_id="judged-run", intent="点外卖",
                               passed=False, reason="外卖首页 was not shown", judge="pytest")
    if not judged["updated"] or judged["steps"] != 1:
        failures.append(f"report_verdict: {judged}")
    if kg.get_ways(app_id="com.meituan.app", intent="点外卖")["ways"]:
        failures.append("a session a verdict failed still confirms a way")
    assert not failures, failures
