# One image for producers and workers; compose.yaml picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY core ./core
COPY workers ./workers
COPY api_client ./api_client
COPY eval ./eval
RUN pip install '.[anthropic,openai,mcp]' && useradd --create-home --uid 10001 vetq
USER vetq

ENTRYPOINT ["vetq"]
CMD ["--help"]
