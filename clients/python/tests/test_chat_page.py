"""The /chat page in headless Chromium, against `atlas serve --llm-url` pointed at
`atlas model-sim` with crates/faces/atlas-chat/demo/business.json: a question makes the scripted model
call search, then context, then answer; the page must show each tool call folded with its JSON,
the answer, the entities found, and a neighbourhood when one is clicked. A second question relies
on the conversation the page kept.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def test_the_chat_page_shows_tool_calls_answers_and_neighbourhoods(atlas_url, chromium, check):
    driver = chromium
    wait = WebDriverWait(driver, 30)
    driver.get(atlas_url + "/chat")
    check("业务图谱" in driver.title, "the page title is Chinese")
    # Everything the page loads comes from Atlas itself.
    sources = [e.get_attribute("src") or e.get_attribute("href") for e in driver.find_elements(By.CSS_SELECTOR, "script, link")]
    check(all(s.startswith(atlas_url) or s.startswith("data:") for s in sources), f"no outside resources: {sources}")

    def ask(question, n):
        driver.find_element(By.ID, "question").send_keys(question)
        driver.find_element(By.ID, "send").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".assistant[data-done=true]")) >= n)
        return driver.find_elements(By.CSS_SELECTOR, ".assistant")[n - 1]

    reply = ask("哪些接口写 user_profile？", 1)
    tools = [d.get_attribute("data-tool") for d in reply.find_elements(By.CSS_SELECTOR, "details.tool-call")]
    check(tools == ["search_data_resources", "get_resource_context_for_chat"], f"tool calls shown in order: {tools}")
    first = reply.find_element(By.CSS_SELECTOR, "details.tool-call")
    check(first.get_attribute("open") is None, "a tool call is folded")
    first.find_element(By.TAG_NAME, "summary").click()
    arguments = first.find_element(By.CSS_SELECTOR, "pre.arguments").text
    check('"query": "user_profile"' in arguments, f"unfolded, it shows its JSON arguments: {arguments}")
    check("r_user_profile" in first.find_element(By.CSS_SELECTOR, "pre.result").text, "and its JSON result")
    answer = reply.find_element(By.CSS_SELECTOR, ".answer").text
    check("i_card_activate" in answer and "用户资料表" in answer, f"the answer is shown: {answer}")

    chip = driver.find_element(By.CSS_SELECTOR, '.entity[data-id="r_user_profile"]')
    chip.click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#graph svg[data-center="r_user_profile"]'))
    ids = {g.get_attribute("data-id") for g in driver.find_elements(By.CSS_SELECTOR, "#graph g.node")}
    check({"r_user_profile", "i_card_activate", "i_profile_update"} <= ids, f"the neighbourhood of the clicked entity: {sorted(ids)}")

    reply = ask("开卡流程是什么", 2)
    answer = reply.find_element(By.CSS_SELECTOR, ".answer").text
    check("选择月卡套餐 → 提交月卡订单 → 支付 → 开通权益" in answer, f"a second question gets its own answer: {answer}")
    check(len(driver.find_elements(By.CSS_SELECTOR, ".user")) == 2, "both questions stay on the page")

    reply = ask("纠错", 3)
    failed = reply.find_elements(By.CSS_SELECTOR, "details.tool-call.failed")
    check(len(failed) == 2, "wrong arguments and an unknown tool are shown as failed tool calls")
    check("订单退款" in reply.find_element(By.CSS_SELECTOR, ".answer").text, "and the model recovers")
    # The page lives within its Content-Security-Policy (no inline code): the console shows no
    # refusal and no other error.
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not severe, f"no console errors: {severe}")
