# Two commands do all the set-up on a fresh machine:
#   make demo   - oracle vs nop on the bundled offline dataset, printing the report
#   make test   - the whole test suite (SQLite and the PostgreSQL on 127.0.0.1:5432)

VENV := .venv
# HEMRA's own modules keep their bytecode (__pycache__, ignored by git) even where the
# environment says not to write it: the suite starts hundreds of `hemra` processes, and each
# would otherwise compile every module it loads anew (0.1-0.3 s of CPU a command).
unexport PYTHONDONTWRITEBYTECODE
PY := $(VENV)/bin/python
HEMRA := $(VENV)/bin/hemra

.PHONY: setup demo test fuzz protos check-protos bench viewer

$(VENV)/.installed: pyproject.toml setup.py scripts/setup.sh scripts/setup-docker.sh
	bash scripts/setup.sh
	touch $@

setup: $(VENV)/.installed
	@bash scripts/build-npm.sh

demo: setup
	$(HEMRA) run -H oracle -H nop -d hemra-offline

# The suite's files spread over TEST_WORKERS processes (pytest-xdist), each file's tests in one
# process, in order, with its module fixtures (the compose stack) made once; 0: one process.
TEST_WORKERS ?= 2

test: setup
	$(PY) scripts/gen_protos.py --check
	$(PY) scripts/gen_vocabulary.py --check
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

# The fuzz suite's long run (tests/fuzz): 25 times CI's examples, fresh random draws each time
# (HEMRA_FUZZ_FACTOR=N for another multiple). `make test` runs its bounded, derandomized profile.
fuzz: setup
	HEMRA_FUZZ=long $(PY) -m pytest tests/fuzz -o timeout=0 -q

protos: setup
	$(PY) scripts/gen_protos.py

# The trace viewer the gateway serves is a committed build of clients/dashboard (like the
# generated protos): refresh it after changing the web sources (a test fails until then).
viewer: setup
	rm -rf gateway/viewer
	cp -r clients/dashboard/dist/viewer gateway/viewer

bench: setup
	$(PY) bench/orchestration.py
	$(PY) bench/queue_throughput.py
	$(PY) bench/imports_compare.py
	$(PY) bench/docker_overhead.py
	$(PY) bench/gateway.py
