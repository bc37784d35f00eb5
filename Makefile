# gemm.md is the whole program: this file tangles it into gemm.cu and builds ./gemm.
#
#   make                         build ./gemm with the configuration written in gemm.md
#   make TYPE=F16_IN_F32_OUT MNK=32x8x16 TRANSPOSE_A=1 TRANSPOSE_B=0 ARCH=sm_90
#                                the same, with any of those settings overridden
#   make DEVICE=1                build for GPU 1 of this machine (as nvidia-smi numbers them)
#   make html                    render the post, gemm.html
#   make test                    everything CI runs (no GPU needed)
#   make check-gpu               every configuration, verified on the GPU in this machine
#   make sweep                   kernel and cuBLAS over sizes and type pairs, tabulated and plotted
#   make peers                   gemm-cutlass: ./gemm with CUTLASS's GEMMs beside the kernels,
#                                for the same settings (CUTLASS's headers: peers/requirements.txt)

NVCC    ?= nvcc
PYTHON  ?= python3
NVFLAGS ?= -O3 -std=c++20 -lineinfo -Xcompiler -Wall

# Make variables override the defaults written in gemm.md. The type pairs and shapes are
# listed once, in gemm.md (./gemm --describe prints them): a TYPE or MNK that names none
# stops the build with a compile-time message that lists them.
CONFIG :=
ifneq ($(TYPE),)
  ifneq ($(words $(TYPE)),1)
    $(error TYPE=$(TYPE) must be one type pair, such as F16_IN_F32_OUT)
  endif
  CONFIG += -DTYPE_FROM_MAKE -D$(TYPE)
endif
ifneq ($(MNK),)
  ifneq ($(words $(MNK)),1)
    $(error MNK=$(MNK) must be one WMMA shape, such as 16x16x16)
  endif
  CONFIG += -DMNK_FROM_MAKE=$(MNK) -DMNK_$(MNK)
endif
ifneq ($(TRANSPOSE_A),)
  ifneq ($(words $(TRANSPOSE_A)),1)
    $(error TRANSPOSE_A=$(TRANSPOSE_A) must be 0 or 1)
  endif
  ifeq ($(filter $(TRANSPOSE_A),0 1),)
    $(error TRANSPOSE_A=$(TRANSPOSE_A) must be 0 or 1)
  endif
  CONFIG += -DTRANSPOSE_A=$(TRANSPOSE_A)
endif
ifneq ($(TRANSPOSE_B),)
  ifneq ($(words $(TRANSPOSE_B)),1)
    $(error TRANSPOSE_B=$(TRANSPOSE_B) must be 0 or 1)
  endif
  ifeq ($(filter $(TRANSPOSE_B),0 1),)
    $(error TRANSPOSE_B=$(TRANSPOSE_B) must be 0 or 1)
  endif
  CONFIG += -DTRANSPOSE_B=$(TRANSPOSE_B)
endif

# The GPU to build for: ARCH if given, else GPU number DEVICE of this machine (by default
# its first, 0), else, on a machine without one, a set that covers the A100 (sm_80), the
# Jetson AGX Orin (sm_87) and Hopper (sm_90a), with PTX for newer GPUs. Turing (sm_75) is
# not in the set: bfloat16, tf32 and double need sm_80, and the build stops for a GPU
# older than its pair; make ARCH=sm_75 (or make on it) builds the pairs that run there.
# Hopper is built as sm_90a, whose code has the wgmma and setmaxnreg instructions of
# the Hopper kernel; it is spelled with -gencode, because -arch=sm_90a also runs a plain
# sm_90 pass, which rejects them.
HOPPER := -gencode arch=compute_90a,code=sm_90a
ifneq ($(words $(DEVICE)),$(filter 0 1,$(words $(DEVICE))))
  $(error DEVICE=$(DEVICE) must be one GPU, such as 0 (nvidia-smi -L lists them))
endif
ifneq ($(ARCH),)
  ifneq ($(DEVICE),)
    $(error ARCH=$(ARCH) and DEVICE=$(DEVICE) both name the GPU to build for: give one)
  endif
  BUILT_ARCH := $(ARCH)
else
  GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i $(or $(DEVICE),0) 2>/dev/null | tr -d ' .')
  ifeq ($(GPU_CC),90)
    BUILT_ARCH := sm_90a
  else ifneq ($(GPU_CC),)
    BUILT_ARCH := sm_$(GPU_CC)
  else ifneq ($(DEVICE),)
    $(error DEVICE=$(DEVICE): nvidia-smi finds no such GPU in this machine (nvidia-smi -L lists them))
  endif
endif
ifeq ($(BUILT_ARCH),sm_90a)
  GENCODE := $(HOPPER)
else ifneq ($(BUILT_ARCH),)
  GENCODE := -arch=$(BUILT_ARCH)
else
  GENCODE := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_87,code=sm_87 \
             $(HOPPER) -gencode arch=compute_90,code=compute_90
endif

# cuBLAS is linked unless CUBLAS=0; without it ./gemm needs only the CUDA runtime.
CUBLAS ?= 1
ifeq ($(filter $(CUBLAS),0 1),)
  $(error CUBLAS=$(CUBLAS) must be 0 or 1)
endif
ifeq ($(CUBLAS),1)
  CONFIG += -DUSE_CUBLAS=1
  LIBS   := -lcublas -lcublasLt -ldl
else
  CONFIG += -DUSE_CUBLAS=0
  LIBS   := -ldl
endif

# The report's "Built with" line gives NVFLAGS and ARCH as make had them, from a header made
# here, which only make's builds include. Each \ and " of NVFLAGS is escaped twice: once for
# the line, a shell command with NVFLAGS="...", and once for the C string that holds it.
escape = $(subst ",\",$(subst \,\\,$(1)))
# --version names the commit that last changed gemm.md, and says where the file has changed since.
GEMM_COMMIT := $(shell git log -1 --format=%h -- gemm.md 2>/dev/null)
ifneq ($(GEMM_COMMIT),)
  ifneq ($(shell git diff --quiet HEAD -- gemm.md 2>/dev/null; echo $$?),0)
    GEMM_COMMIT := $(GEMM_COMMIT), with changes not committed
  endif
endif
define BUILT_WITH
#define BUILT_NVFLAGS "$(call escape,$(call escape,$(NVFLAGS)))"
#define BUILT_ARCH "$(BUILT_ARCH)"
$(if $(GEMM_COMMIT),#define GEMM_COMMIT "gemm.md at $(GEMM_COMMIT)")
endef

ALLFLAGS := $(NVFLAGS) $(GENCODE) $(CONFIG) -include build/built_with.h

# Rebuild when the flags change, not only when gemm.md does.
$(shell mkdir -p build && echo '$(ALLFLAGS) $(LIBS)' | cmp -s - build/flags || echo '$(ALLFLAGS) $(LIBS)' > build/flags)
ifneq ($(file <build/built_with.h),$(BUILT_WITH))
  $(file >build/built_with.h,$(BUILT_WITH))
endif

.PHONY: all html screenshot test check-gpu sweep peers clean

all: gemm

gemm.cu: gemm.md tangle.py
	$(PYTHON) tangle.py gemm.md -o gemm.cu

gemm: gemm.cu build/flags build/built_with.h
	$(NVCC) $(ALLFLAGS) -o $@ gemm.cu $(LIBS)

# ---- the post ----
html: gemm.html

gemm.html: gemm.md $(wildcard post/*) $(wildcard post/figures/*) $(wildcard results/*.svg)
	sh post/render.sh gemm.md gemm.html

screenshot: gemm.html
	$(PYTHON) post/browser_check.py gemm.html --screenshot gemm.png

# ---- tests: a virtual environment with pinned packages, made on first use ----
VENV := .venv
# The pinned matplotlib, pillow and contourpy need Python 3.11 or newer: say so in one line
# before making an environment that pip cannot fill.
$(VENV)/ok: tests/requirements.txt scripts/requirements-sweep.txt
	@said=$$($(PYTHON) --version 2>&1 | head -n 1); \
	version=$$(echo "$$said" | awk '$$1 == "Python" && split($$2, v, ".") >= 2 { print v[1] * 1000 + v[2] }'); \
	if [ -z "$$version" ] || [ "$$version" -lt 3011 ]; then \
		echo "$(VENV), the environment of make test and make sweep, needs Python 3.11 or newer; $(PYTHON) is $${said:-not found} (give another with PYTHON=...)" >&2; \
		exit 1; \
	fi
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-r tests/requirements.txt -r scripts/requirements-sweep.txt
	touch $@

test: $(VENV)/ok
	$(VENV)/bin/python -m pytest -q tests

check-gpu:
	$(PYTHON) scripts/check_gpu.py

# Times every type pair, kernel and cuBLAS, over sizes 256..16384 on the GPU
# present; writes results/<gpu>-<date>.csv, .md and .svg, with the pinned
# matplotlib of the environment that `make test` uses.
sweep: $(VENV)/ok
	$(VENV)/bin/python scripts/sweep.py run

# The same settings as ./gemm's; peerlib.py installs CUTLASS's headers into build/cutlass/ first.
peers:
	$(PYTHON) scripts/peerlib.py build$(if $(TYPE), --type $(TYPE))$(if $(MNK), --shape $(MNK))$(if $(TRANSPOSE_A), --transpose-a $(TRANSPOSE_A))$(if $(TRANSPOSE_B), --transpose-b $(TRANSPOSE_B))$(if $(BUILT_ARCH), --arch $(BUILT_ARCH))

clean:
	rm -rf gemm gemm-cutlass gemm.cu gemm.html gemm.png build
