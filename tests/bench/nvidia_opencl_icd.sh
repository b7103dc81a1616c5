# Sourced by the GPU bench scripts: registers NVIDIA's OpenCL driver for the ICD loader unless
# some .icd already names it (the lent GPU machine has the driver but no vendors file).
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  lib=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
  mkdir -p /tmp/optune-icd && echo "${lib:-libnvidia-opencl.so.1}" > /tmp/optune-icd/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/optune-icd
  echo "OpenCL ICD: ${lib:-libnvidia-opencl.so.1} (registered in $OCL_ICD_VENDORS)"
fi
