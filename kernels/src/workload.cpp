// Workload: op names, shape arithmetic, the canonical key and its inverse, and the `--shape`
// parser. Both parsers end in validate_workload(), so a workload that exists is a sane one.
#include "optune/kernels/workload.hpp"

#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "trim.hpp"

namespace optune::kernels {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

[[noreturn]] void fail(std::string_view context, const std::string& what) {
  throw std::invalid_argument(std::string(context) + ": " + what);
}

// The whole text as a decimal integer; nullopt for anything else ("5x", "", "1.5").
// Overflow reads as a value past any limit.
std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || end != text.data() + text.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    return text.front() == '-' ? INT64_MIN : INT64_MAX;
  }
  if (error != std::errc()) return std::nullopt;
  return value;
}

// The named extents of an op's `--shape`, in key order, with the value of an optional one left out.
// Depthwise "groups" defaults to 0, read as "C".
struct ExtentSpec {
  const char* name;
  bool required;
  std::int64_t fallback;
};

const std::vector<ExtentSpec>& extent_specs(Op op) {
  static const std::vector<ExtentSpec> gemm = {{"M", true, 0}, {"N", true, 0}, {"K", true, 0}};
  static const std::vector<ExtentSpec> conv = {
      {"N", false, 1},   {"C", true, 0},   {"H", true, 0},          {"W", true, 0},
      {"K", true, 0},    {"R", true, 0},   {"S", true, 0},          {"stride", false, 1},
      {"pad", false, 0}, {"dilation", false, 1}, {"groups", false, 1}};
  static const std::vector<ExtentSpec> depthwise = {
      {"N", false, 1}, {"C", true, 0},      {"H", true, 0},   {"W", true, 0},
      {"R", true, 0},  {"S", true, 0},      {"stride", false, 1}, {"pad", false, 0},
      {"dilation", false, 1}, {"groups", false, 0}};
  switch (op) {
    case Op::kGemm: return gemm;
    case Op::kConv2d: return conv;
    case Op::kDepthwiseConv2d: return depthwise;
  }
  throw std::logic_error("unknown op");
}

std::string expected_names(Op op) {
  std::string names;
  for (const auto& spec : extent_specs(op)) {
    if (!names.empty()) names += ", ";
    names += spec.name;
  }
  return names;
}

// Every extent is >= 1 except pad (>= 0), and none is beyond kMaxExtent.
void check_extent(std::string_view name, std::optional<std::int64_t> value, std::string_view text,
                  std::string_view context) {
  const bool may_be_zero = name == "pad";
  if (!value || *value < (may_be_zero ? 0 : 1)) {
    fail(context, "extent " + std::string(name) + " must be " +
                      (may_be_zero ? "a non-negative" : "a positive") + " integer, got '" +
                      std::string(text) + "'");
  }
  if (*value > kMaxExtent) {
    fail(context, std::string(name) + "=" + std::string(text) + " exceeds the largest extent " +
                      std::to_string(kMaxExtent));
  }
}

void check_extent(std::string_view name, std::int64_t value, std::string_view context) {
  check_extent(name, value, std::to_string(value), context);
}

std::int64_t parse_extent(std::string_view name, std::string_view text, std::string_view context) {
  const auto value = parse_integer(text);
  check_extent(name, value, text, context);
  return *value;
}

Workload workload_from_extents(Op op, const std::map<std::string, std::int64_t, std::less<>>& given,
                               std::string_view context) {
  std::map<std::string, std::int64_t, std::less<>> e;
  for (const auto& spec : extent_specs(op)) {
    if (const auto it = given.find(spec.name); it != given.end()) {
      e[spec.name] = it->second;
    } else if (spec.required) {
      fail(context, std::string("missing extent ") + spec.name);
    } else {
      e[spec.name] = spec.fallback;
    }
  }
  Workload workload;
  workload.op = op;
  if (op == Op::kGemm) {
    workload.shape = GemmShape{e["M"], e["N"], e["K"]};
    return workload;
  }
  Conv2dShape s;
  s.N = e["N"], s.C = e["C"], s.H = e["H"], s.W = e["W"], s.R = e["R"], s.S = e["S"];
  s.stride = e["stride"], s.pad = e["pad"], s.dilation = e["dilation"];
  if (op == Op::kConv2d) {
    s.K = e["K"], s.groups = e["groups"];
  } else {
    // Depthwise: groups may be spelled out, but only as C.
    if (e["groups"] != 0 && e["groups"] != s.C) {
      fail(context, "depthwise_conv2d has groups = C, got C=" + std::to_string(s.C) +
                        ", groups=" + std::to_string(e["groups"]));
    }
    s.K = s.C, s.groups = s.C;
  }
  workload.shape = s;
  return workload;
}

std::size_t bytes_per_element(const std::string& dtype) {
  if (dtype == "f64" || dtype == "i64") return 8;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16") return 2;
  if (dtype == "i8" || dtype == "u8") return 1;
  return 4;
}

// Elements of all operands (inputs and output), in double so that absurd shapes cannot overflow.
double tensor_elements(const Workload& w) {
  if (w.op == Op::kGemm) {
    const auto& g = w.gemm();
    return double(g.M) * g.K + double(g.K) * g.N + double(g.M) * g.N;
  }
  const auto& c = w.conv();
  return double(c.N) * c.C * c.H * c.W + double(c.K) * (c.C / c.groups) * c.R * c.S +
         double(c.N) * c.K * c.out_h() * c.out_w();
}

[[noreturn]] void bad_key(std::string_view key, const std::string& why) {
  fail("workload key", why + " in '" + std::string(key) + "'");
}

std::string format_gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(1ull << 30));
  return text;
}

void validate_conv(Op op, const Conv2dShape& s, std::string_view context) {
  const std::pair<const char*, std::int64_t> extents[] = {
      {"N", s.N}, {"C", s.C}, {"H", s.H}, {"W", s.W}, {"K", s.K}, {"R", s.R}, {"S", s.S},
      {"stride", s.stride}, {"pad", s.pad}, {"dilation", s.dilation}, {"groups", s.groups}};
  for (const auto& [name, value] : extents) check_extent(name, value, context);
  if (op == Op::kDepthwiseConv2d && (s.K != s.C || s.groups != s.C)) {
    fail(context, "depthwise_conv2d needs K = C = groups, got C=" + std::to_string(s.C) +
                      ", K=" + std::to_string(s.K) + ", groups=" + std::to_string(s.groups));
  }
  const auto geometry = [&](char side, std::int64_t in, char filter, std::int64_t taps) {
    std::string text = std::string(1, side) + "=" + std::to_string(in) + ", " + filter + "=" +
                       std::to_string(taps) + ", pad=" + std::to_string(s.pad);
    if (s.dilation != 1) text += ", dilation=" + std::to_string(s.dilation);
    return "(" + text + ")";
  };
  if (s.out_h() < 1) fail(context, "output height is not positive " + geometry('H', s.H, 'R', s.R));
  if (s.out_w() < 1) fail(context, "output width is not positive " + geometry('W', s.W, 'S', s.S));
  for (const auto& [name, value] : {std::pair{"C", s.C}, std::pair{"K", s.K}}) {
    if (value % s.groups != 0) {
      fail(context, std::string(name) + "=" + std::to_string(value) +
                        " is not divisible by groups=" + std::to_string(s.groups));
    }
  }
}

void validate_layout(const Workload& workload, std::string_view context) {
  if (workload.nchw_input) {
    if (workload.op != Op::kConv2d || workload.layout_block == kLayoutNchw) {
      fail(context, "only conv2d may read an NCHW input into a blocked layout (nchw-nchw8c), not " +
                        std::string(op_name(workload.op)) + " on " + layout_name(workload.layout_block));
    }
  }
  if (workload.layout_block == kLayoutNchw) return;
  if (workload.op == Op::kGemm) fail(context, "gemm has no layout, got " + layout_name(workload.layout_block));
  const auto& s = workload.conv();
  if (workload.op == Op::kConv2d && s.groups != 1) {
    fail(context, "layout " + layout_name(workload.layout_block) + " takes conv2d with groups=1, got groups=" +
                      std::to_string(s.groups));
  }
}

void validate(const Workload& workload, std::string_view context) {
  if (workload.dtype.empty()) fail(context, "empty dtype");
  try {
    layout_name(workload.layout_block);
  } catch (const std::invalid_argument& error) {
    fail(context, error.what());
  }
  validate_layout(workload, context);
  if (workload.op == Op::kGemm) {
    if (!std::holds_alternative<GemmShape>(workload.shape)) fail(context, "gemm needs a GemmShape");
    const auto& g = workload.gemm();
    check_extent("M", g.M, context);
    check_extent("N", g.N, context);
    check_extent("K", g.K, context);
  } else {
    if (!std::holds_alternative<Conv2dShape>(workload.shape)) {
      fail(context, std::string(op_name(workload.op)) + " needs a Conv2dShape");
    }
    validate_conv(workload.op, workload.conv(), context);
  }
  const double bytes = tensor_elements(workload) * double(bytes_per_element(workload.dtype));
  if (bytes > kMaxTensorBytes) {
    fail(context, "tensors would need " + format_gib(bytes) + ", more than the " +
                      std::to_string(static_cast<long long>(kMaxTensorBytes / double(1ull << 30))) +
                      " GiB limit");
  }
}

}  // namespace

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kGemm: return "gemm";
    case Op::kConv2d: return "conv2d";
    case Op::kDepthwiseConv2d: return "depthwise_conv2d";
  }
  throw std::logic_error("unknown op");
}

std::string layout_name(int layout_block) {
  if (layout_block == kLayoutNchw) return "nchw";
  if (layout_block == 4 || layout_block == 8 || layout_block == 16) return "nchw" + std::to_string(layout_block) + "c";
  throw std::invalid_argument("layout: no layout has channel blocks of " + std::to_string(layout_block));
}

int parse_layout(std::string_view name) {
  for (int block : {kLayoutNchw, 4, 8, 16}) {
    if (trim(name) == layout_name(block)) return block;
  }
  throw std::invalid_argument("layout: unknown layout '" + std::string(name) +
                              "' (expected nchw, nchw4c, nchw8c or nchw16c)");
}

std::string layouts_name(Layouts layouts) {
  const std::string output = layout_name(layouts.block);
  return layouts.nchw_input && layouts.block != kLayoutNchw ? "nchw-" + output : output;
}

Layouts parse_layouts(std::string_view name) {
  const std::string_view text = trim(name);
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) {
    try {
      return {parse_layout(text), false};
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("layout: unknown layout '" + std::string(text) +
                                  "' (expected nchw, nchw4c, nchw8c or nchw16c, or nchw-nchw8c for a layer "
                                  "that reads NCHW and writes nchw8c)");
    }
  }
  if (trim(text.substr(0, dash)) != "nchw") {
    throw std::invalid_argument("layout: '" + std::string(text) +
                                "' reads a blocked input; only an NCHW input may change layout (nchw-nchw8c)");
  }
  const int block = parse_layout(text.substr(dash + 1));
  if (block == kLayoutNchw) throw std::invalid_argument("layout: write 'nchw', not 'nchw-nchw'");
  return {block, true};
}

Op parse_op(std::string_view name) {
  for (Op op : {Op::kGemm, Op::kConv2d, Op::kDepthwiseConv2d}) {
    if (trim(name) == op_name(op)) return op;
  }
  throw std::invalid_argument("op: unknown op '" + std::string(name) +
                              "' (expected gemm, conv2d or depthwise_conv2d)");
}

// A negative numerator means even the first window does not fit; C++ division would round it
// toward zero and report one output row.
std::int64_t Conv2dShape::out_h() const {
  const std::int64_t span = H + 2 * pad - dilation * (R - 1) - 1;
  return span < 0 || stride < 1 ? 0 : span / stride + 1;
}

std::int64_t Conv2dShape::out_w() const {
  const std::int64_t span = W + 2 * pad - dilation * (S - 1) - 1;
  return span < 0 || stride < 1 ? 0 : span / stride + 1;
}

std::string Workload::key() const {
  std::string key(op_name(op));
  auto field = [&key](const char* prefix, std::int64_t value) {
    key += '.';
    key += prefix;
    key += std::to_string(value);
  };
  if (op == Op::kGemm) {
    const auto& g = gemm();
    key += '.';
    key += dtype;
    field("M", g.M), field("N", g.N), field("K", g.K);
    return key;
  }
  const auto& c = conv();
  key += '.';
  key += layouts_name(layouts());
  key += '.';
  key += dtype;
  field("N", c.N), field("C", c.C), field("H", c.H), field("W", c.W);
  if (op == Op::kConv2d) field("K", c.K);
  field("R", c.R), field("S", c.S), field("st", c.stride), field("pad", c.pad);
  field("dil", c.dilation);
  if (op == Op::kConv2d) field("g", c.groups);
  return key;
}

double Workload::flops() const {
  if (op == Op::kGemm) {
    const auto& g = gemm();
    return 2.0 * double(g.M) * double(g.N) * double(g.K);
  }
  const auto& c = conv();
  const double outputs = double(c.N) * double(c.K) * double(c.out_h()) * double(c.out_w());
  const double taps_per_output =
      op == Op::kDepthwiseConv2d ? double(c.R) * double(c.S)
                                 : double(c.C / c.groups) * double(c.R) * double(c.S);
  return 2.0 * outputs * taps_per_output;
}

void validate_workload(const Workload& workload) { validate(workload, "shape"); }

Workload parse_workload(Op op, std::string_view shape_text) {
  constexpr std::string_view kContext = "shape";
  const std::string_view text = trim(shape_text);
  if (text.empty()) {
    fail(kContext, "empty shape (expected named extents " + expected_names(op) +
                       (op == Op::kGemm ? ", or M,N,K)" : ")"));
  }
  const auto items = split(text, ',');
  const bool named = text.find('=') != std::string_view::npos;
  std::map<std::string, std::int64_t, std::less<>> extents;
  std::optional<Layouts> layouts;
  if (!named) {
    if (op != Op::kGemm) {
      fail(kContext, std::string(op_name(op)) + " takes named extents (" + expected_names(op) +
                         "), got '" + std::string(text) + "'");
    }
    if (items.size() != 3) {
      fail(kContext, "gemm takes 3 extents M,N,K, got " + std::to_string(items.size()) +
                         " in '" + std::string(text) + "'");
    }
    const char* names[] = {"M", "N", "K"};
    for (std::size_t i = 0; i < 3; ++i) {
      extents[names[i]] = parse_extent(names[i], trim(items[i]), kContext);
    }
    Workload workload = workload_from_extents(op, extents, kContext);
    validate(workload, kContext);
    return workload;
  }
  for (const auto raw : items) {
    const auto item = trim(raw);
    const auto equals = item.find('=');
    if (item.empty()) fail(kContext, "empty extent in '" + std::string(text) + "'");
    if (equals == std::string_view::npos) {
      fail(kContext, "extent '" + std::string(item) + "' has no name (write NAME=VALUE, e.g. " +
                         std::string(extent_specs(op)[0].name) + "=" + "512)");
    }
    const auto name = trim(item.substr(0, equals));
    const auto value = trim(item.substr(equals + 1));
    if (name == "layout" && op != Op::kGemm) {
      if (layouts) fail(kContext, "layout given twice");
      try {
        layouts = parse_layouts(value);
      } catch (const std::invalid_argument& error) {
        fail(kContext, std::string(error.what()).substr(std::string_view("layout: ").size()));
      }
      continue;
    }
    bool known = false;
    for (const auto& spec : extent_specs(op)) known = known || name == spec.name;
    if (!known) {
      fail(kContext, "unknown extent '" + std::string(name) + "' for " + std::string(op_name(op)) +
                         " (expected " + expected_names(op) + ")");
    }
    if (extents.count(name) != 0) fail(kContext, "extent " + std::string(name) + " given twice");
    extents[std::string(name)] = parse_extent(name, value, kContext);
  }
  Workload workload = workload_from_extents(op, extents, kContext);
  workload.layout_block = layouts.value_or(Layouts{}).block;
  workload.nchw_input = layouts.value_or(Layouts{}).nchw_input;
  validate(workload, kContext);
  return workload;
}

Workload parse_workload_key(std::string_view key) {
  constexpr std::string_view kContext = "workload key";
  const auto parts = split(trim(key), '.');
  const auto bad = [&](const std::string& why) { bad_key(key, why); };
  Op op = Op::kGemm;
  try {
    op = parse_op(parts[0]);
  } catch (const std::invalid_argument&) {
    bad("unknown op '" + std::string(parts[0]) + "'");
  }
  // Field prefixes after the op (and layout) and dtype, in key order, and their extent names.
  static const std::vector<std::pair<const char*, const char*>> kGemmFields = {
      {"M", "M"}, {"N", "N"}, {"K", "K"}};
  static const std::vector<std::pair<const char*, const char*>> kConvFields = {
      {"N", "N"}, {"C", "C"}, {"H", "H"}, {"W", "W"}, {"K", "K"}, {"R", "R"}, {"S", "S"},
      {"st", "stride"}, {"pad", "pad"}, {"dil", "dilation"}, {"g", "groups"}};
  static const std::vector<std::pair<const char*, const char*>> kDepthwiseFields = {
      {"N", "N"}, {"C", "C"}, {"H", "H"}, {"W", "W"}, {"R", "R"}, {"S", "S"},
      {"st", "stride"}, {"pad", "pad"}, {"dil", "dilation"}};
  const auto& fields = op == Op::kGemm ? kGemmFields
                       : op == Op::kConv2d ? kConvFields
                                           : kDepthwiseFields;
  std::size_t next = 1;
  Layouts layouts;
  if (op != Op::kGemm) {
    try {
      if (parts.size() < 2) throw std::invalid_argument("no layout");
      layouts = parse_layouts(parts[1]);
    } catch (const std::invalid_argument&) {
      bad("expected a layout (nchw, nchw4c, nchw8c, nchw16c or nchw-nchw8c) after the op");
    }
    next = 2;
  }
  if (parts.size() != next + 1 + fields.size()) {
    bad("expected " + std::to_string(next + 1 + fields.size()) + " dot-separated fields, got " +
        std::to_string(parts.size()));
  }
  const std::string dtype(parts[next++]);
  if (dtype.empty() || dtype.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") !=
                           std::string::npos) {
    bad("bad dtype '" + dtype + "'");
  }
  std::map<std::string, std::int64_t, std::less<>> extents;
  for (const auto& [prefix, name] : fields) {
    const auto part = parts[next++];
    const std::string_view p(prefix);
    const auto value = part.substr(0, p.size()) == p ? parse_integer(part.substr(p.size()))
                                                     : std::nullopt;
    if (!value) bad("expected " + std::string(p) + "<integer>, got '" + std::string(part) + "'");
    extents[name] = value.value_or(0);
  }
  if (op == Op::kDepthwiseConv2d) extents["groups"] = extents["C"];
  Workload workload = workload_from_extents(op, extents, kContext);
  workload.dtype = dtype;
  workload.layout_block = layouts.block;
  workload.nchw_input = layouts.nchw_input;
  validate(workload, kContext);
  return workload;
}

}  // namespace optune::kernels
