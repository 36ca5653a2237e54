# The rebalance-replay service image: Python 3.11 + a Java 17 runtime for Spark (local mode).
# bookworm pins a Debian release that still ships openjdk-17 (newer slim tags only have Java 21).
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
 && rm -rf /var/lib/apt/lists/*

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY assignors ./assignors
COPY streaming ./streaming
COPY whatif ./whatif
RUN pip install . \
 && useradd --create-home --uid 10001 rebalance \
 && mkdir -p /data/checkpoints && chown rebalance /data/checkpoints

USER rebalance
VOLUME ["/data/checkpoints"]
ENTRYPOINT ["rebalance"]
CMD ["serve", "--bootstrap", "kafka:9092", "--checkpoint", "/data/checkpoints/serve"]
