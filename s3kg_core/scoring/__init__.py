"""Scores: S3KG, its WL kernel and soft alignment, CUS, TAU."""
