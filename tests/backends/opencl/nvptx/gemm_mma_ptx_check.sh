#!/usr/bin/env bash
# The tensor-core GEMM (kernels/opencl/gemm_mma.cl) and gemm_dot4.cl's dp4a path run only on
# NVIDIA GPUs, which CI lacks. This check compiles them as NVIDIA's OpenCL compiler would, for
# configs of their spaces, with clang's OpenCL front end to PTX (inline PTX passed through), and
# assembles the PTX with ptxas for sm_80 and sm_90: a typo in the inline assembly, an operand of
# the wrong type, or a local memory layout over 48 KiB fails here. Exit 77 (skipped) where clang or ptxas is missing.
# Usage: gemm_mma_ptx_check.sh KERNELS_OPENCL_DIR WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernel=$1/gemm_mma.cl
work=$2
mkdir -p "$work"
ptxas=$(command -v ptxas || true)
[[ -z $ptxas && -x /usr/local/cuda/bin/ptxas ]] && ptxas=/usr/local/cuda/bin/ptxas
if ! command -v clang >/dev/null || [[ -z $ptxas ]]; then
  echo "skipped: needs clang and ptxas (CUDA toolkit)"
  exit 77
fi

checked=0
# assemble PTX DESCRIPTION: the PTX assembled by ptxas for sm_80 and sm_90, each counted.
assemble() {
  local ptx=$1 arch
  for arch in sm_80 sm_90; do
    sed "s/^\.target .*/.target $arch/; s/^\.version .*/.version 7.8/" "$ptx" > "$ptx.$arch"
    if ! "$ptxas" -arch=$arch "$ptx.$arch" -o "$ptx.$arch.cubin" 2> "$ptx.$arch.log"; then
      echo "ptxas $arch failed for $2:"; cat "$ptx.$arch.log"; exit 1
    fi
    checked=$((checked + 1))
  done
}
# shape (M N K) | MWG NWG KWG WM WN STAGES LDSM GSW [SPLITK [DTYPE]]; DTYPE f32 (3xTF32), f16 or
# bf16 (m16n8k16 products, B's fragments through ldmatrix.trans), i8 (m16n8k32, B transposed in
# local memory and read with ldmatrix as A)
while read -r m n k mwg nwg kwg wm wn stages ldsm gsw splitk dtype; do
  splitk=${splitk:-1} dtype=${dtype:-f32}
  defines="-DM=$m -DN=$n -DK=$k -DMWG=$mwg -DNWG=$nwg -DKWG=$kwg -DWM=$wm -DWN=$wn -DSTAGES=$stages -DLDSM=$ldsm"
  a16=$((k % 4 == 0)) b16=$((n % 4 == 0))
  defines+=" -DGSW=$gsw -DEDGE_M=$((m % mwg != 0)) -DEDGE_N=$((n % nwg != 0)) -DEDGE_K=$((k % kwg != 0))"
  defines+=" -DA_ROWS16=$a16 -DB_ROWS16=$b16"
  (( splitk > 1 )) && defines+=" -DSPLITK=$splitk -DSPLIT_ACQREL=1"  # as the template sets it on sm_70+
  [[ $dtype == f16 ]] && defines+=" -DOPTUNE_F16"
  [[ $dtype == bf16 ]] && defines+=" -DOPTUNE_BF16"
  [[ $dtype == i8 ]] && defines+=" -DOPTUNE_I8"
  ptx=$work/gemm_mma_${mwg}_${nwg}_${kwg}_${wm}_${wn}_${stages}_${ldsm}_${gsw}_${splitk}_${m}_$dtype.ptx
  # shellcheck disable=SC2086
  clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
    -include "$here/opencl_builtins.h" -O3 -S $defines -o "$ptx" "$kernel"
  if [[ $dtype == f32 ]]; then
    grep -q "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" "$ptx" || { echo "no mma.sync in $ptx"; exit 1; }
  elif [[ $dtype == i8 ]]; then
    grep -q "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" "$ptx" || { echo "no s8 mma.sync in $ptx"; exit 1; }
    a16=1 b16=1
  else
    grep -q "mma.sync.aligned.m16n8k16.row.col.f32.$dtype.$dtype.f32" "$ptx" || { echo "no $dtype mma.sync in $ptx"; exit 1; }
    grep -q "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" "$ptx" || { echo "no ldmatrix.trans of B in $ptx"; exit 1; }
    a16=1 b16=1  # the template takes 16-bit types here only with K and N multiples of 8
  fi
  # each operand's rows: 16-byte copies where aligned, 4-byte ones where not
  if (( a16 || b16 )); then
    grep -q "cp.async.cg.shared.global" "$ptx" || { echo "no 16-byte cp.async in $ptx"; exit 1; }
  elif grep -q "cp.async.cg" "$ptx"; then
    echo "16-byte cp.async with no operand's rows aligned: $ptx"; exit 1
  fi
  if (( !a16 || !b16 )); then
    grep -q "cp.async.ca.shared.global.*, 4, " "$ptx" || { echo "no 4-byte cp.async in $ptx"; exit 1; }
  elif grep -q "cp.async.ca" "$ptx"; then
    echo "4-byte cp.async with aligned rows: $ptx"; exit 1
  fi
  if (( ldsm )) && ! grep -q 'ldmatrix.sync.aligned.m8n8.x4.shared' "$ptx"; then echo "LDSM=1 without ldmatrix: $ptx"; exit 1; fi
  # (i8 reads B's fragments with ldmatrix whatever LDSM says)
  if (( !ldsm )) && [[ $dtype != i8 ]] && grep -q 'ldmatrix.sync.aligned.m8n8.x4.shared' "$ptx"; then
    echo "LDSM=0 with ldmatrix: $ptx"; exit 1
  fi
  if (( splitk > 1 )); then  # split_k.cl: an acquire-release counter per work-item, no atomics on C
    grep -q "atom.acq_rel.gpu" "$ptx" || { echo "SPLITK=$splitk without the acquire-release atomic: $ptx"; exit 1; }
    if grep -q "red.global.add" "$ptx"; then echo "SPLITK=$splitk still adds into C atomically: $ptx"; exit 1; fi
  fi
  assemble "$ptx" "$defines"
done <<'CONFIGS'
2048 2048 2048  128 128 8  64 64 4 1 1
4096 4096 4096  128 128 8  64 64 4 0 8
2048 2048 2048  128 256 8  64 64 2 1 1
2048 2048 2048  64 64 32   32 32 2 0 1
1000 1020 1028  64 64 16  32 32 3 0 4
127 508 1020    32 32 8   16 16 2 1 1
64 64 64        32 64 16  16 32 3 1 1
128 768 3072    32 64 32  16 32 3 0 1 8
32 768 768      16 32 16  16 8 4 1 1 6
32 768 3072     16 16 128 16 8 2 1 1 4
1000 1000 1000  64 64 32  32 32 2 0 1 3
1023 769 2049   128 128 16 64 64 2 1 8 3
127 509 1021    32 32 16  16 16 2 0 1
128 130 128     64 64 32  32 32 2 1 1
1024 1024 1023  64 64 32  32 32 2 1 1 2
1024 1023 1024  64 64 32  32 32 2 0 1 2
4096 4096 4096  128 128 16 64 64 4 1 8 1 f16
4096 4096 4096  128 128 16 64 64 4 1 8 1 bf16
2048 2048 2048  128 256 16 64 64 2 0 1 1 f16
127 504 1016    32 32 16  16 16 2 0 1 1 bf16
128 768 3072    32 64 64  16 32 3 1 1 8 f16
1000 1000 1000  64 64 32  32 32 2 1 1 3 bf16
4096 4096 4096  128 128 64 64 32 2 1 1 1 i8
127 508 1024    32 32 64  16 16 4 0 1 1 i8
1000 1004 2048  64 64 64  16 32 4 1 8 4 i8
CONFIGS
# A pointwise convolution's GEMM (conv2d.opencl): the same kernel with its arguments in the
# convolution's order.
conv=$work/gemm_mma_conv_args.ptx
clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header -w \
  -include "$here/opencl_builtins.h" -O3 -S -DM=1024 -DN=196 -DK=256 -DMWG=64 -DNWG=64 -DKWG=64 -DWM=32 -DWN=32 \
  -DSTAGES=4 -DLDSM=1 -DGSW=1 -DEDGE_M=0 -DEDGE_N=1 -DEDGE_K=0 -DA_ROWS16=1 -DB_ROWS16=1 -DOPTUNE_I8 -DCONV_ARGS=1 \
  -o "$conv" "$kernel"
grep -q "mma.sync.aligned.m16n8k32" "$conv" || { echo "no mma.sync in $conv"; exit 1; }
assemble "$conv" "gemm_mma.cl with CONV_ARGS"
# Build options stored before the row flag was split per operand (-DROWS16=0) still copy both
# operands 4 bytes at a time.
legacy=$work/gemm_mma_legacy_rows16.ptx
clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
  -include "$here/opencl_builtins.h" -O3 -S -DM=127 -DN=509 -DK=1021 -DMWG=32 -DNWG=32 -DKWG=16 -DWM=16 -DWN=16 \
  -DSTAGES=2 -DLDSM=0 -DGSW=1 -DEDGE_M=1 -DEDGE_N=1 -DEDGE_K=1 -DROWS16=0 -o "$legacy" "$kernel"
if grep -q "cp.async.cg" "$legacy"; then echo "-DROWS16=0 left 16-byte copies: $legacy"; exit 1; fi
# gemm_dot4.cl (int8 on packed quads): dp4a on NVIDIA, for whole tiles and ragged edges.
while read -r m n k mwg nwg kwg mdimc ndimc gsw; do
  defines="-DM=$m -DN=$n -DK=$k -DMWG=$mwg -DNWG=$nwg -DKWG=$kwg -DMDIMC=$mdimc -DNDIMC=$ndimc -DGSW=$gsw"
  defines+=" -DEDGE_M=$((m % mwg != 0)) -DEDGE_N=$((n % nwg != 0)) -DEDGE_K=$((k % kwg != 0))"
  ptx=$work/gemm_dot4_${m}_${n}_${k}_${mwg}_${nwg}_${kwg}_${mdimc}_${ndimc}_$gsw.ptx
  # shellcheck disable=SC2086
  clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header -w \
    -include "$here/opencl_builtins.h" -O3 -S $defines -o "$ptx" "$1/gemm_dot4.cl"
  grep -q "dp4a.s32.s32" "$ptx" || { echo "no dp4a in $ptx"; exit 1; }
  assemble "$ptx" "gemm_dot4.cl $defines"
done <<'CONFIGS'
4096 4096 4096  128 128 32 16 16 8
127 509 1020    64 64 64 8 8 1
200 72 36       32 32 16 8 4 4
CONFIGS
echo "gemm_mma.cl and gemm_dot4.cl: $checked PTX assemblies for sm_80 and sm_90 passed"
