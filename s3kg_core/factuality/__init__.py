"""Factuality at scale: KG statements, LLM labels, a judge on the LLM's hidden states.

Liu et al.'s GraphEval (arXiv:2404.00942), one module per step:

- :mod:`.kg`: FinDKG or a user's CSV/Parquet KG as distinct typed facts;
- :mod:`.statements`: relation templates and type-compatible negative sampling -> Parquet;
- :mod:`.prompts`: the True / False / I don't know prompt (versioned);
- :mod:`.labels`: the target LLM's own labels, through an endpoint or a local model;
- :mod:`.models`: loading a local causal LM, running prompts with a cached shared prefix;
- :mod:`.hidden`: hidden states per layer (last token, mean) -> Parquet;
- :mod:`.judge`: the LayerNorm-ReLU judge, group splits, majority and logistic baselines;
- :mod:`.metrics`: correctness, truthfulness, informativeness, with breakdowns;
- :mod:`.experiment`: layer sweep, training and evaluation, shared by the CLI and the bench;
- :mod:`.ray_jobs`: hidden-state extraction and judging as Ray Data batch jobs;
- :mod:`.results`: evaluations in the DuckDB table ``factuality_evals``.

Nothing is imported here, so ``import s3kg_core.factuality`` stays cheap.
"""
