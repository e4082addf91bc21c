"""Scientist agents that design experiments on hidden models and recover them.

CausaLab scientists live in :mod:`silicolab.scientists.causalab`: an LLM ReAct scientist
(DSL records, repair loop, optional verification step), the reference interventional
scientist (no LLM) and a random baseline, all played by the same episode runner.
"""
