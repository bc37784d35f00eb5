#!/bin/sh
# A first Hopper kernel (TMA, mbarriers, wgmma), outside gemm.md until it has run on a GPU.
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo -o wgmma_proto wgmma_proto.cu -lcublas
