"""Speed benchmarks: scripts that time the scorer, the encoders, the dashboard and the demo."""
