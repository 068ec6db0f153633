"""vetq's domain logic: models, prompts, stages and policies.

Nothing here imports Celery, Redis or a provider SDK at module top, so every rule
runs and is tested in a plain Python process.
"""

__version__ = "0.1.0"
