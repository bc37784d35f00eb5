// One configuration of peers/cutlass.h, compiled with CUTLASS's headers: scripts/peerlib.py
// compiles this file once for each, with -DPEER_CONFIG=its name, the pair's and layout's -D
// options as ./gemm's build has them, and pair.h (gemm.md's configuration and type pairs,
// tangled alone) on the include path. Each object is one CUTLASS kernel, so they compile in
// parallel.
//
// CUTLASS's headers come first: gemm.md's macros must not reach into them.
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "pair.h"
#include "cutlass.h"

// CUTLASS's name for each element type gemm.md uses; tf32 inputs are stored as float.
template <typename T> struct Cut { typedef T type; };
template <> struct Cut<half> { typedef cutlass::half_t type; };
template <> struct Cut<__nv_bfloat16> { typedef cutlass::bfloat16_t type; };
template <> struct Cut<__nv_fp8_e4m3> { typedef cutlass::float_e4m3_t type; };
template <> struct Cut<__nv_fp8_e5m2> { typedef cutlass::float_e5m2_t type; };
template <typename T> using cut_t = typename Cut<T>::type;
typedef std::conditional_t<std::is_same_v<Pair::in_t, float>, cutlass::tfloat32_t, cut_t<Pair::in_t>> CIn;
typedef cut_t<Pair::acc_t> CAcc;
typedef cut_t<Pair::c_t> COut;

typedef std::conditional_t<TRANSPOSE_A, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor> LayoutA;
typedef std::conditional_t<TRANSPOSE_B, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor> LayoutB;
[[maybe_unused]] constexpr bool BYTE_INPUTS = sizeof(Pair::in_t) == 1, K_MAJOR = !TRANSPOSE_A && TRANSPOSE_B;
constexpr bool FP8 = std::is_same_v<CIn, cutlass::float_e4m3_t> || std::is_same_v<CIn, cutlass::float_e5m2_t>;

// A scalar in the epilogue's type (gemm.md keeps it in the accumulator's).
static CAcc scalar(Pair::acc_t x)
{
    if constexpr (std::is_same_v<Pair::acc_t, half>)
        return CAcc(__half2float(x));
    else
        return CAcc(x);
}

// One GEMM through CUTLASS's device-level object, whichever kind: NULL, or why not.
template <typename Gemm>
static const char *run_gemm(const typename Gemm::Arguments &args, void *work)
{
    static Gemm gemm;
    cutlass::Status status = gemm.can_implement(args);
    if (status == cutlass::Status::kSuccess)
        status = gemm.initialize(args, work);
    if (status == cutlass::Status::kSuccess)
        status = gemm.run();
    return status == cutlass::Status::kSuccess ? NULL : cutlassGetStatusString(status);
}

// ---- sm80: cutlass::gemm::device::Gemm, a multistage cp.async pipeline and mma.sync ----

template <int, int BM, int BN, int KB, int WM, int WN, int STAGES>
static const char *run_sm80(const Peer *call)
{
    if constexpr (std::is_same_v<Pair::in_t, double> || FP8)
        return "these configurations are for 16-bit, tf32 and 8-bit inputs";
    else if constexpr (BYTE_INPUTS && !K_MAJOR)
        return "CUTLASS's sm80 GEMM takes 8-bit inputs in the layout TN only";
    else {
        constexpr int BK = KB / (int)sizeof(Pair::in_t);
        constexpr int IK = 32 / (int)sizeof(Pair::in_t);   // mma.sync's K: 32 bytes of A
        typedef cutlass::epilogue::thread::LinearCombination<COut, 128 / cutlass::sizeof_bits<COut>::value,
                                                             CAcc, CAcc> Epilogue;
        typedef cutlass::gemm::device::Gemm<
            CIn, LayoutA, CIn, LayoutB, COut, cutlass::layout::RowMajor, CAcc, cutlass::arch::OpClassTensorOp,
            cutlass::arch::Sm80, cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>,
            cutlass::gemm::GemmShape<16, 8, IK>, Epilogue,
            cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, STAGES> Gemm;
        if (!call)
            return NULL;
        typename Gemm::Arguments args({(int)call->M, (int)call->N, (int)call->K},
                                      {(const CIn *)call->A, call->lda}, {(const CIn *)call->B, call->ldb},
                                      {(COut *)call->out, call->ldc}, {(COut *)call->out, call->ldc},
                                      {scalar(call->alpha), scalar(call->beta)});
        return run_gemm<Gemm>(args, NULL);
    }
}

// ---- sm90: the collective builder's TMA and wgmma kernels, warp-specialized ----

struct Cooperative {
    typedef std::conditional_t<FP8, cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                               cutlass::gemm::KernelTmaWarpSpecializedCooperative> mainloop;
    typedef cutlass::epilogue::TmaWarpSpecializedCooperative epilogue;
};
struct Pingpong {
    typedef std::conditional_t<FP8, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                               cutlass::gemm::KernelTmaWarpSpecializedPingpong> mainloop;
    typedef cutlass::epilogue::TmaWarpSpecialized epilogue;
};

// A CuTe stride of a matrix as gemm.md stores it: 1 along the contiguous side, ld along the other.
template <typename Stride> static Stride strided(int64_t ld)
{
    Stride s{};
    if constexpr (cute::is_static<cute::remove_cvref_t<decltype(cute::get<0>(s))>>::value)
        cute::get<1>(s) = ld;
    else
        cute::get<0>(s) = ld;
    return s;
}

template <int, typename Schedule, int BM, int BN, int KB, int CM>
static const char *run_sm90(const Peer *call)
{
    if constexpr (std::is_same_v<Pair::in_t, double>)
        return "CUTLASS's Hopper GEMM here is for 16-bit, tf32, 8-bit and FP8 inputs";
    else if constexpr (sizeof(Pair::in_t) != 2 && !K_MAJOR)
        return "wgmma takes tf32, 8-bit and FP8 operands K-major only: CUTLASS's Hopper GEMM "
               "takes them in the layout TN only";
    else {
#if defined(CUTLASS_ARCH_MMA_SM90_SUPPORTED)
        constexpr int BK = KB / (int)sizeof(Pair::in_t);
        typedef cute::Shape<cute::Int<BM>, cute::Int<BN>, cute::Int<BK>> TileShape;
        typedef cute::Shape<cute::Int<CM>, cute::_1, cute::_1> ClusterShape;
        constexpr int ALIGN_IN = 16 / (int)sizeof(Pair::in_t), ALIGN_C = 16 / (int)sizeof(Pair::c_t);
        typedef typename cutlass::epilogue::collective::CollectiveBuilder<
            cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
            cutlass::epilogue::collective::EpilogueTileAuto, CAcc, CAcc, COut, cutlass::layout::RowMajor, ALIGN_C,
            COut, cutlass::layout::RowMajor, ALIGN_C, typename Schedule::epilogue>::CollectiveOp Epilogue;
        typedef typename cutlass::gemm::collective::CollectiveBuilder<
            cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, CIn, LayoutA, ALIGN_IN, CIn, LayoutB, ALIGN_IN,
            CAcc, TileShape, ClusterShape,
            cutlass::gemm::collective::StageCountAutoCarveout<(int)sizeof(typename Epilogue::SharedStorage)>,
            typename Schedule::mainloop>::CollectiveOp Mainloop;
        typedef cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue> Kernel;
        typedef cutlass::gemm::device::GemmUniversalAdapter<Kernel> Gemm;
        if (!call)
            return NULL;
        typename Gemm::Arguments args{
            cutlass::gemm::GemmUniversalMode::kGemm,
            {(int)call->M, (int)call->N, (int)call->K, 1},
            {(const CIn *)call->A, strided<typename Kernel::StrideA>(call->lda),
             (const CIn *)call->B, strided<typename Kernel::StrideB>(call->ldb)},
            {{scalar(call->alpha), scalar(call->beta)},
             (const COut *)call->out, strided<typename Kernel::StrideC>(call->ldc),
             (COut *)call->out, strided<typename Kernel::StrideD>(call->ldc)}};
        // The tile scheduler's workspace, kept from call to call and grown when a call needs more.
        static void *work = NULL;
        static size_t work_bytes = 0;
        const size_t need = Gemm::get_workspace_size(args);
        if (need > work_bytes) {
            if (work)
                cudaFree(work);
            if (cudaMalloc(&work, need) != cudaSuccess)
                return "no device memory for CUTLASS's workspace";
            work_bytes = need;
        }
        return run_gemm<Gemm>(args, work);
#else
        (void)call;
        return "CUTLASS's Hopper GEMM needs a build for sm_90a";
#endif
    }
}

// Every configuration, as a template that nothing instantiates; then the one this object holds.
// (The leading argument ties each body to its template, so that the others stay uncompiled.)
#define SM80(name, ...) \
    template <int I> const char *name(const Peer *call) { return run_sm80<I, __VA_ARGS__>(call); }
#define SM90(name, ...) \
    template <int I> const char *name(const Peer *call) { return run_sm90<I, __VA_ARGS__>(call); }
CUTLASS_SM80(SM80)
CUTLASS_SM90(SM90)
template const char *PEER_CONFIG<0>(const Peer *call);
