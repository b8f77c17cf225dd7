# syntax=docker/dockerfile:1
# Dockerfile - one image for every service (docs/deploy.md): the binaries
# built in the first stage from the same Debian packages scripts/setup
# installs to build them (a test keeps the two lists equal), run in the
# second as a non-root user; `docker run IMAGE ingest|flags|api|writer`.
# The `syntax` line above must stay the file's first (BuildKit reads it only
# there). Both stages use one exact Debian point release (bookworm, whose
# package names scripts/setup lists). No digest: none could be looked up
# where this file is kept (no registry reachable); to pin by content too,
# append `@sha256:...` as `docker buildx imagetools inspect` prints it.

FROM debian:12.11-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential \
      pkg-config \
      libuv1-dev \
      node-llhttp \
      libhiredis-dev \
      librdkafka-dev \
      libmbedtls-dev \
      nettle-dev \
      zlib1g-dev \
      libpcre2-dev \
      libmaxminddb-dev \
      libicu-dev \
      libsqlite3-dev \
      libpq-dev \
      libargon2-dev \
      lemon \
      re2c \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY libcommon libcommon
COPY services services
COPY proto proto
RUN make -j"$(nproc)" services

FROM debian:12.11-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      libuv1 \
      libhiredis0.14 \
      librdkafka1 \
      libmbedtls14 \
      libmbedx509-1 \
      libmbedcrypto7 \
      libnettle8 \
      zlib1g \
      libpcre2-8-0 \
      libmaxminddb0 \
      libicu72 \
      libsqlite3-0 \
      libpq5 \
      libargon2-1 \
      tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/analytics --create-home analytics \
 && install -d -o analytics -g analytics /var/lib/analytics/data
COPY --from=build /src/build/bin/ /usr/local/bin/
COPY deploy/docker/entrypoint.sh /usr/local/bin/entrypoint
USER 10001:10001
WORKDIR /var/lib/analytics
ENV LOG_LEVEL=info
ENTRYPOINT ["/usr/local/bin/entrypoint"]
CMD ["api"]
