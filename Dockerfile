# Stepmark image: the Django web tier, the Celery workers and beat all run from it.
#
#   docker build -t stepmark .                                   # CPU torch (default)
#   docker build -t stepmark-gpu \
#     --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 .   # CUDA torch
#
# docker-compose.yml builds both (the GPU worker uses the CUDA one).

# --- Frontend: Vite builds src/ into dist/ (hashed files + manifest) ---------------------
FROM node:20-slim AS frontend
WORKDIR /build/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY frontend/ ./
RUN npm run build

# --- Application ------------------------------------------------------------------------
FROM python:3.11-slim AS app

# Which torch wheel: the CPU index by default; a CUDA index (cu1xx) for the GPU image.
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=annotator.settings \
    STEPMARK_VAR_DIR=/data/var \
    STEPMARK_EXPORT_DIR=/data/exports \
    STEPMARK_CHECKPOINT_DIR=/data/checkpoints \
    STEPMARK_IMPORT_DIR=/data/imports \
    STEPMARK_STATIC_ROOT=/app/staticfiles \
    HF_HOME=/data/huggingface

WORKDIR /app

# The worker draws the [asy] diagrams of imported problems with Asymptote (labeling/diagrams/):
# LaTeX typesets the labels, dvisvgm writes the SVG. One image for every service, so the web
# tier carries it too, though it never runs it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends asymptote dvisvgm \
    && rm -rf /var/lib/apt/lists/*

# torch first, from the chosen index, so that installing Stepmark keeps it.
RUN pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"

COPY pyproject.toml README.md manage.py gunicorn.conf.py ./
COPY annotator/ annotator/
COPY formats/ formats/
COPY labeling/ labeling/
COPY scoring/ scoring/
# Editable, so settings.BASE_DIR stays /app (where frontend/dist and staticfiles live).
RUN pip install -e .

COPY --from=frontend /build/frontend/dist/ frontend/dist/

# Static files (admin, API docs, the built frontend) collected for WhiteNoise. The dev key
# is allowed for this one build-time command only; containers need DJANGO_SECRET_KEY.
RUN STEPMARK_ALLOW_DEV_SECRET=1 python manage.py collectstatic --noinput --verbosity 0

RUN useradd --create-home --uid 1000 stepmark \
    && mkdir -p /data/var /data/exports /data/checkpoints /data/imports /data/huggingface \
    && chown -R stepmark:stepmark /data
USER stepmark

EXPOSE 8000
# Sync workers, 2 per CPU + 2 (gunicorn.conf.py); STEPMARK_WEB_WORKERS overrides. Put a buffering
# proxy in front (docker-compose.yml runs nginx with deploy/nginx.conf).
CMD ["gunicorn", "annotator.wsgi:application", "--bind", "0.0.0.0:8000", "--access-logfile", "-"]
