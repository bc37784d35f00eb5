// CUTLASS as a peer of ./gemm: the configurations it runs, and how the two sides talk.
//
// gemm-cutlass is ./gemm with more rows in its kernel table, one per configuration listed
// here. scripts/peerlib.py builds it: gemm.cu with peers/cutlass_rows.h included before the
// kernel table (no CUTLASS there), linked with one object per configuration, each compiled
// from peers/cutlass_config.cu with CUTLASS's headers. Both sides include this file, which
// includes no CUTLASS either; both include it where gemm.md's type pair, Pair, and its
// layout, TRANSPOSE_A and TRANSPOSE_B, are known.
#pragma once
#include <stdint.h>

// One GEMM as gemm.cu stores it: A, B and C row-major (A and B transposed where TA and TB
// say), padded, with the padded sizes; C is read (times beta) and overwritten. The pair's
// element types and the layout are in the type, so that an object built for another pair or
// layout does not link.
template <typename In, typename Acc, typename C, int TA, int TB>
struct PeerCall {
    const In *A, *B;
    C *out;
    int64_t M, N, K;
    int64_t lda, ldb, ldc;
    Acc alpha, beta;
};

// CUTLASS's multistage GEMM for sm80 (and later GPUs), the kind its profiler searches: the
// block tile's M and N, the bytes of K in a stage (64: 32 16-bit elements, 64 8-bit ones,
// 16 tf32 ones), the warp tile's M and N, and the stages of the cp.async pipeline. The
// first is CUTLASS's default configuration for 16-bit inputs.
#define CUTLASS_SM80(X)                           \
    X(cutlass80_128x256_s3, 128, 256, 64, 64, 64, 3) \
    X(cutlass80_256x128_s3, 256, 128, 64, 64, 64, 3) \
    X(cutlass80_128x128_s5, 128, 128, 64, 64, 64, 5) \
    X(cutlass80_128x128_s4, 128, 128, 128, 64, 64, 4) \
    X(cutlass80_64x128_s4, 64, 128, 128, 32, 64, 4)

// CUTLASS's warp-specialized GEMM for Hopper (sm_90a), built by its collective builder with
// TMA copies and wgmma: the schedule (Cooperative: two consumer warp groups share a tile;
// Pingpong: each takes a tile of its own, one storing while the other multiplies), the block
// tile's M and N, the bytes of K in a stage, and the blocks of a cluster along M (2: two
// blocks on neighbouring rows share B's tile, copied once and multicast to both).
#define CUTLASS_SM90(X)                                          \
    X(cutlass90_cooperative_128x256_c1, Cooperative, 128, 256, 128, 1) \
    X(cutlass90_cooperative_128x256_c2, Cooperative, 128, 256, 128, 2) \
    X(cutlass90_pingpong_128x128_c1, Pingpong, 128, 128, 128, 1)       \
    X(cutlass90_pingpong_128x128_c2, Pingpong, 128, 128, 128, 2)

// Each configuration is one function: given a call, it runs the GEMM and returns NULL, or
// CUTLASS's complaint; given NULL, it returns why it does not take this pair and layout, or
// NULL. A template (of nothing), so that each object instantiates only its own.
typedef PeerCall<Pair::in_t, Pair::acc_t, Pair::c_t, TRANSPOSE_A, TRANSPOSE_B> Peer;
#define PEER_DECLARE(name, ...) template <int = 0> const char *name(const Peer *call);
CUTLASS_SM80(PEER_DECLARE)
CUTLASS_SM90(PEER_DECLARE)
