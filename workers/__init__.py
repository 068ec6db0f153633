"""The Celery side of vetq: the app, tasks, signal handlers and the embedded Redis."""
