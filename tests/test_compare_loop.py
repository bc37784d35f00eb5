"""compare_gpu.py --loop: finding a kernel's main loop in nvdisasm's text and timing its loads by
instructions, on a small listing written here (no GPU, no nvdisasm)."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import compare_gpu  # noqa: E402

LISTING = """
.text._Z10gemm_tiledILi0E5Mma16iEvPKaS2_PT1_llllii:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_7:
        /*0010*/                   LDSM.16.M88.4 R8, [R2] ;
        /*0020*/              @!P0 LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R4.64] ;
        /*0030*/                   IMMA.16832.S8.S8 R20, R12.reuse.ROW, R16.COL, R20 ;
        /*0040*/                   IADD3 R2, R2, 0x40, RZ ;
        /*0050*/                   IMMA.16832.S8.S8 R24, R12.ROW, R10.COL, R24 ;
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0070*/                   LDSM.16.M88.2 R30, [R2] ;
        /*0080*/              @!P1 BRA `(.L_x_7) ;
        /*0090*/                   EXIT ;
.L_x_8:
        /*00a0*/                   BRA `(.L_x_8) ;
.text._Z10gemm_tiledILi1E5Mma16iEvPKaS2_PT1_llllii:
        /*0000*/                   EXIT ;
"""


def test_the_loop_is_the_backward_branch_around_the_multiplies():
    found = compare_gpu.functions(LISTING)
    assert list(found) == ["_Z10gemm_tiledILi0E5Mma16iEvPKaS2_PT1_llllii", "_Z10gemm_tiledILi1E5Mma16iEvPKaS2_PT1_llllii"]
    loop = compare_gpu.main_loop(found["_Z10gemm_tiledILi0E5Mma16iEvPKaS2_PT1_llllii"])
    assert [compare_gpu.opcode(i) for i in loop] == ["LDSM", "LDGSTS", "IMMA", "IADD3", "IMMA", "BAR", "LDSM", "BRA"]
    assert compare_gpu.main_loop(found["_Z10gemm_tiledILi1E5Mma16iEvPKaS2_PT1_llllii"]) == []


def test_a_load_is_timed_to_the_first_multiply_that_reads_it():
    loop = compare_gpu.main_loop(compare_gpu.functions(LISTING)["_Z10gemm_tiledILi0E5Mma16iEvPKaS2_PT1_llllii"])
    # R8..R11 from the first LDSM: the second IMMA reads R10, four instructions on (the first
    # reads R12 and R16, and writes R20, which is no use of the load)
    assert compare_gpu.first_use(loop, 0) == 4
    assert compare_gpu.first_use(loop, 6) is None and compare_gpu.first_use(loop, 2) is None
    lines = compare_gpu.report(loop)
    assert lines[0] == "8 instructions: 2 LDSM, 2 IMMA, 1 LDGSTS, 1 IADD3, 1 BAR, 1 BRA"
    assert lines[1:] == ["   0 LDSM   read 4 instructions later", "   1 LDGSTS", "   5 BAR",
                         "   6 LDSM   read in the next iteration"]


def test_without_nvdisasm_one_line_says_where_to_get_it(tmp_path):
    env = {"PATH": str(Path(sys.executable).parent), "PYTHONNOUSERSITE": "1"}   # Python's folder alone
    code = "import sys; sys.path[:] = [p for p in sys.path if 'site-packages' not in p]; " \
           f"sys.path.insert(0, {str(REPO / 'scripts')!r}); import compare_gpu; compare_gpu.nvdisasm()"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 1 and "requirements-sass.txt" in result.stderr and "Traceback" not in result.stderr
