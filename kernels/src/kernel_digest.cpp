#include "optune/kernels/kernel_digest.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace optune::kernels {
namespace {

// FNV-1a, 64 bits: an identity of the kernel's text and data, not a defence against forgery (a
// user who wants old records to count for a changed kernel may as well keep the old file).
class Digest {
 public:
  void add(std::string_view text) {
    for (unsigned char c : text) hash_ = (hash_ ^ c) * 0x100000001b3ULL;
    hash_ = (hash_ ^ 0xff) * 0x100000001b3ULL;  // a separator: "ab" + "c" differs from "a" + "bc"
  }
  void add_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return;  // the loader has named a missing file already; a vanished one counts as empty
    std::string chunk(1 << 16, '\0');
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0)
      add(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
  }
  void add(const std::optional<Expression>& expression) { add(expression ? expression->text() : "-"); }
  void add(const std::vector<Expression>& expressions) {
    add(std::to_string(expressions.size()));
    for (const auto& expression : expressions) add(expression.text());
  }
  std::string hex(int digits) const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
    return std::string(text, static_cast<std::size_t>(digits));
  }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::string kernel_digest(const KernelSpec& spec) {
  Digest digest;
  digest.add(spec.backend);
  digest.add(spec.entry);
  digest.add_file(spec.source);
  for (const auto& option : spec.build_options) digest.add(option);
  for (const auto& arg : spec.args) {
    digest.add(arg.name);
    digest.add(arg.is_buffer() ? "buffer" : "scalar");
    digest.add(data_type_name(arg.dtype));
    digest.add(arg.count);
    digest.add(arg.value);
    digest.add(arg.init ? buffer_init_name(*arg.init) : "-");
    digest.add(arg.is_output ? "output" : "input");
    if (!arg.data.empty()) digest.add_file(arg.data);
  }
  if (spec.launch) {
    digest.add(spec.launch->global);
    digest.add(spec.launch->local);
    // Only where given (grid/block launches), so the digests of other files stay as they were.
    if (spec.launch->shared_memory) digest.add(spec.launch->shared_memory);
  }
  const KernelCheck& check = spec.check;
  digest.add(std::to_string(static_cast<int>(check.kind)));
  digest.add(check.reference);
  if (check.kind == KernelCheck::Kind::kReference && check.reference_source != spec.source)
    digest.add_file(check.reference_source);
  if (check.reference_launch) {
    digest.add(check.reference_launch->global);
    digest.add(check.reference_launch->local);
    if (check.reference_launch->shared_memory) digest.add(check.reference_launch->shared_memory);
  }
  for (const auto& expected : check.expected) digest.add_file(expected);
  digest.add(std::to_string(check.rtol) + " " + std::to_string(check.atol));
  return digest.hex(8);
}

std::string kernel_template_name(const KernelSpec& spec) {
  return kernel_template_prefix(spec.name, spec.backend) + "#" + kernel_digest(spec);
}

std::string kernel_template_prefix(std::string_view name, std::string_view backend) {
  return "kernel." + std::string(name) + "." + std::string(backend);
}

bool is_kernel_template_of(std::string_view template_name, std::string_view name, std::string_view backend) {
  const std::string prefix = kernel_template_prefix(name, backend);
  return template_name == prefix || (template_name.starts_with(prefix) && template_name.size() > prefix.size() &&
                                     template_name[prefix.size()] == '#');
}

}  // namespace optune::kernels
