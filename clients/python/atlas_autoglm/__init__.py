"""Atlas for Open-AutoGLM: plug Atlas into an unchanged ``phone-agent`` install.

- :class:`AtlasActionHandler` is phone-agent's ``ActionHandler`` with the seed's
  ``GET_KNOWLEDGE_DATA`` action: the query is looked up in a Dify-compatible knowledge base
  (Atlas's own or a real Dify, configured by the seed's ``PHONE_AGENT_KNOWLEDGE_*`` variables),
  the answer typed into the focused field and sent.
- :class:`AtlasPhoneAgent` is phone-agent's ``PhoneAgent`` with Atlas in the loop: each screen
  is matched to a page of the graph, each executed step reported (with the task as intent and the
  run as session), the run's end said, and where the graph is sure of the next step (at least
  ``fast_path``) it is taken without asking the model. The last action's result is told to the
  model, and a reply that does not parse is told too instead of ending the task. Every action
  goes through the guard's rules, evaluated by Atlas (``review_action``, ``record_outcome``: the
  shipped QQ gate and the rule files of ``rules=``), and the run's end carries the model's finish
  message, which a replay of the run finishes with.

Only the standard library and phone-agent itself are used; Atlas is reached over its HTTP API.
"""

from .knowledge import AtlasActionHandler, KnowledgeBase
from .link import AtlasLink
from .agent import AtlasPhoneAgent

__all__ = ["AtlasActionHandler", "AtlasLink", "AtlasPhoneAgent", "KnowledgeBase"]
