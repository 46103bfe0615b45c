"""GraphEval (Sansford et al.): triple-level hallucination detection and GraphCorrect.

The checkers are in :mod:`.checkers` (base, support, NLI, LLM); detection, correction, their
results in the store, prompts, and the SummEval / QAGS benchmarks with their declared split
are modules of this package. Liu et al.'s factuality judge on an LLM's hidden states, also
called GraphEval, is :mod:`s3kg_core.factuality`.
"""
