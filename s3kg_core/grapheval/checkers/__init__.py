"""GraphEval's triple checkers: the base class, support, NLI and LLM."""
