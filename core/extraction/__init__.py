"""Extraction that verifies itself: Generator -> heuristics -> Critic -> gate."""
