"""Python client for Atlas, the UI knowledge graph for LLM test agents.

Standard library only. ``KGClient``'s methods and keyword arguments are seed 000's, so the seed's
own example runs unchanged::

    from agent_interface import KGClient
    kg = KGClient()                      # http://127.0.0.1:7700, or $ATLAS_URL
    page = kg.match_current_page(app_id="com.meituan.app", page_title="首页")
    result = kg.query_path(app_id="com.meituan.app", intent="点外卖",
                           current_page=page["page"]["page_id"])
"""

from .client import KGClient, KGError

__all__ = ["KGClient", "KGError"]
