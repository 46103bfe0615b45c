"""The pipeline's stages: import, collect, extract, score, tau, results, on Ray."""
