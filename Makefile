# The one entry point. `make run` and `make test` work on a fresh machine with Python 3.11.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_ENV := DEBUG=1
# A production environment as docker-compose.yml runs it: a Redis broker (the rate limits' cache
# then lives in its next database; without a Redis cache production refuses to start,
# accounts.E001).
DEPLOY_ENV := DEBUG=0 SECRET_KEY=check-deploy-only-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH \
	ALLOWED_HOSTS=diffmark.example.org CELERY_BROKER_URL=redis://redis:6379/0

.PHONY: install run test test-fast lint format check bench clean worker beat

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

install: $(STAMP)

run: install  ## set up, seed the demo and serve on http://127.0.0.1:8000
	mkdir -p var/media var/static
	$(DEV_ENV) $(BIN)/python manage.py migrate --noinput
	$(DEV_ENV) $(BIN)/python manage.py demo
	$(DEV_ENV) $(BIN)/python manage.py runserver 127.0.0.1:8000

test: install  ## the whole suite (SQLite unless DATABASE_URL is set); installs chromium and node if missing
	scripts/test-deps.sh
	node --test tests/js/
	$(BIN)/pytest

worker: install  ## a Celery worker (needs CELERY_BROKER_URL; without it tasks run in-process)
	$(BIN)/celery -A config worker --loglevel=info

beat: install  ## the periodic sweeps; run exactly one per deployment
	mkdir -p var
	$(BIN)/celery -A config beat --loglevel=info --schedule var/celerybeat-schedule

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy  # the whole project, pyproject.toml [tool.mypy]; incremental cache in .mypy_cache

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

check: install  ## production settings pass the deployment checklist without warnings
	$(DEPLOY_ENV) $(BIN)/python manage.py check --deploy --fail-level WARNING
	DATABASE_URL=sqlite://:memory: $(DEV_ENV) $(BIN)/python manage.py makemigrations --check --dry-run

bench: install  ## figures; annotate_load needs the local PostgreSQL
	$(BIN)/python bench/import_pairs.py
	$(BIN)/python bench/import_pairs.py --postgres
	$(BIN)/python bench/annotate_load.py
	$(BIN)/python bench/pixeldiff.py
	$(BIN)/python bench/evaluate.py
	$(BIN)/python bench/build_release.py --postgres
	$(BIN)/python bench/day_load.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .hypothesis
