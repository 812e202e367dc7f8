"""The official MCP Python SDK against Atlas: streamable HTTP at /mcp in the handshake era
(initialize + Mcp-Session-Id), the stateless 2026-07-28 era and auto negotiation, and stdio
(`atlas mcp`). Every era lists the same tools and calls them the same way.
"""

import asyncio
import json
import tempfile

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def exercise(server, mode, label, check):
    async with Client(server, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        for name in ["query_path", "search_businesses", "get_path_between_entities", "retrieve_knowledge",
                     "report_verdict"]:
            check(name in names, f"{label}: tools/list has {name}")
        found = await client.call_tool("search_data_resources", {"query": "用户资料表"})
        check(not found.is_error, f"{label}: search_data_resources answers")
        first = json.loads(found.content[0].text)["candidates"][0]
        check(first["resource_id"] == "r_user_profile", f"{label}: 用户资料表 is user_profile ({first})")
        context = await client.call_tool("get_resource_context_for_chat", {"resource_id": first["resource_id"]})
        writers = [l["impl_id"] for l in json.loads(context.content[0].text)["impl_resource_links"] if l.get("access_type") == "write"]
        check("i_card_activate" in writers, f"{label}: the resource context names its writers")
        bad = await client.call_tool("get_neighbors", {"node_type": "business", "node_id": "p_monthly_card", "depth": 9})
        check(bad.is_error and "depth" in bad.content[0].text, f"{label}: a wrong argument is a tool error the model can read")
        missing = await client.call_tool("summarize_business", {"process_id": "p_nope"})
        check(missing.is_error and "NOT_FOUND" in missing.content[0].text, f"{label}: an unknown id is a tool error")
        unknown = await client.call_tool("report_verdict", {
            "app_id": "com.meituan.app", "session_id": "never-ran", "intent": "点外卖", "passed": False})
        check(not unknown.is_error and json.loads(unknown.content[0].text)["updated"] is False,
              f"{label}: a verdict on a session that reported nothing writes nothing")
    print(f"ok: MCP {label}")


def test_the_official_client_uses_every_era_and_stdio(atlas_url, atlas_bin, check):
    url = atlas_url + "/mcp"

    async def run():
        await exercise(url, "legacy", "HTTP, initialize + session", check)
        await exercise(url, "2026-07-28", "HTTP, stateless 2026-07-28", check)
        await exercise(url, "auto", "HTTP, auto negotiation", check)
        with tempfile.TemporaryDirectory() as data:
            params = StdioServerParameters(command=atlas_bin, args=["mcp", "--demo", "--data", data])
            await exercise(params, "legacy", "stdio, initialize", check)
            await exercise(params, "auto", "stdio, auto negotiation", check)

    asyncio.run(run())
