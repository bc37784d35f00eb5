#!/usr/bin/env bash
# The lines that open every GPU log: the GPU, its driver, clocks and power limit, the CUDA
# compiler, the time, and the commit (from an untracked COMMIT file, where there is one).
# Sourced by gpu_session.sh and candidate_gpu.py: gpu_header prints them.
gpu_header() {
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv 2>&1
    nvcc --version | tail -n 1
    date -u '+%Y-%m-%d %H:%M UTC'
    [ -f COMMIT ] && cat COMMIT
}
