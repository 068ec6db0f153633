"""The blind-review benchmark: `vetq bench review` (see eval/review_bench/cli.py).

cases.py loads and validates eval/review_cases/*.json; runner.py fans the cases out
through the review queue and checkpoints every finished (case, run, mode);
metrics.py computes the mechanical scores (Wilson intervals, paired cluster
bootstrap); report.py writes the JSON and Markdown reports and the human-review
sheet.
"""
