# kernelgate: `make setup`, `make build`, `make test`.
# Every target that runs Python makes sure .venv exists first (see harness/py/setup-venv.sh).

GO      ?= go
PYDIR   := harness/py
# The interpreter the tests and the binary use: KERNELGATE_PYTHON when set, else the venv.
ifeq ($(origin KERNELGATE_PYTHON),environment)
PYTHON  := $(KERNELGATE_PYTHON)
USERPY  := $(KERNELGATE_PYTHON)
PYDEP   :=
else
PYTHON  := $(CURDIR)/.venv/bin/python
USERPY  :=
PYDEP   := .venv/bin/python
endif
export KERNELGATE_PYTHON := $(PYTHON)
# go-nvml's cgo bindings call NVML functions the 13.0 headers mark deprecated.
export CGO_CFLAGS ?= -O2 -Wno-deprecated-declarations

.PHONY: setup build serve test test-go test-py test-e2e test-tasks vet clean

setup:
	@KERNELGATE_PYTHON='$(USERPY)' $(PYDIR)/setup-venv.sh
	@tests/trainers/setup-venv.sh
	@scripts/setup-chromium.sh

# The e2e tests' interpreter: the harness's packages plus the RL trainers (TRL, verl,
# OpenRLHF), whose own code the trainer tests run. Idempotent and cheap once cached.
TRAINPY := $(CURDIR)/.venv-trainers/bin/python
.venv-trainers/bin/python: $(PYDEP) tests/trainers/requirements.txt tests/trainers/requirements-nodeps.txt
	@tests/trainers/setup-venv.sh

# Rebuilt when missing; `make setup` is cheap once the cached venv exists.
.venv/bin/python:
	@KERNELGATE_PYTHON='$(USERPY)' $(PYDIR)/setup-venv.sh

build:
	$(GO) build -trimpath -o bin/kernelgate ./cmd/kernelgate

# Set up, build and run the gateway on its embedded defaults: 127.0.0.1:8080, ./data,
# the suites in datasets/, every GPU (CPU mode, the Triton interpreter, without one),
# open to callers on this machine without a key until one is created (--open).
# ARGS replaces those flags: make serve ARGS="--addr 0.0.0.0:8080 --device 0" (a key must exist).
ARGS ?= --open
serve: $(PYDEP) build
	bin/kernelgate serve $(ARGS)

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

test: $(PYDEP) vet test-go test-py test-e2e test-tasks

# KERNELGATE_BIN: the dashboard's browser test (gateway/ui) runs this binary instead of linking its own.
test-go: build
	KERNELGATE_BIN=$(CURDIR)/bin/kernelgate $(GO) test -race -count=1 ./...

# A pytest process per core, each a share of the test files (run-tests.sh says why not xdist).
test-py: $(PYDEP)
	PYTHON=$(PYTHON) $(PYDIR)/run-tests.sh

# A real `kernelgate serve` driven over HTTP (tests/e2e): durability, clients. Three
# processes, each a whole test file at a time (module fixtures are one serve each).
# GO: the soak test builds a leaking binary (-tags soakleak) with the same toolchain.
test-e2e: $(PYDEP) .venv-trainers/bin/python build
	GO='$(GO)' $(TRAINPY) -m pytest -q -n 3 --dist loadfile tests/e2e

# Every suite through `tasks check` (CPU: ci and small tasks run in full, the rest at
# shape level), then a synthetic suite, which must pass the same check.
test-tasks: $(PYDEP) build
	bin/kernelgate tasks check datasets/
	@synth=$$(mktemp -d) && trap 'rm -rf "$$synth"' EXIT && \
	bin/kernelgate tasks synth --n 24 --seed 7 --size small --out "$$synth/synth" --quiet && \
	bin/kernelgate tasks check "$$synth/synth"

clean:
	rm -rf bin
