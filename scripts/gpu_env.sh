# Sourced by the scripts that need a GPU: one clear message and exit status 3
# when there is none, and the compute capability of the first GPU in $cc.
#   . scripts/gpu_env.sh NAME_OF_THE_SCRIPT [hopper]
# With "hopper", also exit 3 unless that GPU is of compute capability 9.0 (the Hopper kernel's).
gpu_script=$1
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "$gpu_script: no GPU: nvidia-smi is not on PATH; this script times or profiles the GPU" >&2
    exit 3
fi
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
if [ -z "$cc" ]; then
    echo "$gpu_script: no GPU: nvidia-smi reports none" >&2
    exit 3
fi
if ! command -v nvcc >/dev/null 2>&1; then
    echo "$gpu_script: nvcc is not on PATH; this script needs the CUDA toolkit" >&2
    exit 3
fi
# The nvcc target for that GPU: Hopper as sm_90a, whose code has the Hopper kernel's
# instructions (spelled with -gencode: -arch=sm_90a also runs a plain sm_90 pass).
if [ "$cc" = 90 ]; then target="-gencode arch=compute_90a,code=sm_90a"; else target="-arch=sm_$cc"; fi
if [ "${2:-}" = hopper ] && [ "$cc" != 90 ]; then
    echo "$gpu_script: the Hopper kernel needs a GPU of compute capability 9.0" >&2
    exit 3
fi
