"""GraphEval (Sansford et al.): triple-level hallucination detection and GraphCorrect.

The checkers are in :mod:`.checkers` (base, support, NLI, LLM, the trained one with its model
format and alignment head); :mod:`.detect` checks an answer's triples, :mod:`.aggregate` turns
their probabilities into the answer's verdict, :mod:`.correct` repairs flagged triples, with
:mod:`.spans`, :mod:`.prompts` and :mod:`.results` (the store). The benchmarks and their split
are :mod:`s3kg_core.evaluation.summ_sets` and :mod:`s3kg_core.evaluation.grapheval`; training
the checker is :mod:`s3kg_core.checker_training`. Liu et al.'s factuality judge on an LLM's
hidden states, also called GraphEval, is :mod:`s3kg_core.factuality`.
"""
