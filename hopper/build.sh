#!/bin/sh
# A first Hopper kernel (TMA, mbarriers, wgmma), outside gemm.md until it has run on a GPU.
# Builds 12 kernel instantiations (3 type pairs x 4 layouts), about 30 s.
#   sh build.sh      build
#   sh build.sh -v   build with ptxas register / spill report per instantiation
# Prints "BUILD WARNING" if nvcc/ptxas warn, in particular C7508 (setmaxnreg
# ignored) or C7510 (wgmma serialized); exits 1 only if nvcc fails.
cd "$(dirname "$0")" || exit 1
V=""
[ "${1:-}" = "-v" ] && V="-Xptxas -v"
log=$(mktemp) || exit 1
if ! nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo $V \
        -o wgmma_proto wgmma_proto.cu -lcublas >"$log" 2>&1; then
    cat "$log"; rm -f "$log"; echo "BUILD FAILED"; exit 1
fi
cat "$log"
if grep -q "C7508\|C7510" "$log"; then
    echo "BUILD WARNING: ptxas ignored setmaxnreg (C7508) or serialized wgmma (C7510): results stay valid, speed will not"
elif grep -qi "warning" "$log"; then
    echo "BUILD WARNING: see the compiler output above"
fi
if [ -n "$V" ]; then
    echo "ptxas summary (registers / spills per instantiation, 12 expected):"
    grep -E "Used [0-9]+ registers|spill stores" "$log" | paste - - | sed 's/  */ /g' | sort | uniq -c
fi
rm -f "$log"
