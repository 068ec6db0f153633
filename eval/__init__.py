"""Evaluation helpers: the fake model provider and the harnesses built on it."""
