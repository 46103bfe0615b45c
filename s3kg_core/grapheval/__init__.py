"""GraphEval: triple-level hallucination detection, GraphCorrect, and factuality at scale.

Two systems live here:

- Sansford et al.'s GraphEval and GraphCorrect (checkers, detection, correction, the
  SummEval / QAGS benchmarks): modules directly in this package.
- Liu et al.'s factuality judge on an LLM's hidden states: :mod:`s3kg_core.factuality`.
"""
