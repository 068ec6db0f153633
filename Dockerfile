# One image for producers and workers; compose.yaml picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

# Tesseract reads scanned PDF pages on the workers (VETQ_OCR=auto); the English and
# German language data come with it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-deu \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY core ./core
COPY workers ./workers
COPY api_client ./api_client
COPY eval ./eval
COPY inbox ./inbox
RUN pip install '.[anthropic,openai,mcp,ocr,otel,inbox]' && useradd --create-home --uid 10001 vetq
USER vetq

ENTRYPOINT ["vetq"]
CMD ["--help"]
