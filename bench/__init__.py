"""The project's benchmarks: ``speed/`` (how fast) and ``experiments/`` (how well), as scripts."""
