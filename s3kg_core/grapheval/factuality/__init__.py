"""Factuality at scale: KG statements, LLM labels, a judge on the LLM's hidden states."""
