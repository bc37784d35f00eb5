// CUTLASS's GEMMs as rows of gemm.cu's kernel table. scripts/peerlib.py compiles gemm.cu with
// -DPEER_KERNELS='"cutlass_rows.h"', which includes this file just before the table; the
// table then ends with PEER_ROWS. No CUTLASS here: each configuration is a function in an
// object of its own (peers/cutlass_config.cu), declared by peers/cutlass.h.
#include "cutlass.h"

// Runs one configuration on gemm.cu's buffers, as cuBLAS runs: the padded sizes, C in place.
template <const char *(*F)(const Peer *)>
static void launch_peer(const Gpu *g, c_t *C)
{
    const Sizes *s = &g->s;
    const Peer call = {g->A, g->B, C, s->Mp, s->Np, s->Kp,
                       TRANSPOSE_A ? s->Mp : s->Kp, TRANSPOSE_B ? s->Kp : s->Np, s->Np, g->alpha, g->beta};
    if (const char *why = F(&call))
        fail(EXIT_CUDA, "CUTLASS refused a GEMM of %lld x %lld x %lld: %s", (long long)s->Mp,
             (long long)s->Np, (long long)s->Kp, why);
}

// Why a configuration does not take this pair in this layout (its own answer), or NULL.
template <const char *(*F)(const Peer *)>
static const char *peer_unavailable(const cudaDeviceProp *)
{
    return F(NULL);
}

// The block tile, for the CSV's tile column: K in elements of this pair.
template <int BM, int BN, int KB>
static const char *peer_tile(const Options *, const Plan *, const Step *, bool *forced)
{
    static char name[32];
    snprintf(name, sizeof name, "%dx%dx%d", BM, BN, KB / (int)sizeof(in_t));
    *forced = false;
    return name;
}

template <const char *WHAT>
static void report_peer(const Options *, const Plan *, const Outcome *)
{
    field("Kernel", "%s", WHAT);
}

#define PEER_WHAT80(id, bm, bn, kb, wm, wn, stages)                                                \
    static constexpr char what_##id[] = "CUTLASS 4.2, cutlass::gemm::device::Gemm for sm80: " #bm  \
        " x " #bn " block tiles, " #kb " bytes of K a stage, " #wm " x " #wn " warp tiles, " #stages \
        " stages of cp.async, mma.sync";
#define PEER_WHAT90(id, schedule, bm, bn, kb, cm)                                                  \
    static constexpr char what_##id[] = "CUTLASS 4.2, the collective builder's sm90 GEMM, " #schedule \
        " schedule: " #bm " x " #bn " block tiles, " #kb " bytes of K a stage, clusters of " #cm   \
        " along M, TMA and wgmma";
CUTLASS_SM80(PEER_WHAT80)
CUTLASS_SM90(PEER_WHAT90)

#define PEER_ROW80(id, bm, bn, kb, wm, wn, stages)                                                 \
    {.name = #id, .title = #id, .note = "CUTLASS",                                                 \
     .pairs = "the 16-bit, tf32 and 8-bit pairs", .description = what_##id,                        \
     .for_pair = [](PairFacts p) { return p.wmma && !p.dmma; }, .min_cc = 80, .unrounded = true,   \
     .unavailable = peer_unavailable<id<0>>, .tile = peer_tile<bm, bn, kb>,                        \
     .launch = launch_peer<id<0>>, .report = report_peer<what_##id>},
#define PEER_ROW90(id, schedule, bm, bn, kb, cm)                                                   \
    {.name = #id, .title = #id, .note = "CUTLASS, Hopper",                                         \
     .pairs = "the 16-bit, tf32, 8-bit and FP8 pairs", .description = what_##id,                   \
     .for_pair = [](PairFacts p) { return p.hopper; }, .cc = 90, .unrounded = true,                \
     .unavailable = peer_unavailable<id<0>>, .tile = peer_tile<bm, bn, kb>,                        \
     .launch = launch_peer<id<0>>, .report = report_peer<what_##id>},

// The Hopper configurations are built only into a Hopper build (peerlib.py says -DPEER_SM90=1).
#if PEER_SM90
#define PEER_ROWS CUTLASS_SM80(PEER_ROW80) CUTLASS_SM90(PEER_ROW90)
#else
#define PEER_ROWS CUTLASS_SM80(PEER_ROW80)
#endif
