# prguide's GitHub App server.
#
#   docker build -t prguide .
#   docker run -p 8080:8080 -v prguide-data:/data \
#     -e GITHUB_APP_ID=... -e GITHUB_WEBHOOK_SECRET=... \
#     -e GITHUB_PRIVATE_KEY="$(cat app.private-key.pem)" prguide
#
# Settings come from the environment (README.md, "Running the GitHub App"); registering
# the app and checking the installation: docs/deploy.md.
#
# The build is reproducible: the base image is pinned by digest (the tag only says what
# the digest is), and every Python package comes from a lock file with hashes
# (requirements.lock for the server, requirements-build.lock for building prguide's
# wheel), installed with --require-hashes. docs/deploy.md, "Updating the image", gives
# the commands that refresh the digest and the lock files.

# --- build: prguide as a wheel, so the final image has no build tools
FROM python:3.12.7-slim-bookworm@sha256:032c52613401895aa3d418a4c563d2d05f993bc3ecc065c8f4e2280978acd249 AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY requirements-build.lock ./
RUN pip install --require-hashes --no-deps -r requirements-build.lock
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY config ./config
# No build isolation: the locked setuptools and wheel build it, not whatever is newest.
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .

# --- run
FROM python:3.12.7-slim-bookworm@sha256:032c52613401895aa3d418a4c563d2d05f993bc3ecc065c8f4e2280978acd249
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN groupadd --system --gid 10001 prguide \
 && useradd --system --uid 10001 --gid prguide --home-dir /home/prguide --create-home prguide \
 && mkdir /data && chown prguide:prguide /data

# Dependencies exactly as locked (every file's hash checked), then prguide itself without
# dependencies; pip check fails the build if the two do not fit together.
COPY requirements.lock /tmp/requirements.lock
RUN pip install --require-hashes --no-deps -r /tmp/requirements.lock && rm /tmp/requirements.lock
COPY --from=build /wheels /wheels
RUN pip install --no-deps --no-index /wheels/*.whl && rm -rf /wheels \
 && pip check

# The shipped rule files live beside the package in a checkout, not inside it
# (bot/paths.py), so the image carries them and says where.
COPY config /opt/prguide/config
ENV PRGUIDE_CONFIG_DIR=/opt/prguide/config \
    PRGUIDE_DB=/data/prguide.db \
    HOST=0.0.0.0 \
    PORT=8080

# The job queue is on /data so queued deliveries survive a restart of the container.
VOLUME ["/data"]
WORKDIR /home/prguide
# Numeric, so Kubernetes' runAsNonRoot can tell it is not root.
USER 10001:10001

EXPOSE 8080
# slim has no curl; urlopen raises on a refused connection and on /healthz's 503.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8080'), timeout=4)"]

CMD ["prguide", "serve"]
