// Between the tuning space and the kernel: a config of the "gemm.cpu" template's space turned
// into the GemmConfig the kernel takes, and a GemmConfig written as C++ source (for emitted
// candidates and for the tables `optune apply-best` generates). Defined with the template in
// kernels/src/cpu_gemm_template.cpp, so the knob names live in one file.
#pragma once

#include <string>

#include "optune/kernels/cpu/gemm_config.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels::cpu {

// Throws std::invalid_argument when the config lacks a knob of the gemm.cpu space.
GemmConfig gemm_config_from_view(const search_space::ConfigView& config);

// A C++ expression of the config: "optune::kernels::cpu::GemmConfig{.mc = 96, ...}".
std::string gemm_config_literal(const GemmConfig& config);

}  // namespace optune::kernels::cpu
