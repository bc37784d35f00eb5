// wgmma_proto.cu -- standalone Hopper (sm_90a) GEMM prototype:
//   TMA bulk tensor loads + mbarrier pipeline + wgmma.mma_async (inline PTX).
//
//   D = alpha * op(A) * op(B) + beta * C          (C, D: M x N, row-major, pitch N)
//
// Type pairs (--type, each one kernel instantiation):
//   F16_IN_F32_OUT  : A, B half;  f32 accumulators; C, D float   (default)
//   BF16_IN_F32_OUT : A, B bf16;  f32 accumulators; C, D float
//   F16_IN_OUT      : A, B half;  f16 accumulators; C, D half; the epilogue
//                     computes alpha*x + beta*c in half (round-to-nearest,
//                     two products and one sum, no fused multiply-add)
// Layouts (--ta, --tb; default 0 1), all stored row-major with a pitch:
//   ta=0: A stored M x K  (K contiguous)  = K-major for wgmma     op(A) = A
//   ta=1: A stored K x M  (M contiguous)  = M-major (imm-trans-a=1) op(A) = A^T
//   tb=0: B stored K x N  (N contiguous)  = N-major (imm-trans-b=1) op(B) = B
//   tb=1: B stored N x K  (K contiguous)  = K-major for wgmma     op(B) = B^T
//
// Pitches: TMA needs every global stride to be a multiple of 16 bytes [F5],
// i.e. the contiguous dimension of a stored 16-bit operand must be padded to a
// multiple of 8 elements.  By default the program allocates padded pitches
// (pitch = contiguous dim rounded up to 8; the pad elements are filled with NaN
// so that a kernel which reads them shows up as NaN output).  With --no-pad the
// pitch equals the dimension and the program exits 2 if that dimension is not a
// multiple of 8, naming it.  M, N, K are otherwise arbitrary: TMA zero-fills
// what lies outside the matrix and the epilogue bounds-checks every store.
//
// Build (see build.sh):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo
//        -o wgmma_proto wgmma_proto.cu -lcublas
//
// Usage: ./wgmma_proto M N K [--type T] [--ta 0|1] [--tb 0|1] [--check]
//                            [--repeat R] [--seed S] [--no-pad]
//                            [--diag a|b] [--mn-lbo BYTES] [--mn-sbo BYTES]
//                            [--group G] [--cluster 1|2]
//   Always: runs the kernel once, runs cuBLAS once, compares ALL elements.
//   --check: additionally compares ~1000 sampled elements against a CPU
//            double-precision reference (for both our kernel and cuBLAS, so a
//            wrong cuBLAS call would be noticed too) and prints sample values.
//   --repeat R: timed launches (median reported), default 10; 0 = no timing.
//   --diag b: layout decoder for operand B.  op(A) is a 0/1 selection matrix
//            (op(A)[m][k] = 1 iff k == m % 64), op(B)[k][n] holds a distinct
//            16-bit pattern per (k % 64, n % 256), alpha = 1, beta = 0, so every
//            D[m][n] must equal exactly one op(B) element; a wrong element is
//            decoded back to the (k, n) that was actually read.
//   --diag a: the same for operand A (op(B)[k][n] = 1 iff k == n % 64,
//            op(A)[m][k] distinct per (m % 128, k % 64)).  No cuBLAS, no timing.
//   --mn-lbo / --mn-sbo: override the LBO / SBO written into the descriptors of
//            MN-major operands (defaults 8192 / 1024, see [F11]-[F12]); a
//            debugging aid for the first GPU run, see the end of [F12].
//   --group G: block order ("raster", see map_tile()).  The grid is 1-D; the
//            linear block id walks down G block rows (M) before it moves to
//            the next 256-wide block column (N), so that a wave of resident
//            blocks reads a G-row band of A and only ~132/G columns of B
//            instead of all of B.  G = 1 (default) is exactly the order of
//            the former 2-D grid (blockIdx.x over N fastest, then M).
//   --cluster 2: thread-block clusters of 2 blocks along M (block rows m0 and
//            m0+128 of the same N block).  Each block loads its own A tile and
//            HALF of the B tile, multicast into the shared memory of both
//            blocks ([F17]); the "empty" barriers then count the releases of
//            both blocks' consumers ([F18]).  Default 1: no cluster launch, the
//            pipeline is exactly the single-block one.
// Exit codes: 0 ok, 1 numerical check failed, 2 usage / CUDA / driver error,
//             3 device is not compute capability 9.0 (Hopper).
//
// ----------------------------------------------------------------------------
// Facts this file relies on (looked up, restated in my own words):
//
// [F1] wgmma shared-memory matrix descriptor (PTX ISA 9.7.15.5.1.2.2, "Matrix
//      Descriptor Format"): a 64-bit value;
//        bits  0-13 : encode(matrix start address)
//        bits 16-29 : encode(leading dimension byte offset, LBO)
//        bits 32-45 : encode(stride dimension byte offset, SBO)
//        bits 49-51 : matrix base offset (0 when the swizzle pattern starts on
//                     its natural boundary: 1024 B for the 128-byte swizzle)
//        bits 62-63 : swizzle mode, 0 none, 1 = 128B, 2 = 64B, 3 = 32B
//      where encode(x) = (x & 0x3FFFF) >> 4.
// [F2] LBO / SBO meaning for K-major (PTX ISA 9.7.15.5.1.2.1.1 "Leading
//      Dimension Byte Offset" and 9.7.15.5.1.2.1.2 "Stride Dimension Byte
//      Offset"): for K-major operands with a swizzled layout, LBO is not used
//      (it is "assumed to be 1"); SBO is the byte offset from one group of 8
//      rows to the next group of 8 rows.  With 128-byte rows that is 8*128 =
//      1024.  (MN-major: see [F11], [F12].)
// [F3] Shared Memory Matrix Layout (PTX ISA 9.7.15.5.1.2): imm-trans-a/b = 0
//      selects K-major for A/B.  The 128B-swizzle K-major atom is 8 rows x 8
//      16-byte units (8 rows x 64 halves).  Start addresses must be 16-byte
//      aligned.
// [F4] Accumulator fragment of wgmma .m64nNk16 with f32 D (PTX ISA
//      9.7.15.5.1.1.1, Figure "WGMMA .m64nNk16 register fragment layout for
//      accumulator matrix D"; also the pyptx.dev "Fragment Layouts" guide):
//      N/2 f32 registers per thread.  Warp w (0..3) of the warpgroup owns rows
//      16w..16w+15.  For register i of lane l:
//          row = 16*w + l/4 + 8*((i/2) % 2)
//          col = 8*(i/4) + 2*(l%4) + (i%2)
//      i.e. per 8-column group: {(r,c),(r,c+1),(r+8,c),(r+8,c+1)}.
// [F5] cuTensorMapEncodeTiled (cuda.h doc comment, CUDA 13.0): globalAddress
//      16-B aligned; globalStrides (rank-1 entries, bytes) multiple of 16 and
//      < 2^40; boxDim[i] <= 256 and boxDim[0]*elementsize a multiple of 16 B;
//      with SWIZZLE_128B the inner box extent in bytes must be <= 128; OOB fill
//      NONE means out-of-bound elements are filled with zeros (the other option
//      is NaN "request zero FMA").  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 is a 2-byte
//      type of the same enum as FLOAT16.
// [F6] cudaGetDriverEntryPoint is deprecated in CUDA 13 headers;
//      cudaGetDriverEntryPointByVersion(symbol, &fn, cudaVersion, flags,
//      &status) is the replacement (cuda_runtime_api.h, CUDA 13.0).  We ask for
//      the CUDA 12.0 ABI of cuTensorMapEncodeTiled (PFN_..._v12000 in
//      cudaTypedefs.h).
// [F7] setmaxnreg (PTX ISA "setmaxnreg"): immediate in [24, 256], multiple of
//      8; all warps of a warpgroup must execute the same setmaxnreg; .inc
//      blocks until the per-CTA pool has enough registers.  The kernel must be
//      compiled with a known per-thread register maximum (here from
//      __launch_bounds__(384, 1) -> 65536/384 -> 168 registers).
//      Budget: 128*40 + 256*232 = 64512 = 384*168, so the pool balances.
// [F8] wgmma async ordering (PTX ISA wgmma.fence / commit_group / wait_group):
//      wgmma.fence is needed before the first wgmma.mma_async and whenever the
//      accumulator registers were touched by other instructions; several
//      in-flight wgmma.mma_async of the same shape may accumulate into the same
//      registers without extra fences.
// [F9] mbarrier parity waits: mbarrier.try_wait.parity P succeeds once the
//      phase with parity P has completed.  A freshly initialised barrier is in
//      phase 0, so waiting for parity 1 succeeds immediately (the "previous"
//      phase counts as complete) -- used by the producer for its first pass
//      over the (initially empty) stages.
// [F10] TMA SWIZZLE_128B stores 16-byte chunk j of box row r at chunk position
//      (j XOR (r % 8)) inside that row's 128 bytes (rows 128 B apart), the
//      pattern repeating every 8 rows = 1024 B; wgmma's 128B swizzle mode
//      undoes exactly this XOR on the address bits [4:6] ^= [7:9], so the
//      smem tiles must start on 1024-byte boundaries (base offset 0 in [F1]).
//      Stepping K by 16 halves inside the 128-byte row is done by adding 32 B
//      to the descriptor start address: the XOR is applied to the final
//      address bits, and row bits [7:9] are unaffected by a +32/+64/+96 offset.
//      The XOR is a function of the physical address only, so it is the same
//      for K-major and MN-major tiles; only what a 128-byte "row" holds differs
//      (K values for K-major, M or N values for MN-major).
// [F11] MN-major layout with the 128B swizzle (PTX ISA 9.7.15.5.1.2 Table
//      "swizzle atom layout" and 9.7.15.5.1.2.1.3 "Canonical Layouts"; read in
//      a markdown copy of the PTX ISA found through the code search, version
//      not stated; the same text is on ptx.poole.ai).  In units of 128-bit
//      elements the 128B MN-major atom is 8 x 8; for 16-bit types it is 64
//      (MN) x 8 (K).  The canonical layout in CuTe shape:stride form over
//      (MN index, K index), in elements, is
//          ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO)),  then Swizzle<3,4,3>
//      with T = 128 / bits-per-element = 8 here.  Read out:
//        * MN: 8*T = 64 consecutive MN elements are contiguous (128 bytes = one
//          row of the atom); the m-th block of 64 MN elements starts LBO
//          further;
//        * K: consecutive K values are 8T = 64 elements = 128 bytes apart (the
//          8 rows of the atom); the k-th group of 8 K values starts SBO further.
//      The ISA's MN-major bf16 examples pin the roles down: 64B swizzle,
//      ((8,4,2),(8,2)) : ((1,8,256),(32,512)) with LBO = 256*2 B and SBO =
//      512*2 B; 32B swizzle, ((8,2,2),(8,2)) : ((1,8,128),(16,256)) with LBO =
//      128*2 B, SBO = 256*2 B.  In both the m-stride is LBO and the k-stride is
//      SBO.  So a 1024-B atom = 8 K-rows of 128 B, each row 64 MN-contiguous
//      elements: exactly what a TMA box whose inner dimension is MN (64
//      elements) writes with SWIZZLE_128B, box row index = K [F10].
// [F12] LBO / SBO definitions for MN-major (PTX ISA 9.7.15.5.1.2.1.1 and
//      9.7.15.5.1.2.1.2; the tcgen05 section 9.7.16.3 repeats them), for the
//      matrix normalised to 128-bit elements:
//        LBO, MN-major swizzled: offset from the first (swizzle-byte-size/16)
//             rows to the next (swizzle-byte-size/16) rows -- for 128B, 8 rows
//             of 128-bit elements = 64 halves along MN;
//        SBO, MN-major swizzled: offset from the first 8 columns to the next 8
//             columns -- 8 K values.
//      Consistent with [F11]: LBO = stride between 64-wide MN blocks, SBO =
//      stride between 8-deep K groups (the roles are NOT those of K-major [F2]).
//      Ambiguity: the words "rows" and "columns" of the normalised MN-major
//      matrix are not defined in that table; I take the meaning from the
//      canonical-layout table and its worked examples, which are explicit.
//      Because this is the least certain point, the MN-major LBO/SBO are kernel
//      arguments (--mn-lbo / --mn-sbo) so a failing run can try the swapped
//      reading (--mn-lbo 1024 --mn-sbo 8192) without recompiling.
//
//      Derivation for this kernel (16-bit elements, BK = 64 K per stage):
//      * A, M-major (ta=1): stage tile 128 (M) x 64 (K) = 16384 B, stored as
//        two "atom columns" (M 0-63, M 64-127) of 64 K-rows x 128 B = 8192 B;
//        K-row r of column j at a_stage + j*8192 + r*128, 16-B chunks XOR-ed by
//        r%8 [F10].  One TMA box {64 (M, inner; 128 B, the SWIZZLE_128B
//        maximum [F5]), 64 (K)} fills one column: 2 boxes per stage.
//        Consumer warpgroup cw computes M rows 64cw..64cw+63 = column cw, so
//        its wgmma (M = 64 = one atom, m = 1) never follows LBO; LBO is still
//        set to the true column stride 8192.  SBO = 8 K-rows * 128 B = 1024.
//      * B, N-major (tb=0): stage tile 256 (N) x 64 (K) = 32768 B, four
//        columns of 8192 B, 4 boxes {64 (N), 64 (K)}.  One wgmma with N = 256
//        spans m = 4 blocks along N: LBO = 8192, SBO = 1024.
//      * k16 step: the kk-th group of 16 K-rows of a column starts kk*16*128 =
//        kk*2048 B further.  2048 is a multiple of 1024, so every start
//        address stays on the swizzle pattern boundary and the base offset
//        stays 0 [F1].  (K-major keeps +32 B per k16 inside the row [F10].)
//      * Encoded: LBO 8192 >> 4 = 512, SBO 1024 >> 4 = 64 (14-bit fields).
// [F13] wgmma.mma_async operands (PTX ISA, instruction wgmma.mma_async,
//      "Syntax" and "Description"): for .f16 inputs
//        wgmma.mma_async.sync.aligned.shape.dtype.f16.f16 d, a-desc, b-desc,
//            scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b;
//      with .dtype in {.f16, .f32}; for .bf16 inputs the same form with
//      .dtype = .f32 only.  By default A is read "row-major" (M x K, K-major)
//      and B "column-major" (K x N, K-major); imm-trans-a/b = 1 transposes
//      (A becomes M-major, B N-major); the transpose exists only for .f16/.bf16
//      with descriptors, and imm-trans values are 0 or 1.
// [F14] f16 accumulators (PTX ISA 9.7.15.5.1.1.1, table "Accumulator D"):
//      .dtype .f16 uses N/4 .f16x2 registers, each holding two f16 elements,
//      the elements listed "low to high" as d0, d1, ..., d(N/2-1), and the
//      layout figure is the same one as for .f32 ([F4]).  So 32-bit register j
//      holds element 2j in its low 16 bits and element 2j+1 in its high 16
//      bits: row = 16w + l/4 + 8*(j%2), cols 8*(j/2) + 2*(l%4) + {0, 1}.
//      For m64n256: 64 registers (vs 128 for f32).
// [F15] cuBLAS (cublasGemmEx documentation, from memory, not re-found in the
//      search corpora): supported (compute, scale, A/B, C) combinations include
//      (CUBLAS_COMPUTE_32F, float, 16F, 32F), (CUBLAS_COMPUTE_32F, float,
//      16BF, 32F) and (CUBLAS_COMPUTE_16F, __half, 16F, 16F); with
//      CUBLAS_COMPUTE_16F alpha and beta must point to __half.  An unsupported
//      combination returns CUBLAS_STATUS_NOT_SUPPORTED (caught: exit 2).
// [F16] Half accumulation error (my own model, used for the F16_IN_OUT
//      tolerance; see tolerance_for()).
// [F17] TMA multicast (PTX ISA cp.async.bulk / cp.async.bulk.tensor, qualifier
//      .multicast::cluster; sm_90a): one instruction reads the box once and
//      writes it into the shared memory of every CTA whose %cluster_ctarank
//      bit is set in the 16-bit operand ctaMask, at the SAME CTA-relative
//      offset as the destination operand; the complete_tx signal is likewise
//      delivered to the mbarrier at the same CTA-relative offset in each
//      destination CTA.  So every CTA of the pair must lay out its shared
//      memory identically (true here: same kernel, same aligned base) and each
//      CTA's full barrier receives the bytes of both halves of B.
// [F18] mbarrier across a cluster (PTX ISA mbarrier.arrive, mapa, try_wait):
//      mapa.shared::cluster turns a shared::cta address into the
//      shared::cluster address of the same variable in the CTA of a given
//      rank; mbarrier.arrive{.release}{.cluster}.shared::cluster.b64 _, [addr]
//      arrives on a barrier of another CTA (no state result: the sink "_" is
//      required).  try_wait.parity{.acquire}{.cluster} is the matching wait.
//      An mbarrier's tx-count may go below zero (complete_tx before the
//      matching expect_tx); the phase completes only when the pending arrival
//      count AND the tx-count are both zero, so a peer's multicast bytes that
//      land before this CTA's own arrive.expect_tx cannot complete the phase.
// [F19] Cluster barrier (PTX ISA barrier.cluster): barrier.cluster.arrive
//      (.release) and barrier.cluster.wait (.acquire) are split; wait returns
//      once every non-exited thread of every CTA of the cluster has arrived.
//      Used (a) after mbarrier.init + fence.mbarrier_init.release.cluster, so
//      that no peer multicasts into / arrives on a barrier before it is
//      initialised, and (b) before exit, so that no CTA leaves (and frees its
//      shared memory) while its peer may still arrive on its barriers.  A
//      CUDA launch attribute (cudaLaunchAttributeClusterDimension, through
//      cudaLaunchKernelEx) sets the cluster shape; the grid must be a multiple
//      of it, and the CTAs of one cluster are consecutive in blockIdx.x.
// ----------------------------------------------------------------------------

#include <cuda.h>              // CUtensorMap & enums only (no -lcuda)
#include <cudaTypedefs.h>      // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// ------------------------------- configuration ------------------------------
constexpr int BM = 128;                 // block tile rows (M)
constexpr int BN = 256;                 // block tile cols (N)
constexpr int BK = 64;                  // elements per k-tile = 128 bytes
constexpr int STAGES = 4;
constexpr int NUM_THREADS = 384;        // WG0 producer, WG1/WG2 consumers
constexpr int CONSUMER_WARPS = 8;       // arrivals per "empty" phase
constexpr int WG_M = 64;                // rows per consumer warpgroup
constexpr int WGMMA_K = 16;
constexpr int ELEM_BYTES = 2;           // f16 / bf16

constexpr int A_STAGE_BYTES = BM * BK * ELEM_BYTES;           // 16384
constexpr int B_STAGE_BYTES = BN * BK * ELEM_BYTES;           // 32768
constexpr int STAGE_TX_BYTES = A_STAGE_BYTES + B_STAGE_BYTES; // 49152
constexpr int TILE_BYTES = STAGES * STAGE_TX_BYTES;           // 196608
constexpr int BARRIER_BYTES = 2 * STAGES * 8;
constexpr int SMEM_ALIGN = 1024;
constexpr int SMEM_BYTES = TILE_BYTES + BARRIER_BYTES + SMEM_ALIGN;

// MN-major geometry ([F11], [F12]).
constexpr int MN_ATOM = 128 / ELEM_BYTES;                     // 64 M/N elements per 128-B row
constexpr int MN_COL_BYTES = BK * 128;                        // one atom column: 64 K-rows = 8192 B
constexpr int MN_KSTEP_BYTES = WGMMA_K * 128;                 // 16 K-rows = 2048 B
constexpr int KMAJ_KSTEP_BYTES = WGMMA_K * ELEM_BYTES;        // 32 B inside the 128-B row
constexpr uint32_t MN_LBO_DEFAULT = MN_COL_BYTES;             // stride between 64-wide MN blocks
constexpr uint32_t MN_SBO_DEFAULT = 8 * 128;                  // stride between 8-deep K groups
constexpr uint32_t KMAJ_LBO = 16;                             // encodes to 1 ("assumed 1") [F2]
constexpr uint32_t KMAJ_SBO = 8 * 128;                        // 8 rows of 128 B [F2]

constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;

static_assert(BK * ELEM_BYTES == 128, "one k-tile row must be exactly one 128-byte swizzle row");
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 1024 == 0, "stages must keep 1024-B alignment");
static_assert((WG_M * BK * ELEM_BYTES) % 1024 == 0, "per-warpgroup A slice must keep 1024-B alignment");
static_assert(WG_M * BK * ELEM_BYTES == MN_COL_BYTES,
              "K-major 64-row slice and M-major 64-wide atom column have the same size, so the "
              "per-warpgroup A offset is cw*8192 in both layouts");
static_assert(WG_M == MN_ATOM, "an M-major consumer warpgroup must cover exactly one atom column");
static_assert(BM % MN_ATOM == 0 && BN % MN_ATOM == 0, "tiles must be whole atom columns");
static_assert(MN_COL_BYTES % 1024 == 0 && MN_KSTEP_BYTES % 1024 == 0,
              "MN-major columns and k16 steps must stay on the 1024-B swizzle boundary");
static_assert((BM / MN_ATOM) * MN_COL_BYTES == A_STAGE_BYTES, "A: 2 atom columns fill a stage");
static_assert((BN / MN_ATOM) * MN_COL_BYTES == B_STAGE_BYTES, "B: 4 atom columns fill a stage");
static_assert(BM <= 256 && BN <= 256 && BK <= 256 && MN_ATOM <= 256, "TMA box dims are limited to 256");
static_assert(128 * PRODUCER_REGS + 256 * CONSUMER_REGS <= 65536, "register pool");

// Watchdog on mbarrier waits: a hung pipeline records who is stuck (in mapped
// host memory, printed by the host) and traps instead of hanging the GPU
// forever.  2^34 cycles is several seconds at H100 clocks.
#ifndef WGMMA_WATCHDOG
#define WGMMA_WATCHDOG 1
#endif
#define WATCHDOG_CYCLES (1LL << 34)

// ------------------------------ type pairs ----------------------------------
enum class Pair : int { F16_IN_F32_OUT = 0, F16_IN_OUT = 1, BF16_IN_F32_OUT = 2 };

template <Pair P> struct PairTraits;
template <> struct PairTraits<Pair::F16_IN_F32_OUT> {
  using In = __half;
  using Out = float;
  static constexpr bool kBf16 = false;      // wgmma .atype/.btype = .bf16?
  static constexpr bool kF16Acc = false;    // wgmma .dtype = .f16?
  static constexpr const char* kName = "F16_IN_F32_OUT";
};
template <> struct PairTraits<Pair::BF16_IN_F32_OUT> {
  using In = __nv_bfloat16;
  using Out = float;
  static constexpr bool kBf16 = true;
  static constexpr bool kF16Acc = false;
  static constexpr const char* kName = "BF16_IN_F32_OUT";
};
template <> struct PairTraits<Pair::F16_IN_OUT> {
  using In = __half;
  using Out = __half;
  static constexpr bool kBf16 = false;
  static constexpr bool kF16Acc = true;
  static constexpr const char* kName = "F16_IN_OUT";
};

// ------------------------------ error checking ------------------------------
static void report_watchdog();   // prints the device watchdog record, if any

#define CUDA_CHECK(call)                                                          \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      fprintf(stderr, "CUDA error at %s:%d: %s\n  call: %s\n  -> %s (%s)\n",      \
              __FILE__, __LINE__, __func__, #call, cudaGetErrorString(e_),        \
              cudaGetErrorName(e_));                                              \
      report_watchdog();                                                          \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

#define CUBLAS_CHECK(call)                                                        \
  do {                                                                            \
    cublasStatus_t s_ = (call);                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                            \
      fprintf(stderr, "cuBLAS error at %s:%d: %s -> status %d\n", __FILE__,      \
              __LINE__, #call, (int)s_);                                          \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

// ============================================================================
//                              device helpers
// ============================================================================
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}

// Producer: arrive once and announce how many bytes TMA will deliver.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
               :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}

// kCluster = false: the default .acquire.cta wait (all arrivals come from this
// CTA).  kCluster = true: .acquire.cluster, used by the producer of a cluster
// pair on its "empty" barrier, which also counts the release arrivals
// (.release.cluster) of the peer CTA's consumers [F18].
template <bool kCluster = false>
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  if constexpr (kCluster) {
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } else {
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
  return done != 0;
}

// ---- cluster helpers [F17]-[F19] ----
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_nctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}
// shared::cluster address of the variable at shared::cta address `addr` in the
// CTA of cluster rank `rank`.
__device__ __forceinline__ uint32_t mapa_shared(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
// Arrive on an mbarrier of another CTA of the cluster (address from mapa).
// Default semantics (.release.cta), as CUTLASS's ClusterBarrier::arrive(cta_id):
// the only thing the peer's producer must not overtake is this warpgroup's
// wgmma reads of the stage (async proxy), already complete at wgmma.wait_group;
// there is no generic-proxy write for a cluster-scope release to publish.
// .release.cluster compiles to MEMBAR.ALL.CTA + MEMBAR.ALL.GPU + ERRBAR +
// CGAERRBAR on sm_90 -- a GPU-scope fence per consumer warp per k-tile.
__device__ __forceinline__ void mbar_arrive_remote(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n"
               :: "r"(cluster_addr) : "memory");
}
// Split cluster barrier, not .aligned: the producer warp reaches it diverged
// (lane 0 ran the load loop), and every thread arrives exactly once per use.
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

// Watchdog record, placed in mapped (zero-copy) pinned host memory so the host
// can still read it after the kernel traps.  Written with plain volatile stores
// (no printf: a function call inside the consumer loop would make ptxas
// serialize the wgmma pipeline, warning C7510).
struct WatchdogRecord {
  int flag;            // 1 = a wait timed out
  int block, thread, role, kt, stage, parity;
  int rank, nrank;     // %cluster_ctarank / %cluster_nctarank (0 / 1 without a cluster)
};

static volatile WatchdogRecord* g_watchdog_host = nullptr;   // mapped pinned memory

// Block order of the launch (see map_tile), kept so that the watchdog report
// can name the tile of a stuck block.
struct RasterParams {
  int tiles_m = 0, tiles_n = 0, cluster = 1, group_c = 1;
};
static RasterParams g_raster;

// Linear block id -> (block row, block column) of the output tile.
//   cluster = 1 or 2 blocks per cluster along M; the CTAs of one cluster are
//   consecutive block ids [F19], rank = position inside the cluster.  A
//   "cluster row" is `cluster` consecutive block rows; the cluster rows are
//   rounded up, so with cluster 2 and an odd number of block rows the last
//   cluster's rank-1 block lies past M (it still loads and releases, it
//   stores nothing).
//   group_c = cluster rows per group: cluster ids walk down group_c cluster
//   rows of one block column, then the next column; after the last column
//   the next group of rows starts.  The last group may have fewer rows.
//   group_c = 1, cluster = 1: tile (id / tiles_n, id % tiles_n), the order of
//   the former 2-D grid.
__host__ __device__ __forceinline__ void map_tile(int bid, int rank, int tiles_m, int tiles_n,
                                                  int cluster, int group_c, int& tile_m,
                                                  int& tile_n) {
  const int cid = bid / cluster;                         // cluster id
  const int crows = (tiles_m + cluster - 1) / cluster;   // cluster rows
  const int per_group = group_c * tiles_n;               // clusters per full group
  const int g = cid / per_group;
  const int first = g * group_c;
  const int rows_here = (crows - first < group_c) ? crows - first : group_c;  // last group: fewer
  const int within = cid - g * per_group;
  tile_m = (first + within % rows_here) * cluster + rank;
  tile_n = within / rows_here;
}

static void report_watchdog() {
  if (g_watchdog_host == nullptr || g_watchdog_host->flag == 0) return;
  const volatile WatchdogRecord* w = g_watchdog_host;
  int tm = -1, tn = -1;
  if (g_raster.tiles_m > 0)
    map_tile(w->block, w->block % g_raster.cluster, g_raster.tiles_m, g_raster.tiles_n,
             g_raster.cluster, g_raster.group_c, tm, tn);
  fprintf(stderr,
          "[watchdog] the kernel trapped: block %d (tile row %d = M %d.., tile column %d = N "
          "%d..; cluster rank %d of %d) thread %d (%s) waited too long on the %s barrier of stage "
          "%d, k-tile %d, parity %d.\n",
          w->block, tm, tm * BM, tn, tn * BN, w->rank, w->nrank, w->thread,
          w->role == 0 ? "producer" : "consumer", w->role == 0 ? "EMPTY" : "FULL", w->stage,
          w->kt, w->parity);
  if (w->nrank <= 1) {
    fprintf(stderr,
            "  producer stuck on EMPTY -> consumers never released the stage; consumer stuck on "
            "FULL -> TMA bytes never arrived (bad tensor map / expect_tx count / box size).\n");
  } else {
    fprintf(stderr,
            "  cluster of %d: the EMPTY barrier counts 8 local + 8 REMOTE consumer-warp arrivals "
            "(from the peer, rank %d); the FULL barrier expects this block's A bytes plus BOTH "
            "halves of B (one multicast by this block, one by the peer).\n"
            "  producer stuck on EMPTY -> this block's or the peer's consumers never released "
            "the stage (missing remote arrive / mapa rank / wrong arrival count, or the peer is "
            "itself stuck: look for its own record, only one record survives).\n"
            "  consumer stuck on FULL -> a B half never arrived (peer's multicast missing, ctaMask "
            "wrong, box not 128 rows) or the expect_tx count is wrong.\n"
            "  A hang with no record at all would be the cluster barrier (barrier.cluster.wait, "
            "no timeout): some thread of the pair never reached barrier.cluster.arrive.\n",
            w->nrank, w->rank ^ 1);
  }
}

// role: 0 = producer waiting for "empty", 1 = consumer waiting for "full".
template <bool kCluster = false>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity, int role, int kt, int stage,
                                          WatchdogRecord* wd) {
  if (mbar_try_wait<kCluster>(bar, parity)) return;
#if WGMMA_WATCHDOG
  const long long t0 = clock64();
#endif
  while (!mbar_try_wait<kCluster>(bar, parity)) {
#if WGMMA_WATCHDOG
    if (clock64() - t0 > WATCHDOG_CYCLES) {
      volatile WatchdogRecord* v = wd;
      v->block = blockIdx.x;
      v->rank = static_cast<int>(cluster_ctarank());     // 0 / 1 without a cluster launch
      v->nrank = static_cast<int>(cluster_nctarank());
      v->thread = threadIdx.x;
      v->role = role;
      v->kt = kt;
      v->stage = stage;
      v->parity = static_cast<int>(parity);
      __threadfence_system();
      v->flag = 1;
      __threadfence_system();
      __trap();
    }
#else
    (void)role; (void)kt; (void)stage; (void)wd;
#endif
  }
}

// 2-D TMA load of one box into shared memory; completion is signalled on the
// mbarrier as "complete_tx" of the box's byte count.  Coordinates are given
// innermost first: c0 = index along the contiguous dimension, c1 = row index.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// The same, multicast [F17]: the box is written at offset `dst` of the shared
// memory of every CTA in `cta_mask` and complete_tx is signalled on the
// mbarrier at offset `bar` of each of them.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map,
                                                      uint32_t bar, int c0, int c1,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar),
         "h"(cta_mask)
      : "memory");
}

__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" :: "l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Descriptor fields other than the start address ([F1]): LBO, SBO, base offset
// 0 (every start address used here is on a 1024-B boundary plus, for K-major,
// 0/32/64/96 B inside the row [F10]), swizzle mode 1 = 128B.
__device__ __forceinline__ uint64_t desc_fields(uint32_t lbo_bytes, uint32_t sbo_bytes) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((lbo_bytes & 0x3FFFFu) >> 4) << 16;   // bits 16-29
  d |= static_cast<uint64_t>((sbo_bytes & 0x3FFFFu) >> 4) << 32;   // bits 32-45
  d |= static_cast<uint64_t>(1) << 62;                             // bits 62-63: 128B swizzle
  return d;
}
__device__ __forceinline__ uint64_t desc_with_addr(uint64_t fields, uint32_t saddr) {
  return fields | static_cast<uint64_t>((saddr & 0x3FFFFu) >> 4);  // bits 0-13
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}

// Tie the accumulator registers to a point in the instruction stream so the
// compiler cannot read them (epilogue) before a wgmma.wait_group, nor move
// writes to them (zero init) after a wgmma.fence.
__device__ __forceinline__ void acc_fence(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
__device__ __forceinline__ void acc_fence(uint32_t (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+r"(d[i]) :: "memory");
}

// Register lists of the accumulator operand: %0..%127 (f32, [F4]) or %0..%63
// (f16x2, [F14]).
#define WG_D128 "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
  "}"
#define WG_D64 "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
  "}"
#define ACC_F8(d, i) "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), \
                     "+f"(d[(i) + 4]), "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define ACC_R8(d, i) "+r"(d[(i) + 0]), "+r"(d[(i) + 1]), "+r"(d[(i) + 2]), "+r"(d[(i) + 3]), \
                     "+r"(d[(i) + 4]), "+r"(d[(i) + 5]), "+r"(d[(i) + 6]), "+r"(d[(i) + 7])
#define ACC_F128(d) ACC_F8(d, 0), ACC_F8(d, 8), ACC_F8(d, 16), ACC_F8(d, 24), ACC_F8(d, 32),        \
                    ACC_F8(d, 40), ACC_F8(d, 48), ACC_F8(d, 56), ACC_F8(d, 64), ACC_F8(d, 72),     \
                    ACC_F8(d, 80), ACC_F8(d, 88), ACC_F8(d, 96), ACC_F8(d, 104), ACC_F8(d, 112),   \
                    ACC_F8(d, 120)
#define ACC_R64(d) ACC_R8(d, 0), ACC_R8(d, 8), ACC_R8(d, 16), ACC_R8(d, 24), ACC_R8(d, 32),         \
                   ACC_R8(d, 40), ACC_R8(d, 48), ACC_R8(d, 56)

// f32-accumulating wgmma m64n256k16 for the input type TYPES (".f32.f16.f16"
// or ".f32.bf16.bf16").  Operands: %0..%127 accumulators, %128 desc A, %129
// desc B, %130 scale-d (predicate), %131 imm-trans-a, %132 imm-trans-b [F13].
#define WGMMA_F32ACC_ASM(TYPES)                                                   \
  asm volatile(                                                                   \
      "{\n"                                                                       \
      ".reg .pred p;\n"                                                           \
      "setp.ne.b32 p, %130, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n256k16" TYPES " " WG_D128                  \
      ", %128, %129, p, 1, 1, %131, %132;\n"                                      \
      "}\n"                                                                       \
      : ACC_F128(d)                                                               \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B)        \
      : "memory")

// One warpgroup-wide D(64x256, f32) += A(64x16, smem) * B(16x256, smem).
// scale-d = 1 (accumulate; registers were zeroed beforehand), imm-scale-a =
// imm-scale-b = 1, imm-trans-a/b = TRANS_A/TRANS_B (1 = MN-major operand).
template <bool BF16, int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_m64n256k16_f32acc(float (&d)[128], uint64_t desc_a,
                                                        uint64_t desc_b) {
  const uint32_t scale_d = 1;
  if constexpr (BF16) {
    WGMMA_F32ACC_ASM(".f32.bf16.bf16");
  } else {
    WGMMA_F32ACC_ASM(".f32.f16.f16");
  }
}

// Same with f16 accumulators: 64 .f16x2 registers [F14].  Operands: %0..%63
// accumulators, %64 desc A, %65 desc B, %66 scale-d, %67/%68 imm-trans-a/b.
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_m64n256k16_f16acc(uint32_t (&d)[64], uint64_t desc_a,
                                                        uint64_t desc_b) {
  const uint32_t scale_d = 1;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f16.f16.f16 " WG_D64
      ", %64, %65, p, 1, 1, %67, %68;\n"
      "}\n"
      : ACC_R64(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B)
      : "memory");
}

// ============================================================================
//                                  kernel
// ============================================================================
// Shared memory map (offsets from the 1024-aligned base):
//   [0,            4*16384)  A stages: stage s at s*16384
//   [65536,  65536+4*32768)  B stages: stage s at 65536 + s*32768
//   [196608, 196608+64)      full[4], empty[4] mbarriers (8 B each)
// Inside a stage:
//   K-major operand  : one TMA box, rows (M or N) 128 B apart, each row 64 K
//                      values, 16-B chunks XOR-swizzled by row%8 [F10].
//   MN-major operand : atom columns of 8192 B side by side (2 for A, 4 for B),
//                      column j = M/N 64j..64j+63; inside, K-row r at r*128,
//                      chunks XOR-swizzled by r%8; one TMA box per column
//                      [F11], [F12].
// A_MN: A is M-major (ta=1, imm-trans-a=1).  B_MN: B is N-major (tb=0,
// imm-trans-b=1).
//
// Cluster pair (cluster_m == 2, launched with cluster dims (2,1,1)) -- how the
// two CTAs synchronise (r = this CTA's rank, p = r ^ 1 the peer):
//   * full[s] (count 1): this CTA's producer arrive.expect_tx(A bytes of this
//     CTA + ALL B_STAGE_BYTES); complete_tx from this CTA's A box(es), from
//     this CTA's multicast B half and from the peer's multicast B half [F17].
//   * empty[s] (count 16): lane 0 of each of the 8 consumer warps of BOTH CTAs
//     arrives on it when its warpgroup has finished reading stage s: every
//     consumer warp arrives on its own CTA's empty[s] and, through mapa, on the
//     peer's empty[s] [F18].  The producer of a CTA writes stage s of BOTH
//     CTAs (its B half is multicast), so it must wait until both CTAs'
//     consumers are done with s -- which is exactly what 16 arrivals mean.
//   * Phases cannot mix: an arrival for round j+1 on empty[s] of CTA X needs
//     the full[s] round j+1 of the arriving warp's CTA, which needs X's B half
//     of round j+1 (always issued, see below), which X's producer issues only
//     after empty[s] of X completed round j.  Symmetrically for full[s].
//     That is why a B half is never skipped in cluster mode (a half past N is
//     loaded from an in-range clamped coordinate instead; its columns are
//     never stored): both CTAs' full barriers always depend on both producers.
//   * Cluster barrier after init (before any multicast or remote arrive) and
//     before exit (after the last remote arrive; all multicasts into a CTA
//     were awaited by its own consumers on full) [F19].
//   * Rank 1 of a pair past M (odd number of block rows): loads no A (its
//     expect_tx counts B only), still multicasts its B half and releases its
//     stages, stores nothing (every row >= M).
template <Pair P, bool A_MN, bool B_MN>
__global__ void __launch_bounds__(NUM_THREADS, 1)
gemm_wgmma_kernel(const __grid_constant__ CUtensorMap tmap_a,
                  const __grid_constant__ CUtensorMap tmap_b,
                  const typename PairTraits<P>::Out* __restrict__ C,
                  typename PairTraits<P>::Out* __restrict__ D,
                  int M, int N, int K, float alpha, float beta,
                  uint32_t mn_lbo, uint32_t mn_sbo, int group_c, int cluster_m,
                  WatchdogRecord* __restrict__ watchdog) {
  using Tr = PairTraits<P>;
  constexpr bool kF16Acc = Tr::kF16Acc;

  extern __shared__ uint8_t smem_raw[];
  // Align the shared-space base address up to 1024 B (128B swizzle requirement).
  // Both CTAs of a cluster get the same offsets, as multicast requires [F17].
  const uint32_t raw_base = smem_u32(smem_raw);
  const uint32_t base = (raw_base + (SMEM_ALIGN - 1)) & ~uint32_t(SMEM_ALIGN - 1);
  const uint32_t a_smem = base;
  const uint32_t b_smem = base + STAGES * A_STAGE_BYTES;
  const uint32_t bar_base = base + TILE_BYTES;
  auto full_bar = [&](int s) { return bar_base + 8u * s; };
  auto empty_bar = [&](int s) { return bar_base + 8u * (STAGES + s); };

  // cluster_m is a kernel argument (uniform): 1 = plain launch, 2 = pair.
  const bool paired = cluster_m > 1;
  const uint32_t rank = paired ? cluster_ctarank() : 0u;
  const uint32_t peer = rank ^ 1u;
  int tile_m, tile_n;
  map_tile(static_cast<int>(blockIdx.x), static_cast<int>(rank), (M + BM - 1) / BM,
           (N + BN - 1) / BN, cluster_m, group_c, tile_m, tile_n);
  const int m0 = tile_m * BM;   // >= M only for rank 1 of a pair past M
  const int n0 = tile_n * BN;
  const int num_k_tiles = (K + BK - 1) / BK;   // last tile zero-filled past K by TMA

  const int warpgroup = threadIdx.x / 128;
  const int tid_in_wg = threadIdx.x % 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full_bar(s), 1);                 // one arrive.expect_tx per phase
      // lane 0 of each consumer warp, of this CTA and (pair) of the peer
      mbar_init(empty_bar(s), CONSUMER_WARPS * cluster_m);
    }
    // Make the initialised barriers visible to the async (TMA) proxy and, for
    // a pair, to the peer CTA (its multicasts and remote arrivals).
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if (paired) {
    // No multicast into, nor remote arrive on, a peer barrier before the peer
    // has initialised it: every thread of both CTAs passes this point first.
    cluster_arrive();
    cluster_wait();
  } else {
    __syncthreads();
  }

  if (warpgroup == 0) {
    // =============================== producer ===============================
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(PRODUCER_REGS));
    if (tid_in_wg == 0) {
      prefetch_tensormap(&tmap_a);
      prefetch_tensormap(&tmap_b);
      // MN-major: one box per 64-wide atom column.  Columns that lie entirely
      // past M (or N) are not loaded at all (their smem keeps stale data, which
      // only feeds D rows >= M / columns >= N, never stored); the expected byte
      // count counts only the boxes issued.  K-major: one box per operand; its
      // first row n0 is inside the matrix, and so is m0 except for rank 1 of a
      // pair past M, which loads no A at all.
      int a_boxes = 0;
      uint32_t stage_bytes = 0;
      if (m0 < M) {
        if constexpr (A_MN) {
          a_boxes = min(BM / MN_ATOM, (M - m0 + MN_ATOM - 1) / MN_ATOM);
          stage_bytes += a_boxes * MN_COL_BYTES;
        } else {
          a_boxes = 1;
          stage_bytes += A_STAGE_BYTES;
        }
      }
      // B.  Single CTA: as described above.  Pair: this CTA issues half of the
      // tile's B boxes, multicast to both CTAs, and the other half comes from
      // the peer, so the full barrier always expects all B_STAGE_BYTES; a box
      // whose start lies past N is loaded from n0 instead (in range), so that
      // no half is ever skipped (see the comment above the kernel).
      //   K-major: one box {64 K, 128 N rows} at N row n0 + 128*rank, written
      //            128 rows (16384 B, a multiple of 1024) into the stage.
      //   N-major: atom columns 2*rank and 2*rank+1, box {64 N, 64 K} each.
      // (b_n / b_off: 2 entries, both used only for N-major; indexed with
      // compile-time indices only, so they stay in registers.)
      static_assert((BN / MN_ATOM) % 2 == 0, "a pair splits B's atom columns in two halves");
      constexpr int kPairBoxes = B_MN ? (BN / MN_ATOM) / 2 : 1;   // B boxes per CTA of a pair
      int b_boxes = 1;
      int b_n[2] = {n0, n0};
      uint32_t b_off[2] = {0, 0};
      if (!paired) {
        if constexpr (B_MN) {
          b_boxes = min(BN / MN_ATOM, (N - n0 + MN_ATOM - 1) / MN_ATOM);
          stage_bytes += b_boxes * MN_COL_BYTES;
        } else {
          stage_bytes += B_STAGE_BYTES;
        }
      } else {
        stage_bytes += B_STAGE_BYTES;
        if constexpr (B_MN) {
#pragma unroll
          for (int i = 0; i < kPairBoxes; ++i) {
            const int j = kPairBoxes * static_cast<int>(rank) + i;   // atom column
            b_n[i] = (n0 + j * MN_ATOM < N) ? n0 + j * MN_ATOM : n0;
            b_off[i] = j * MN_COL_BYTES;
          }
        } else {
          const int half = static_cast<int>(rank) * (BN / 2);
          b_n[0] = (n0 + half < N) ? n0 + half : n0;
          b_off[0] = half * BK * ELEM_BYTES;
        }
      }
      for (int kt = 0; kt < num_k_tiles; ++kt) {
        const int s = kt % STAGES;
        const uint32_t parity = ((kt / STAGES) & 1) ^ 1;    // first pass: passes at once [F9]
        // .acquire.cta also in a pair (as CUTLASS): the producer reads nothing the
        // peer wrote; .acquire.cluster adds a CCTL.IVALL (L1 invalidate) per stage.
        mbar_wait<false>(empty_bar(s), parity, 0, kt, s, watchdog);
        mbar_arrive_expect_tx(full_bar(s), stage_bytes);    // full box bytes even when partly OOB
        const int kc = kt * BK;
        const uint32_t a_dst = a_smem + s * A_STAGE_BYTES;
        const uint32_t b_dst = b_smem + s * B_STAGE_BYTES;
        if constexpr (A_MN) {
          // tensor map A: dim0 = M (contiguous), dim1 = K; box {64, 64}
          for (int j = 0; j < a_boxes; ++j)
            tma_load_2d(a_dst + j * MN_COL_BYTES, &tmap_a, full_bar(s), m0 + j * MN_ATOM, kc);
        } else {
          // tensor map A: dim0 = K (contiguous), dim1 = M; box {64, 128}
          if (a_boxes > 0) tma_load_2d(a_dst, &tmap_a, full_bar(s), kc, m0);
        }
        if (!paired) {
          if constexpr (B_MN) {
            // tensor map B: dim0 = N (contiguous), dim1 = K; box {64, 64}
            for (int j = 0; j < b_boxes; ++j)
              tma_load_2d(b_dst + j * MN_COL_BYTES, &tmap_b, full_bar(s), n0 + j * MN_ATOM, kc);
          } else {
            // tensor map B: dim0 = K (contiguous), dim1 = N; box {64, 256}
            tma_load_2d(b_dst, &tmap_b, full_bar(s), kc, n0);
          }
        } else {
          // Both CTAs of the pair (ctaMask 0b11) receive this half at the same
          // offset, and complete_tx on their own full[s].
#pragma unroll
          for (int i = 0; i < kPairBoxes; ++i) {
            if constexpr (B_MN) {
              // box {64 (N), 64 (K)}
              tma_load_2d_multicast(b_dst + b_off[i], &tmap_b, full_bar(s), b_n[i], kc, 0x3);
            } else {
              // box {64 (K), 128 (N)} (tensor map made with BN / 2 rows)
              tma_load_2d_multicast(b_dst + b_off[i], &tmap_b, full_bar(s), kc, b_n[i], 0x3);
            }
          }
        }
      }
    }
    // Pair: this thread's part of the exit barrier.  Its last remote accesses
    // are multicasts, which the consumers of both CTAs wait for on full[s].
    if (paired) cluster_arrive();
  } else {
    // =============================== consumers ==============================
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(CONSUMER_REGS));
    const int cw = warpgroup - 1;                // 0 or 1: rows [64*cw, 64*cw+64) of the tile
    const int warp = tid_in_wg / 32;
    const int lane = tid_in_wg % 32;

    using AccT = std::conditional_t<kF16Acc, uint32_t, float>;
    constexpr int NACC = kF16Acc ? 64 : 128;
    AccT acc[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = AccT(0);   // f16x2 zero = two +0.0 halves
    acc_fence(acc);

    // Descriptor fields that do not change: [F2] for K-major, [F11]/[F12] for
    // MN-major (defaults LBO 8192, SBO 1024; host may override).
    const uint64_t a_fields = A_MN ? desc_fields(mn_lbo, mn_sbo) : desc_fields(KMAJ_LBO, KMAJ_SBO);
    const uint64_t b_fields = B_MN ? desc_fields(mn_lbo, mn_sbo) : desc_fields(KMAJ_LBO, KMAJ_SBO);
    constexpr uint32_t A_KSTEP = A_MN ? MN_KSTEP_BYTES : KMAJ_KSTEP_BYTES;
    constexpr uint32_t B_KSTEP = B_MN ? MN_KSTEP_BYTES : KMAJ_KSTEP_BYTES;

    // Hand stage s back: to this CTA's producer and, in a pair, to the peer's
    // producer (whose multicast also writes this CTA's stage s).
    auto release = [&](int s) {
      mbar_arrive(empty_bar(s));
      if (paired) mbar_arrive_remote(mapa_shared(empty_bar(s), peer));
    };

    for (int kt = 0; kt < num_k_tiles; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(full_bar(s), (kt / STAGES) & 1, 1, kt, s, watchdog);
      __syncwarp();   // lanes may leave the spin loop at different times; the
                      // .sync.aligned wgmma ops below need a converged warp

      // A: this warpgroup's 64 rows start 8192 B into the stage in both
      // layouts: K-major, 64 rows x 128 B; M-major, atom column cw (static
      // assert above).  A multiple of 1024, so the swizzle phase is unchanged.
      const uint32_t a_tile = a_smem + s * A_STAGE_BYTES + cw * MN_COL_BYTES;
      const uint32_t b_tile = b_smem + s * B_STAGE_BYTES;

      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / WGMMA_K; ++kk) {
        // K-major: +32 B per k16 inside the 128-B row; MN-major: +2048 B
        // (16 K-rows of 128 B) per k16.
        const uint64_t da = desc_with_addr(a_fields, a_tile + kk * A_KSTEP);
        const uint64_t db = desc_with_addr(b_fields, b_tile + kk * B_KSTEP);
        if constexpr (kF16Acc) {
          wgmma_m64n256k16_f16acc<A_MN ? 1 : 0, B_MN ? 1 : 0>(acc, da, db);
        } else {
          wgmma_m64n256k16_f32acc<Tr::kBf16, A_MN ? 1 : 0, B_MN ? 1 : 0>(acc, da, db);
        }
      }
      wgmma_commit();
      // Keep this k-tile's group in flight; the previous one is now complete,
      // so its stage can be handed back to the producer.
      wgmma_wait<1>();
      acc_fence(acc);
      if (kt > 0 && lane == 0) release((kt - 1) % STAGES);
      __syncwarp();
    }
    wgmma_wait<0>();
    acc_fence(acc);
    // The last stage's release is awaited by nobody (no k-tile follows), but
    // it keeps every phase count whole; in a pair it is also this warp's last
    // remote access, so the exit barrier's arrive comes right after it, and
    // the epilogue below overlaps with the peer's.
    if (num_k_tiles > 0 && lane == 0) release((num_k_tiles - 1) % STAGES);
    if (paired) cluster_arrive();

    // ------------------------------- epilogue -------------------------------
    // Fragment layout [F4] / [F14].  Direct global stores, bounds-checked.
    const int row_base = m0 + cw * WG_M + warp * 16 + (lane / 4);
    const int col_base = n0 + 2 * (lane % 4);
    const bool n_even = (N % 2) == 0;          // 2-element vector path needs alignment
    const bool use_c = (beta != 0.0f);         // BLAS convention: C not read if beta == 0
    if constexpr (!kF16Acc) {
#pragma unroll
      for (int j = 0; j < 32; ++j) {           // 8-column group
#pragma unroll
        for (int h = 0; h < 2; ++h) {          // row half: +0 or +8
          const int row = row_base + 8 * h;
          const int col = col_base + 8 * j;
          const float v0 = acc[4 * j + 2 * h + 0];
          const float v1 = acc[4 * j + 2 * h + 1];
          if (row < M) {
            const size_t off = static_cast<size_t>(row) * N + col;
            if (n_even && col + 1 < N) {
              float2 out;
              out.x = alpha * v0;
              out.y = alpha * v1;
              if (use_c) {
                const float2 c = *reinterpret_cast<const float2*>(C + off);
                out.x += beta * c.x;
                out.y += beta * c.y;
              }
              *reinterpret_cast<float2*>(D + off) = out;
            } else {
              if (col < N) D[off] = alpha * v0 + (use_c ? beta * C[off] : 0.0f);
              if (col + 1 < N) D[off + 1] = alpha * v1 + (use_c ? beta * C[off + 1] : 0.0f);
            }
          }
        }
      }
    } else {
      // half: out = alpha*x + beta*c, each product and the sum rounded to
      // nearest in half (the _rn intrinsics forbid contraction into an fma).
      const __half2 alpha2 = __float2half2_rn(alpha);
      const __half2 beta2 = __float2half2_rn(beta);
#pragma unroll
      for (int j = 0; j < 32; ++j) {           // 8-column group
#pragma unroll
        for (int h = 0; h < 2; ++h) {          // row half: +0 or +8
          const int row = row_base + 8 * h;
          const int col = col_base + 8 * j;
          // register 2j+h [F14]: (row, col) in the low 16 bits, (row, col+1) high
          __half2_raw xr;
          xr.x = static_cast<unsigned short>(acc[2 * j + h] & 0xFFFFu);
          xr.y = static_cast<unsigned short>(acc[2 * j + h] >> 16);
          const __half2 x(xr);
          if (row < M) {
            const size_t off = static_cast<size_t>(row) * N + col;
            if (n_even && col + 1 < N) {
              __half2 out = __hmul2_rn(alpha2, x);
              if (use_c) {
                const __half2 c = *reinterpret_cast<const __half2*>(C + off);
                out = __hadd2_rn(out, __hmul2_rn(beta2, c));
              }
              *reinterpret_cast<__half2*>(D + off) = out;
            } else {
              const __half a1 = __low2half(alpha2), b1 = __low2half(beta2);
              if (col < N) {
                __half o = __hmul_rn(a1, __low2half(x));
                if (use_c) o = __hadd_rn(o, __hmul_rn(b1, C[off]));
                D[off] = o;
              }
              if (col + 1 < N) {
                __half o = __hmul_rn(a1, __high2half(x));
                if (use_c) o = __hadd_rn(o, __hmul_rn(b1, C[off + 1]));
                D[off + 1] = o;
              }
            }
          }
        }
      }
    }
  }
  // Pair: no CTA exits (freeing its shared memory and barriers) before every
  // thread of both CTAs has made its last remote access (remote arrives,
  // multicasts) and arrived above [F19].
  if (paired) cluster_wait();
}

// ============================================================================
//                                   host
// ============================================================================
static const char* cu_result_str(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    default: return "(other CUresult)";
  }
}

static PFN_cuTensorMapEncodeTiled_v12000 get_encode_tiled() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult qres = cudaDriverEntryPointSymbolNotFound;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &qres));
  if (fn == nullptr || qres != cudaDriverEntryPointSuccess) {
    fprintf(stderr, "error: could not get driver entry point cuTensorMapEncodeTiled "
                    "(query result %d, pointer %p). Driver too old?\n", (int)qres, fn);
    exit(2);
  }
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

// 2-D tensor map of a row-major 16-bit matrix with `outer` rows of `inner`
// elements (the contiguous dimension) and a row pitch of `pitch` elements;
// box {box_inner, box_outer}, 128B swizzle, zero fill out of bounds.
static CUtensorMap make_tmap(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMapDataType dtype,
                             const void* gptr, long long inner, long long outer, long long pitch,
                             int box_inner, int box_outer, const char* name) {
  const unsigned long long stride_bytes = static_cast<unsigned long long>(pitch) * ELEM_BYTES;
  if (stride_bytes % 16 != 0 || pitch < inner) {
    // Cannot happen with padded pitches; with --no-pad main() exits earlier.
    fprintf(stderr, "error: tensor map %s: row pitch %lld elements = %llu B is not a multiple of "
                    "16 B (or is smaller than the row length %lld)\n",
            name, pitch, stride_bytes, inner);
    exit(2);
  }
  CUtensorMap map;
  memset(&map, 0, sizeof(map));
  const cuuint64_t gdim[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  const cuuint64_t gstride[1] = {static_cast<cuuint64_t>(stride_bytes)};   // bytes, dim 1
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(box_outer)};
  const cuuint32_t estride[2] = {1, 1};
  CUresult r = encode(&map, dtype, 2, const_cast<void*>(gptr), gdim, gstride, box, estride,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    fprintf(stderr,
            "error: cuTensorMapEncodeTiled(%s) failed: %d %s\n"
            "  globalDim={%llu,%llu} globalStride={%llu B} box={%u,%u} ptr=%p\n"
            "  (needs 16-B aligned ptr, stride %% 16 == 0, box <= 256, box[0]*2 <= 128)\n",
            name, (int)r, cu_result_str(r), (unsigned long long)gdim[0],
            (unsigned long long)gdim[1], (unsigned long long)gstride[0], box[0], box[1], gptr);
    exit(2);
  }
  return map;
}

// Deterministic, fast RNG (splitmix64) -> uniform in [-1, 1).
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform_pm1() { return static_cast<float>((next() >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0); }
};

// ---- 16-bit type helpers (host) ----
static inline double to_d(float v) { return v; }
static inline double to_d(__half v) { return static_cast<double>(__half2float(v)); }
static inline double to_d(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
template <class T> static inline T from_f(float v);
template <> inline float from_f<float>(float v) { return v; }
template <> inline __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> inline __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
static inline uint16_t bits_of(__half v) { return static_cast<__half_raw>(v).x; }
static inline uint16_t bits_of(__nv_bfloat16 v) { return static_cast<__nv_bfloat16_raw>(v).x; }
template <class T> static inline T from_bits(uint16_t b);
template <> inline __half from_bits<__half>(uint16_t b) { __half_raw r; r.x = b; return __half(r); }
template <> inline __nv_bfloat16 from_bits<__nv_bfloat16>(uint16_t b) {
  __nv_bfloat16_raw r; r.x = b; return __nv_bfloat16(r);
}

struct Options {
  long long M = 0, N = 0, K = 0;
  Pair pair = Pair::F16_IN_F32_OUT;
  int ta = 0, tb = 1;
  bool check = false;
  int repeat = 10;
  uint64_t seed = 1234;
  bool pad = true;
  char diag = 0;                          // 0, 'a' or 'b'
  uint32_t mn_lbo = MN_LBO_DEFAULT, mn_sbo = MN_SBO_DEFAULT;
  int group = 1;                          // block rows per raster group (map_tile)
  int cluster = 1;                        // CTAs per cluster along M (1 or 2)
};

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s M N K [--type F16_IN_F32_OUT|F16_IN_OUT|BF16_IN_F32_OUT] [--ta 0|1] [--tb 0|1]\n"
          "          [--check] [--repeat R] [--seed S] [--no-pad] [--diag a|b]\n"
          "          [--mn-lbo BYTES] [--mn-sbo BYTES] [--group G] [--cluster 1|2]\n"
          "  D = 1.5 * op(A) * op(B) + 0.5 * C; C, D M x N row-major.\n"
          "  --group G: blocks walk down G block rows before the next block column (default 1)\n"
          "  --cluster 2: clusters of 2 blocks along M sharing B by TMA multicast (default 1)\n"
          "  ta=0: A stored M x K (K contiguous); ta=1: A stored K x M (M contiguous), op(A) = A^T\n"
          "  tb=0: B stored K x N (N contiguous); tb=1: B stored N x K (K contiguous), op(B) = B^T\n"
          "  Contiguous dimensions are padded to a multiple of 8 unless --no-pad.\n",
          prog);
}

struct CompareStats {
  double max_abs = 0.0, sum_sq = 0.0;
  long long bad = 0, count = 0;
};

// Tolerance of |ours - reference| for one run ([F16]).
//   f32 accumulation (both pairs with float C/D): inputs in [-1,1), products
//   exact in fp32 (also bf16 x bf16), fp32 sums: real differences are
//   ~1e-6 * sqrt(K) * |result|; layout, swizzle or pipeline bugs give 0.1..10.
//     tol = 1e-3 * sqrt(K) * |alpha| + 1e-5.
//   f16 accumulation: u = 2^-11 (half unit roundoff).  Each product has
//   variance 1/9 (a, b uniform in [-1,1)), so a partial sum over k terms has
//   typical size s(k) = sqrt(k)/3.  Every accumulation rounding adds at most
//   u * |partial sum|:
//     * all roundings with the same sign (worst case / directed rounding):
//       error ~ K * u * s(K)  -- the "K * 2^-11 * typical partial sum" rule;
//     * round-to-nearest, independent signs: a random walk, standard deviation
//       ~ u * sqrt(sum_k s(k)^2 / 3) = u * K / sqrt(54) ~ u*K/7.3 (rounding
//       after every product; fewer roundings, e.g. once per k16 wgmma, only
//       make it smaller).
//   We use tol = |alpha| * u * s(K) * min(K, 8*sqrt(K))  (= the worst-case rule
//   for K <= 64, = |alpha| * 2.7*u*K beyond: ~19 standard deviations of one
//   implementation, ~14 of the difference of two), plus the epilogue: the
//   final half rounding of D and of alpha*x, beta*c on both sides,
//   4*u*(|alpha|*sqrt(K) + |beta|) (sqrt(K) ~ 3 s(K), a generous bound of
//   |x|).  At K = 64 / 1000 / 8192 that is ~0.15 / 2.05 / 16.3, against
//   typical |D| of ~4 / 16 / 45 -- a layout bug (error ~ |D|) still fails the
//   vast majority of elements.  The worst-case rule alone would allow 7.7 at
//   K = 1000 and 180 at K = 8192 (4x the typical |D|): useless for bugs.  If
//   the hardware rounded the f16 accumulation in one direction, the error
//   would grow like K^1.5 instead; the CPU check prints the mean signed error
//   (bias) to detect that.
static double tolerance_for(bool f16acc, long long K, double alpha, double beta) {
  const double k = static_cast<double>(K);
  if (!f16acc) return 1e-3 * std::sqrt(k) * std::fabs(alpha) + 1e-5;
  const double u = 1.0 / 2048.0;
  const double s = std::sqrt(k) / 3.0;
  return std::fabs(alpha) * u * s * std::min(k, 8.0 * std::sqrt(k)) +
         4.0 * u * (std::fabs(alpha) * std::sqrt(k) + std::fabs(beta));
}

template <Pair P>
static int run_pair(const Options& opt, const cudaDeviceProp& prop) {
  using Tr = PairTraits<P>;
  using In = typename Tr::In;
  using Out = typename Tr::Out;
  const int M = static_cast<int>(opt.M), N = static_cast<int>(opt.N), K = static_cast<int>(opt.K);
  const int ta = opt.ta, tb = opt.tb;
  const bool diag = opt.diag != 0;
  const float alpha = diag ? 1.0f : 1.5f, beta = diag ? 0.0f : 0.5f;
  (void)prop;

  // ------------------------------ storage -----------------------------------
  // A stored a_rows x a_cont (row-major, contiguous a_cont), pitch lda >= a_cont.
  const long long a_rows = ta ? K : M, a_cont = ta ? M : K;
  const long long b_rows = tb ? N : K, b_cont = tb ? K : N;
  auto pad8 = [&](long long x) { return opt.pad ? (x + 7) / 8 * 8 : x; };
  const long long lda = pad8(a_cont), ldb = pad8(b_cont);
  // op(A)[m][k] and op(B)[k][n] as indices into the stored arrays.
  auto idxA = [&](long long m, long long k) -> size_t {
    return ta ? static_cast<size_t>(k * lda + m) : static_cast<size_t>(m * lda + k);
  };
  auto idxB = [&](long long k, long long n) -> size_t {
    return tb ? static_cast<size_t>(n * ldb + k) : static_cast<size_t>(k * ldb + n);
  };

  const char* a_major = ta ? "M-major (imm-trans-a=1)" : "K-major";
  const char* b_major = tb ? "K-major" : "N-major (imm-trans-b=1)";
  printf("problem: type=%s ta=%d tb=%d  M=%d N=%d K=%d  alpha=%.2f beta=%.2f  tile %dx%dx%d, "
         "%d stages, smem %d B\n",
         Tr::kName, ta, tb, M, N, K, alpha, beta, BM, BN, BK, STAGES, SMEM_BYTES);
  printf("layout: A stored %s x %s (pitch %lld, %s); B stored %s x %s (pitch %lld, %s); "
         "C/D %s row-major\n",
         ta ? "K" : "M", ta ? "M" : "K", lda, a_major, tb ? "N" : "K", tb ? "K" : "N", ldb, b_major,
         Tr::kF16Acc ? "half" : "float");
  printf("descriptors: A %s LBO %u SBO %u, k16 step %d B; B %s LBO %u SBO %u, k16 step %d B "
         "(K-major: LBO 16 = \"1\", SBO 1024, step 32)%s\n",
         ta ? "MN" : "K", ta ? opt.mn_lbo : KMAJ_LBO, ta ? opt.mn_sbo : KMAJ_SBO,
         ta ? MN_KSTEP_BYTES : KMAJ_KSTEP_BYTES, tb ? "K" : "MN", tb ? KMAJ_LBO : opt.mn_lbo,
         tb ? KMAJ_SBO : opt.mn_sbo, tb ? KMAJ_KSTEP_BYTES : MN_KSTEP_BYTES,
         (opt.mn_lbo != MN_LBO_DEFAULT || opt.mn_sbo != MN_SBO_DEFAULT)
             ? "  ** MN-major LBO/SBO OVERRIDDEN **" : "");

  // --------------------------------- data -----------------------------------
  const size_t nA = static_cast<size_t>(a_rows) * lda, nB = static_cast<size_t>(b_rows) * ldb;
  const size_t nC = static_cast<size_t>(M) * N;
  // Pitch padding = NaN: a kernel that reads it produces NaN.
  const In in_nan = from_bits<In>(Tr::kBf16 ? 0x7FC0 : 0x7E00);
  std::vector<In> hA(nA, in_nan), hB(nB, in_nan);
  std::vector<Out> hC(nC);
  // Diagnostic patterns: distinct 16-bit codes base + idx, all normal finite
  // numbers (f16: 0x1000..0x4FFF = 2^-11..~32; bf16: 0x3000..0x6FFF).
  const uint16_t diag_base = Tr::kBf16 ? 0x3000 : 0x1000;
  auto code = [&](int idx) { return from_bits<In>(static_cast<uint16_t>(diag_base + idx)); };
  const In one = from_f<In>(1.0f), zero = from_f<In>(0.0f);
  if (!diag) {
    Rng rng(opt.seed);
    for (long long r = 0; r < a_rows; ++r)
      for (long long c = 0; c < a_cont; ++c) hA[r * lda + c] = from_f<In>(rng.uniform_pm1());
    for (long long r = 0; r < b_rows; ++r)
      for (long long c = 0; c < b_cont; ++c) hB[r * ldb + c] = from_f<In>(rng.uniform_pm1());
    for (size_t i = 0; i < nC; ++i) hC[i] = from_f<Out>(rng.uniform_pm1());
  } else {
    for (long long m = 0; m < M; ++m)
      for (long long k = 0; k < K; ++k)
        hA[idxA(m, k)] = (opt.diag == 'b') ? ((k == m % 64) ? one : zero)
                                           : code(static_cast<int>((m % BM) * BK + (k % BK)));
    for (long long k = 0; k < K; ++k)
      for (long long n = 0; n < N; ++n)
        hB[idxB(k, n)] = (opt.diag == 'a') ? ((k == n % 64) ? one : zero)
                                           : code(static_cast<int>((k % BK) * BN + (n % BN)));
    for (size_t i = 0; i < nC; ++i) hC[i] = from_f<Out>(0.0f);
  }
  In *dA = nullptr, *dB = nullptr;
  Out *dC = nullptr, *dD = nullptr, *dRef = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, nA * sizeof(In)));
  CUDA_CHECK(cudaMalloc(&dB, nB * sizeof(In)));
  CUDA_CHECK(cudaMalloc(&dC, nC * sizeof(Out)));
  CUDA_CHECK(cudaMalloc(&dD, nC * sizeof(Out)));
  CUDA_CHECK(cudaMalloc(&dRef, nC * sizeof(Out)));
  CUDA_CHECK(cudaMemcpy(dA, hA.data(), nA * sizeof(In), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, hB.data(), nB * sizeof(In), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, hC.data(), nC * sizeof(Out), cudaMemcpyHostToDevice));
  // Poison D with NaN (all-ones bytes: NaN in float and half) so that elements
  // the kernel never writes are caught.
  CUDA_CHECK(cudaMemset(dD, 0xFF, nC * sizeof(Out)));

  // ------------------------------ tensor maps -------------------------------
  PFN_cuTensorMapEncodeTiled_v12000 encode = get_encode_tiled();
  const CUtensorMapDataType tdt = Tr::kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUtensorMap tmap_a = ta ? make_tmap(encode, tdt, dA, M, K, lda, MN_ATOM, BK, "A (M-major)")
                                : make_tmap(encode, tdt, dA, K, M, lda, BK, BM, "A (K-major)");
  // K-major B in a cluster pair: each CTA loads (and multicasts) half of the
  // 256 N rows, so the box has BN / 2 rows.  N-major boxes are one atom column
  // either way.
  const CUtensorMap tmap_b = tb ? make_tmap(encode, tdt, dB, K, N, ldb, BK, BN / opt.cluster,
                                            opt.cluster > 1 ? "B (K-major, half box)" : "B (K-major)")
                                : make_tmap(encode, tdt, dB, N, K, ldb, MN_ATOM, BK, "B (N-major)");

  // ------------------------------ kernel setup ------------------------------
  using KernelFn = void (*)(const CUtensorMap, const CUtensorMap, const Out*, Out*, int, int, int,
                            float, float, uint32_t, uint32_t, int, int, WatchdogRecord*);
  KernelFn kern = nullptr;
  if (ta == 0 && tb == 1) kern = gemm_wgmma_kernel<P, false, false>;
  if (ta == 0 && tb == 0) kern = gemm_wgmma_kernel<P, false, true>;
  if (ta == 1 && tb == 1) kern = gemm_wgmma_kernel<P, true, false>;
  if (ta == 1 && tb == 0) kern = gemm_wgmma_kernel<P, true, true>;
  CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  cudaFuncAttributes fattr;
  CUDA_CHECK(cudaFuncGetAttributes(&fattr, kern));
  printf("kernel: %d regs/thread (expect 168 = 65536/384 rounded to 8), %zu B static smem, "
         "%zu B local, max %d threads/block, PTX %d, binary sm_%d\n",
         fattr.numRegs, fattr.sharedSizeBytes, fattr.localSizeBytes, fattr.maxThreadsPerBlock,
         fattr.ptxVersion, fattr.binaryVersion);
  if (fattr.localSizeBytes > 0)
    printf("warning: kernel uses %zu B of local memory (register spills?)\n", fattr.localSizeBytes);
  int blocks_per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kern, NUM_THREADS,
                                                           SMEM_BYTES));
  if (blocks_per_sm < 1) {
    fprintf(stderr, "error: occupancy calculator says 0 blocks/SM fit (regs %d x %d threads, "
                    "smem %d B)\n", fattr.numRegs, NUM_THREADS, SMEM_BYTES);
    return 2;
  }
  // 1-D grid, block order from map_tile(): cluster rows of `cl` block rows
  // (rounded up: with cl = 2 and an odd number of block rows the last pair's
  // second block lies past M), groups of group_c cluster rows.
  const int cl = opt.cluster;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const long long crows = (tiles_m + cl - 1) / cl;
  const long long nblocks = crows * cl * tiles_n;
  if (nblocks > 0x7FFFFFFFLL) {
    fprintf(stderr, "error: %lld blocks do not fit a 1-D grid (2^31 - 1)\n", nblocks);
    return 2;
  }
  // --group counts block rows; with a cluster the group is a whole number of
  // cluster rows (rounded up), and never more than there are.
  const int group_c = static_cast<int>(std::min<long long>((opt.group + cl - 1) / cl, crows));
  g_raster.tiles_m = tiles_m;
  g_raster.tiles_n = tiles_n;
  g_raster.cluster = cl;
  g_raster.group_c = group_c;
  {
    // Host check of the order: every tile (including the padded block row of
    // an odd pair) exactly once, the two blocks of a cluster on the same N
    // block and on block rows 2c, 2c+1.  Cheap next to the data set-up.
    std::vector<int> seen(static_cast<size_t>(crows * cl * tiles_n), 0);
    for (long long b = 0; b < nblocks; ++b) {
      int tm, tn, tm0, tn0;
      map_tile(static_cast<int>(b), static_cast<int>(b % cl), tiles_m, tiles_n, cl, group_c, tm, tn);
      map_tile(static_cast<int>(b - b % cl), 0, tiles_m, tiles_n, cl, group_c, tm0, tn0);
      const bool ok_tile = tm >= 0 && tm < crows * cl && tn >= 0 && tn < tiles_n &&
                           tn == tn0 && tm == tm0 + b % cl && tm0 % cl == 0;
      if (!ok_tile || seen[static_cast<size_t>(tm) * tiles_n + tn]++ != 0) {
        fprintf(stderr, "error: block order bug: block %lld -> tile (%d, %d)\n", b, tm, tn);
        return 2;
      }
    }
  }
  const dim3 grid(static_cast<unsigned>(nblocks));
  const dim3 block(NUM_THREADS);
  printf("launch: 1-D grid of %u blocks (%d block rows%s x %d block columns), %d threads, "
         "%d blocks/SM possible\n", grid.x, static_cast<int>(crows * cl),
         crows * cl > tiles_m ? ", the last one past M" : "", tiles_n, NUM_THREADS, blocks_per_sm);
  printf("launch: order %s: --group %d -> groups of %d block rows (%d cluster rows of %d); "
         "cluster %d%s; first blocks -> tiles (row, col):", opt.group == 1 && cl == 1 ?
         "row-major, N fastest (as the former 2-D grid)" : "grouped, M fastest within a group",
         opt.group, group_c * cl, group_c, cl, cl,
         cl > 1 ? " along M, B multicast (half per CTA)" : " (no cluster launch)");
  for (int b = 0; b < std::min<long long>(nblocks, 6); ++b) {
    int tm, tn;
    map_tile(b, b % cl, tiles_m, tiles_n, cl, group_c, tm, tn);
    printf(" (%d,%d)", tm, tn);
  }
  printf("\n");
  cudaLaunchAttribute cluster_attr[1];
  cluster_attr[0].id = cudaLaunchAttributeClusterDimension;
  cluster_attr[0].val.clusterDim.x = static_cast<unsigned>(cl);
  cluster_attr[0].val.clusterDim.y = 1;
  cluster_attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = SMEM_BYTES;
  cfg.stream = 0;
  cfg.attrs = cluster_attr;
  cfg.numAttrs = 1;
  if (cl > 1) {
    int max_clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&max_clusters, kern, &cfg));
    printf("launch: at most %d clusters of %d resident at once (%d blocks per wave, %d SMs)\n",
           max_clusters, cl, max_clusters * cl, prop.multiProcessorCount);
    if (max_clusters < 1) {
      fprintf(stderr, "error: a cluster of %d blocks of %d B shared memory does not fit\n", cl,
              SMEM_BYTES);
      return 2;
    }
  }

  WatchdogRecord* wd_host = nullptr;
  WatchdogRecord* wd_dev = nullptr;
  CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&wd_host), sizeof(WatchdogRecord),
                           cudaHostAllocMapped));
  memset(wd_host, 0, sizeof(WatchdogRecord));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&wd_dev), wd_host, 0));
  g_watchdog_host = wd_host;

  auto launch = [&]() {
    if (cl == 1) {
      kern<<<grid, block, SMEM_BYTES>>>(tmap_a, tmap_b, dC, dD, M, N, K, alpha, beta, opt.mn_lbo,
                                        opt.mn_sbo, group_c, cl, wd_dev);
    } else {
      CUDA_CHECK(cudaLaunchKernelEx(&cfg, kern, tmap_a, tmap_b, static_cast<const Out*>(dC), dD,
                                    M, N, K, alpha, beta, opt.mn_lbo, opt.mn_sbo, group_c, cl,
                                    wd_dev));
    }
  };

  launch();
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  printf("kernel ran to completion\n");

  // --------------------------------- cuBLAS ---------------------------------
  // Our problem in row-major terms: D(MxN) = alpha * op(A) * op(B) + beta*C.
  // cuBLAS is column-major.  A row-major R x Cc matrix with pitch p is, byte
  // for byte, the column-major Cc x R matrix (its transpose) with ld = p.
  //   * D row-major MxN (pitch N) == column-major D^T (N x M), ldc = N.
  // Transposing the equation: D^T = alpha * op(B)^T * op(A)^T + beta * C^T,
  // so cuBLAS computes m = N, n = M, k = K with
  //   cuBLAS "A" = op(B)^T (N x K), cuBLAS "B" = op(A)^T (K x M).
  // Operand B (our B, pitch ldb):
  //   tb=0: stored K x N row-major == column-major N x K = B^T = op(B)^T
  //         -> OP_N, lda = ldb.
  //   tb=1: stored N x K row-major (op(B) = Bs^T) == column-major K x N = Bs^T;
  //         we need op(B)^T = Bs = (that)^T -> OP_T, lda = ldb.
  // Operand A (our A, pitch lda):
  //   ta=0: stored M x K row-major == column-major K x M = A^T = op(A)^T
  //         -> OP_N, ldb = lda.
  //   ta=1: stored K x M row-major (op(A) = As^T) == column-major M x K =
  //         As^T = op(A); we need op(A)^T -> OP_T, ldb = lda.
  // So cublasGemmEx(tb ? T : N, ta ? T : N, N, M, K, alpha, B, ldb, A, lda,
  //                 beta, D^T, N).  (ta=0, tb=1 gives the old T, N call.)
  // Types [F15]: F16_IN_F32_OUT 16F/16F/32F compute 32F; BF16_IN_F32_OUT
  // 16BF/16BF/32F compute 32F; F16_IN_OUT 16F/16F/16F compute 16F, alpha and
  // beta as __half.  cuBLAS updates its C in place, so dRef is first filled
  // with C.
  const cudaDataType in_cdt = Tr::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
  const cudaDataType out_cdt = Tr::kF16Acc ? CUDA_R_16F : CUDA_R_32F;
  const cublasComputeType_t compute = Tr::kF16Acc ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F;
  const __half alpha_h = __float2half_rn(alpha), beta_h = __float2half_rn(beta);
  const void* alpha_p = Tr::kF16Acc ? static_cast<const void*>(&alpha_h) : static_cast<const void*>(&alpha);
  const void* beta_p = Tr::kF16Acc ? static_cast<const void*>(&beta_h) : static_cast<const void*>(&beta);
  const cublasOperation_t op_first = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasHandle_t handle = nullptr;
  auto run_cublas = [&]() {
    return cublasGemmEx(handle, op_first, op_second, N, M, K, alpha_p, dB, in_cdt,
                        static_cast<int>(ldb), dA, in_cdt, static_cast<int>(lda), beta_p, dRef,
                        out_cdt, N, compute, CUBLAS_GEMM_DEFAULT);
  };

  std::vector<Out> hD(nC), hRef(nC);
  CUDA_CHECK(cudaMemcpy(hD.data(), dD, nC * sizeof(Out), cudaMemcpyDeviceToHost));
  if (!diag) {
    CUBLAS_CHECK(cublasCreate(&handle));
    CUDA_CHECK(cudaMemcpy(dRef, dC, nC * sizeof(Out), cudaMemcpyDeviceToDevice));
    CUBLAS_CHECK(run_cublas());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hRef.data(), dRef, nC * sizeof(Out), cudaMemcpyDeviceToHost));
  } else {
    // Exact expectation: diag 'b': D[m][n] = op(B)[m % 64][n] (0 if m%64 >= K);
    //                    diag 'a': D[m][n] = op(A)[m][n % 64] (0 if n%64 >= K).
    for (long long m = 0; m < M; ++m)
      for (long long n = 0; n < N; ++n) {
        double v = 0.0;
        if (opt.diag == 'b' && m % 64 < K) v = to_d(hB[idxB(m % 64, n)]);
        if (opt.diag == 'a' && n % 64 < K) v = to_d(hA[idxA(m, n % 64)]);
        hRef[static_cast<size_t>(m) * N + n] = from_f<Out>(static_cast<float>(v));
      }
  }

  const double tol = diag ? 0.0 : tolerance_for(Tr::kF16Acc, K, alpha, beta);
  bool ok = true;

  {
    CompareStats st;
    // Mismatch histograms by position inside the 128x256 tile, in 8x8 units:
    // a swizzle error shows up as a pattern over columns, a fragment-layout
    // error over rows / row halves, a pipeline error as whole tiles.  For
    // MN-major operands also see the 64-wide block summary below.
    std::vector<long long> bad_rowgrp(BM / 8, 0), bad_colgrp(BN / 8, 0);
    std::vector<long long> all_rowgrp(BM / 8, 0), all_colgrp(BN / 8, 0);
    long long bad_nan = 0;
    for (size_t i = 0; i < nC; ++i) {
      const double g = to_d(hD[i]), r = to_d(hRef[i]);
      const double e = std::fabs(g - r);
      const bool nan = !std::isfinite(g);
      const size_t row = i / N, col = i % N;
      all_rowgrp[row % BM / 8]++;
      all_colgrp[col % BN / 8]++;
      if (nan) ++bad_nan;
      st.count++;
      if (!nan) st.sum_sq += e * e;
      if (nan || e > tol) {
        if (st.bad < 10) {
          printf("  MISMATCH D[%zu][%zu] = %.6f  %s = %.6f  |diff| = %.3e  "
                 "(tile (%zu,%zu), in-tile row %zu col %zu)\n",
                 row, col, g, diag ? "expected" : "cuBLAS", r, e, row / BM, col / BN, row % BM,
                 col % BN);
        }
        st.bad++;
        bad_rowgrp[row % BM / 8]++;
        bad_colgrp[col % BN / 8]++;
      }
      st.max_abs = nan ? INFINITY : std::max(st.max_abs, e);
    }
    const double rms = std::sqrt(st.sum_sq / std::max<long long>(1, st.count));
    printf("[check vs %s, all %lld elements] max|diff| = %.3e, rms = %.3e, tol = %.3e (%s), "
           "max|diff|/tol = %.3f, mismatches = %lld (non-finite %lld)\n",
           diag ? "exact diag expectation" : "cuBLAS", st.count, st.max_abs, rms, tol,
           diag ? "exact" : (Tr::kF16Acc ? "f16-accumulation model, see tolerance_for"
                                         : "1e-3*sqrt(K)*|alpha| + 1e-5"),
           tol > 0 ? st.max_abs / tol : 0.0, st.bad, bad_nan);
    if (st.bad > 0) {
      ok = false;
      printf("  mismatch count by in-tile row group (rows 8g..8g+7), g = 0..15:\n   ");
      for (int g = 0; g < BM / 8; ++g) printf(" %lld", bad_rowgrp[g]);
      printf("\n  mismatch count by in-tile column group (cols 8g..8g+7), g = 0..31:\n   ");
      for (int g = 0; g < BN / 8; ++g) printf(" %lld", bad_colgrp[g]);
      printf("\n");
      // 64-wide blocks = MN-major atom columns: A has 2 along M, B 4 along N.
      printf("  bad fraction per 64-row block of the tile (A atom columns when ta=1):");
      for (int b = 0; b < BM / 64; ++b) {
        long long bad = 0, all = 0;
        for (int g = 8 * b; g < 8 * b + 8; ++g) { bad += bad_rowgrp[g]; all += all_rowgrp[g]; }
        printf(" %.3f", all ? (double)bad / all : 0.0);
      }
      printf("\n  bad fraction per 64-column block of the tile (B atom columns when tb=0):");
      for (int b = 0; b < BN / 64; ++b) {
        long long bad = 0, all = 0;
        for (int g = 8 * b; g < 8 * b + 8; ++g) { bad += bad_colgrp[g]; all += all_colgrp[g]; }
        printf(" %.3f", all ? (double)bad / all : 0.0);
      }
      printf("\n");
      if (bad_nan > 0)
        printf("  note: non-finite values = elements the kernel never wrote (D was poisoned "
               "with NaN), pitch padding read by TMA (filled with NaN), or garbage from a bad "
               "load.\n");
      if (ta == 1)
        printf("  hint (A M-major): one wgmma reads a 64-row block = one atom column, so A's LBO "
               "is never used; wrong rows everywhere -> SBO (1024), k16 step (2048) or the A "
               "boxes; run --diag a to decode which A element each D element received.\n");
      if (tb == 0)
        printf("  hint (B N-major): only column blocks 1-3 wrong -> the 64-column stride (LBO "
               "8192) alone is off; all blocks wrong -> SBO (1024), the k16 step (2048), the B "
               "boxes, or LBO/SBO roles swapped (a swapped reading also breaks block 0 via the "
               "K groups 8-15): rerun with --mn-lbo 1024 --mn-sbo 8192, and run --diag b to "
               "decode which B element each D element received.\n");
    }
  }

  // ------------------------- diag: decode mismatches -------------------------
  if (diag) {
    // Every D element should equal one code; find which code it holds.
    const int range = (opt.diag == 'b') ? BK * BN : BM * BK;
    std::map<std::pair<int, int>, long long> hist;   // (delta1, delta2) -> count
    long long undecodable = 0, printed = 0;
    for (size_t i = 0; i < nC; ++i) {
      const double g = to_d(hD[i]), r = to_d(hRef[i]);
      if (g == r) continue;
      const long long m = static_cast<long long>(i / N), n = static_cast<long long>(i % N);
      const In gi = from_f<In>(static_cast<float>(g));
      const int idx = static_cast<int>(bits_of(gi)) - diag_base;
      const bool exact = std::isfinite(g) && to_d(gi) == g;
      if (!exact || idx < 0 || idx >= range || g == 0.0) {
        ++undecodable;
        if (printed < 12) {
          printf("  DIAG D[%lld][%lld] = %.6g is not a single op(%c) element (expected %.6g)\n", m,
                 n, g, opt.diag == 'b' ? 'B' : 'A', r);
          ++printed;
        }
        continue;
      }
      int d1, d2;
      if (opt.diag == 'b') {
        const int kk = idx / BN, nn = idx % BN;           // read op(B)[kk][nn] (tile-relative)
        const int ke = static_cast<int>(m % 64), ne = static_cast<int>(n % BN);
        d1 = kk - ke; d2 = nn - ne;
        if (printed < 12) {
          printf("  DIAG D[%lld][%lld]: expected op(B) tile (k %d, n %d), got op(B) tile (k %d, n %d)"
                 "  dk=%+d dn=%+d\n", m, n, ke, ne, kk, nn, d1, d2);
          ++printed;
        }
      } else {
        const int mm = idx / BK, kk = idx % BK;           // read op(A)[mm][kk] (tile-relative)
        const int me = static_cast<int>(m % BM), ke = static_cast<int>(n % 64);
        d1 = mm - me; d2 = kk - ke;
        if (printed < 12) {
          printf("  DIAG D[%lld][%lld]: expected op(A) tile (m %d, k %d), got op(A) tile (m %d, k %d)"
                 "  dm=%+d dk=%+d\n", m, n, me, ke, mm, kk, d1, d2);
          ++printed;
        }
      }
      hist[{d1, d2}]++;
    }
    if (!hist.empty() || undecodable > 0) {
      std::vector<std::pair<long long, std::pair<int, int>>> top;
      for (auto& h : hist) top.push_back({h.second, h.first});
      std::sort(top.rbegin(), top.rend());
      printf("[diag %c] %lld wrong elements not decodable (zero, NaN, sums); most frequent "
             "displacements (%s):\n", opt.diag, undecodable,
             opt.diag == 'b' ? "dk, dn" : "dm, dk");
      for (size_t t = 0; t < top.size() && t < 10; ++t)
        printf("    (%+d, %+d) x %lld\n", top[t].second.first, top[t].second.second, top[t].first);
    } else {
      printf("[diag %c] every D element holds exactly the expected op(%c) element\n", opt.diag,
             opt.diag == 'b' ? 'B' : 'A');
    }
  }

  // ------------------------ optional CPU double check ------------------------
  if (opt.check && !diag) {
    std::vector<std::pair<int, int>> pts;
    auto add = [&](long long r, long long c) {
      if (r >= 0 && r < M && c >= 0 && c < N) pts.push_back({(int)r, (int)c});
    };
    // Corners, tile edges, fragment boundaries (row+8, warp boundary 16, WG
    // boundary 64, atom columns 64/128/192).
    const long long rows[] = {0, 1, 7, 8, 15, 16, 63, 64, 127, 128, M - 1, M - 2};
    const long long cols[] = {0, 1, 2, 7, 8, 63, 64, 127, 128, 191, 192, 255, 256, N - 1, N - 2};
    for (long long r : rows)
      for (long long c : cols) add(r, c);
    Rng rng(opt.seed ^ 0xABCDEFull);
    while (pts.size() < 1000) add((long long)(rng.next() % M), (long long)(rng.next() % N));

    double max_e_ours = 0, max_e_cublas = 0, max_rel_ours = 0, bias_ours = 0, bias_cublas = 0;
    long long bad_ours = 0, bad_cublas = 0;
    for (auto& p : pts) {
      const int r = p.first, c = p.second;
      double acc = 0.0, sabs = 0.0;
      for (int k = 0; k < K; ++k) {
        const double a = to_d(hA[idxA(r, k)]);
        const double b = to_d(hB[idxB(k, c)]);
        acc += a * b;
        sabs += std::fabs(a * b);
      }
      const size_t idx = (size_t)r * N + c;
      const double ref = (double)alpha * acc + (double)beta * to_d(hC[idx]);
      const double go = to_d(hD[idx]), gc = to_d(hRef[idx]);
      const double eo = std::fabs(go - ref);
      const double ec = std::fabs(gc - ref);
      const bool bo = !(eo <= tol), bc = !(ec <= tol);
      if (bo && bad_ours < 5)
        printf("  CPU-MISMATCH ours D[%d][%d] = %.6f  cpu = %.6f  |diff| = %.3e\n", r, c, go, ref,
               eo);
      if (bc && bad_cublas < 5)
        printf("  CPU-MISMATCH cuBLAS D[%d][%d] = %.6f  cpu = %.6f  |diff| = %.3e\n", r, c, gc,
               ref, ec);
      bad_ours += bo;
      bad_cublas += bc;
      max_e_ours = std::max(max_e_ours, std::isfinite(eo) ? eo : INFINITY);
      max_e_cublas = std::max(max_e_cublas, std::isfinite(ec) ? ec : INFINITY);
      if (std::isfinite(eo)) bias_ours += go - ref;
      if (std::isfinite(ec)) bias_cublas += gc - ref;
      // Error relative to sum_k |a_k b_k| (the natural scale of summation error).
      if (sabs > 0) max_rel_ours = std::max(max_rel_ours, eo / (std::fabs(alpha) * sabs));
    }
    const double np = static_cast<double>(pts.size());
    printf("[check vs CPU double, %zu sampled elements] ours: max|diff| = %.3e, mismatches %lld, "
           "mean signed diff %.3e; cuBLAS: max|diff| = %.3e, mismatches %lld, mean signed diff "
           "%.3e; ours max |diff|/(|alpha|*sum|a*b|) = %.3e (%s unit roundoff %.1e)\n",
           pts.size(), max_e_ours, bad_ours, bias_ours / np, max_e_cublas, bad_cublas,
           bias_cublas / np, max_rel_ours, Tr::kF16Acc ? "fp16" : "fp32",
           Tr::kF16Acc ? 4.9e-4 : 6.0e-8);
    if (Tr::kF16Acc && std::fabs(bias_ours / np) > 0.25 * max_e_ours && max_e_ours > 0)
      printf("  note: the mean signed error is a large part of the max error: the f16 "
             "accumulation looks directionally rounded, not round-to-nearest; the tolerance "
             "model of tolerance_for() assumes round-to-nearest.\n");
    if (bad_cublas > 0)
      printf("  note: cuBLAS disagrees with the CPU reference -> the cuBLAS call mapping or the "
             "CPU reference is wrong, not necessarily the kernel.\n");
    if (bad_ours > 0) ok = false;
    printf("  samples: D[0][0]=%.5f (cuBLAS %.5f)", to_d(hD[0]), to_d(hRef[0]));
    if (N > 1) printf("  D[0][1]=%.5f (%.5f)", to_d(hD[1]), to_d(hRef[1]));
    if (M > 8) printf("  D[8][0]=%.5f (%.5f)", to_d(hD[(size_t)8 * N]), to_d(hRef[(size_t)8 * N]));
    printf("  D[M-1][N-1]=%.5f (%.5f)\n", to_d(hD[nC - 1]), to_d(hRef[nC - 1]));
  }

  printf("correctness: %s\n", ok ? "PASS" : "FAIL");

  // --------------------------------- timing ---------------------------------
  if (opt.repeat > 0 && !diag) {
    const int repeat = opt.repeat;
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    auto time_it = [&](auto&& fn, const char* name) {
      for (int i = 0; i < 3; ++i) fn();           // warm-up
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> ms(repeat);
      for (int i = 0; i < repeat; ++i) {
        CUDA_CHECK(cudaEventRecord(e0));
        fn();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
      }
      std::vector<float> sorted = ms;
      std::sort(sorted.begin(), sorted.end());
      const double med = sorted[repeat / 2];
      const double tflops = 2.0 * M * (double)N * K / (med * 1e-3) / 1e12;
      printf("[time] %-8s median %.4f ms (min %.4f, max %.4f, %d runs)  %.1f TFLOP/s\n", name, med,
             sorted.front(), sorted.back(), repeat, tflops);
      return tflops;
    };
    const double t_ours = time_it([&]() { launch(); }, "wgmma");
    const double t_cublas = time_it([&]() { CUBLAS_CHECK(run_cublas()); }, "cuBLAS");
    printf("[time] ratio wgmma / cuBLAS = %.3f  (type %s, ta=%d tb=%d, group %d, cluster %d)\n",
           t_ours / t_cublas, Tr::kName, ta, tb, opt.group, opt.cluster);
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
  }

  if (handle != nullptr) CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dD));
  CUDA_CHECK(cudaFree(dRef));
  g_watchdog_host = nullptr;
  CUDA_CHECK(cudaFreeHost(wd_host));
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 4) { usage(argv[0]); return 2; }
  Options opt;
  opt.M = atoll(argv[1]);
  opt.N = atoll(argv[2]);
  opt.K = atoll(argv[3]);
  auto parse01 = [&](const char* s, const char* what) {
    if (!strcmp(s, "0")) return 0;
    if (!strcmp(s, "1")) return 1;
    fprintf(stderr, "error: %s must be 0 or 1, got '%s'\n", what, s);
    exit(2);
  };
  for (int i = 4; i < argc; ++i) {
    const bool has_val = i + 1 < argc;
    if (!strcmp(argv[i], "--check")) opt.check = true;
    else if (!strcmp(argv[i], "--no-pad")) opt.pad = false;
    else if (!strcmp(argv[i], "--repeat") && has_val) opt.repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && has_val) opt.seed = strtoull(argv[++i], nullptr, 10);
    else if (!strcmp(argv[i], "--ta") && has_val) opt.ta = parse01(argv[++i], "--ta");
    else if (!strcmp(argv[i], "--tb") && has_val) opt.tb = parse01(argv[++i], "--tb");
    else if (!strcmp(argv[i], "--mn-lbo") && has_val) opt.mn_lbo = (uint32_t)strtoul(argv[++i], nullptr, 10);
    else if (!strcmp(argv[i], "--mn-sbo") && has_val) opt.mn_sbo = (uint32_t)strtoul(argv[++i], nullptr, 10);
    else if (!strcmp(argv[i], "--group") && has_val) opt.group = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cluster") && has_val) opt.cluster = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--diag") && has_val) {
      const char* d = argv[++i];
      if (strcmp(d, "a") && strcmp(d, "b")) { fprintf(stderr, "error: --diag takes a or b\n"); return 2; }
      opt.diag = d[0];
    } else if (!strcmp(argv[i], "--type") && has_val) {
      const char* t = argv[++i];
      if (!strcmp(t, "F16_IN_F32_OUT")) opt.pair = Pair::F16_IN_F32_OUT;
      else if (!strcmp(t, "F16_IN_OUT")) opt.pair = Pair::F16_IN_OUT;
      else if (!strcmp(t, "BF16_IN_F32_OUT")) opt.pair = Pair::BF16_IN_F32_OUT;
      else { fprintf(stderr, "error: unknown --type '%s'\n", t); usage(argv[0]); return 2; }
    } else { fprintf(stderr, "unknown argument '%s'\n", argv[i]); usage(argv[0]); return 2; }
  }
  if (opt.M <= 0 || opt.N <= 0 || opt.K <= 0 || opt.M > (1LL << 30) || opt.N > (1LL << 30) ||
      opt.K > (1LL << 30)) {
    fprintf(stderr, "error: M, N, K must be positive (and < 2^30)\n");
    return 2;
  }
  if (opt.repeat < 0) opt.repeat = 0;
  if (opt.group < 1 || opt.group > (1 << 24)) {
    fprintf(stderr, "error: --group must be a positive number of block rows, got %d\n", opt.group);
    return 2;
  }
  if (opt.cluster != 1 && opt.cluster != 2) {
    fprintf(stderr, "error: --cluster must be 1 or 2, got %d\n", opt.cluster);
    return 2;
  }
  for (uint32_t v : {opt.mn_lbo, opt.mn_sbo}) {
    if (v == 0 || v % 16 != 0 || v >= (1u << 18)) {
      fprintf(stderr, "error: --mn-lbo/--mn-sbo must be a positive multiple of 16 below 2^18 "
                      "(14-bit field of bytes/16, [F1]); got %u\n", v);
      return 2;
    }
  }
  if (!opt.pad) {
    // TMA: the row pitch (contiguous dimension * 2 bytes) must be a multiple of
    // 16 bytes [F5], i.e. the contiguous dimension a multiple of 8 elements.
    struct { const char* what; const char* dim; long long v; } need[2] = {
        {opt.ta ? "A is stored K x M (ta=1): M is its contiguous dimension"
                : "A is stored M x K (ta=0): K is its contiguous dimension",
         opt.ta ? "M" : "K", opt.ta ? opt.M : opt.K},
        {opt.tb ? "B is stored N x K (tb=1): K is its contiguous dimension"
                : "B is stored K x N (tb=0): N is its contiguous dimension",
         opt.tb ? "K" : "N", opt.tb ? opt.K : opt.N}};
    for (auto& q : need) {
      if (q.v % 8 != 0) {
        fprintf(stderr, "error: %s=%lld is not a multiple of 8. %s, and with --no-pad its row "
                        "pitch (%s*2 bytes) must be a multiple of 16 bytes for TMA. Drop --no-pad "
                        "to use a padded pitch.\n", q.dim, q.v, q.what, q.dim);
        return 2;
      }
    }
  }

  // ------------------------------- device check -----------------------------
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  printf("device %d: %s, compute capability %d.%d, %d SMs, smem/block opt-in %zu B\n", dev,
         prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.sharedMemPerBlockOptin);
  if (prop.major != 9 || prop.minor != 0) {
    fprintf(stderr, "error: this kernel needs a Hopper GPU (compute capability 9.0, built for "
                    "sm_90a); found %d.%d.\n", prop.major, prop.minor);
    return 3;
  }
  if (prop.sharedMemPerBlockOptin < static_cast<size_t>(SMEM_BYTES)) {
    fprintf(stderr, "error: kernel needs %d B dynamic shared memory, device allows %zu B\n",
            SMEM_BYTES, prop.sharedMemPerBlockOptin);
    return 2;
  }

  switch (opt.pair) {
    case Pair::F16_IN_F32_OUT: return run_pair<Pair::F16_IN_F32_OUT>(opt, prop);
    case Pair::F16_IN_OUT: return run_pair<Pair::F16_IN_OUT>(opt, prop);
    case Pair::BF16_IN_F32_OUT: return run_pair<Pair::BF16_IN_F32_OUT>(opt, prop);
  }
  return 2;
}
