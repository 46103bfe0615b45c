"""The dashboard's data layer: every read and write, with its Streamlit caches.

database (the file, the :class:`~dashboard.data.database.View` key, the process lock),
reads (runs, answers, KGs, scores, the leaderboard), explain (answers explained again from the
stored vectors), tau_cases (TAU's cases, explained now or in the background), comparison (two
runs), search (answers by words, pickers' pages), evaluations (Benchmarks, Hallucinations,
Factuality), writes (the demo build, decisions, run names), background (the one registry of
background work). Pages import the module they read from; this package hands nothing on.
"""
