#include "optune/kernels/kernel_file.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include <toml++/toml.h>

#include "optune/kernels/one_line.hpp"

namespace optune::kernels {
namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A template instance as a compiler names it by text (NVRTC's name expressions): an identifier,
// '<', arguments made of identifiers, numbers, '::', '*', '&', commas, spaces and nested <...>,
// and the '>' that closes the first '<' last. Anything else (parentheses, quotes, operators)
// would reach the compiler as code, so it is refused. Returns the problem, or "" when well-formed.
std::string template_entry_problem(const std::string& entry) {
  const auto open = entry.find('<');
  if (!is_identifier(entry.substr(0, open))) return "its name before '<' is not an identifier";
  int depth = 0;
  for (std::size_t i = open; i < entry.size(); ++i) {
    const char c = entry[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_.,*& ").find(c) != std::string_view::npos) continue;
    if (c == ':') {
      if (i + 1 >= entry.size() || entry[i + 1] != ':') return "a ':' that is not part of '::'";
      ++i;
    } else if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (--depth < 0) return "a '>' closes no '<'";
      if (depth == 0 && i + 1 != entry.size()) return "text after the '>' that closes its arguments";
    } else {
      return std::string("'") + c + "', which a template argument of identifiers, numbers, ::, *, & and spaces cannot hold";
    }
  }
  if (depth != 0) return "a '<' that no '>' closes";
  if (entry.find_first_not_of(' ', open + 1) == entry.size() - 1) return "no template arguments between '<' and '>'";
  return "";
}

// Extents and knobs reach the kernel's source as macros (-DNAME=value): a keyword of C++ (every
// backend's kernel language is C or C++ based) or of the backend's own language (its traits: OpenCL
// C's address spaces) as a macro breaks every build of the kernel, so the file is refused instead.
// Names that only some kernels use (read_only, half, float4) stay allowed: Kernel Tuner's kernels
// name their knobs so (read_only in its convolution).
bool is_source_keyword(const std::string& name, const KernelFileTraits& traits) {
  static const std::set<std::string> cpp = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
      "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return cpp.count(name) > 0 || traits.reserves(name);
}

// A string knob value goes into a build command line as -DNAME=value: one token, no quoting.
bool is_define_token(const std::string& text) {
  if (text.empty() || text.size() > 64) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_.+-*/()").find(c) != std::string_view::npos;
  });
}

std::string describe_node_type(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a decimal number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "a list";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

// A table's entries in the order the file writes them: toml++ keeps tables sorted by key, but
// extents make the workload key in file order, and knob order is the search's.
std::vector<std::pair<std::string, const toml::node*>> entries_in_file_order(const toml::table& table) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  for (const auto& [key, node] : table) entries.emplace_back(std::string(key.str()), &node);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const toml::source_position& x = a.second->source().begin;
    const toml::source_position& y = b.second->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  return entries;
}

// Parses one kernel file; each member reads one part of it. Fields are named in messages by their
// path in the file ("args[1].dtype", "knobs.TILE", "constraints.rules[0]").
class KernelFileParser {
 public:
  KernelFileParser(const toml::table& root, const std::filesystem::path& path, const KernelFileBackends& backends)
      : root_(root), backends_(backends) {
    spec_.file = path;
  }

  KernelSpec parse() {
    reject_unknown_keys(root_, "", {"name", "backend", "source", "entry", "description", "build_options", "flops",
                                    "bytes", "args", "extents", "knobs", "constraints", "launch", "check"});
    parse_identity();
    parse_extents();
    parse_knobs();
    names_ = spec_.expression_names();
    parse_args();
    spec_.flops = optional_problem_expression(root_, "flops", "flops");
    spec_.bytes = optional_problem_expression(root_, "bytes", "bytes");
    parse_constraints();
    parse_launch();
    parse_check();
    return std::move(spec_);
  }

 private:
  [[noreturn]] void fail(const toml::node* where, const std::string& field, const std::string& problem) const {
    std::string message = spec_.file.string();
    if (where && where->source().begin.line > 0) message += ":" + std::to_string(where->source().begin.line);
    message += ": " + (field.empty() ? problem : field + ": " + problem);
    throw std::invalid_argument(one_line(message));
  }

  void reject_unknown_keys(const toml::table& table, const std::string& prefix, const std::set<std::string>& known) const {
    for (const auto& [key, node] : table) {
      const std::string name(key.str());
      if (!known.count(name)) fail(&node, prefix + name, "unknown key");
    }
  }

  const toml::node& required(const toml::table& table, const char* key, const std::string& field) const {
    const toml::node* node = table.get(key);
    if (!node) fail(&table, field, "missing");
    return *node;
  }

  std::string string_of(const toml::node& node, const std::string& field) const {
    const auto* text = node.as_string();
    if (!text) fail(&node, field, "must be a string, not " + describe_node_type(node));
    return text->get();
  }

  std::string required_string(const toml::table& table, const char* key, const std::string& field) const {
    return string_of(required(table, key, field), field);
  }

  const toml::array& array_of(const toml::node& node, const std::string& field) const {
    const auto* array = node.as_array();
    if (!array) fail(&node, field, "must be a list, not " + describe_node_type(node));
    return *array;
  }

  const toml::table& table_of(const toml::node& node, const std::string& field) const {
    const auto* table = node.as_table();
    if (!table) fail(&node, field, "must be a table, not " + describe_node_type(node));
    return *table;
  }

  std::filesystem::path existing_file(const toml::node& node, const std::string& field) const {
    const std::filesystem::path given = string_of(node, field);
    if (given.empty()) fail(&node, field, "empty path");
    std::filesystem::path resolved = given.is_absolute() ? given : spec_.file.parent_path() / given;
    resolved = std::filesystem::absolute(resolved).lexically_normal();
    std::error_code error;
    if (!std::filesystem::is_regular_file(resolved, error))
      fail(&node, field, "no file " + resolved.string() + " (paths are relative to the kernel file)");
    return resolved;
  }

  void parse_identity() {
    spec_.name = required_string(root_, "name", "name");
    if (!is_kernel_name(spec_.name))
      fail(root_.get("name"), "name", "'" + spec_.name + "' must be letters, digits, '_' or '-', starting with a letter");
    spec_.backend = required_string(root_, "backend", "backend");
    spec_.traits = backends_.find(spec_.backend);
    if (!spec_.traits)
      fail(root_.get("backend"), "backend", "'" + spec_.backend + "' is not a backend of kernel files (" + backends_.names() + ")");
    spec_.source = existing_file(required(root_, "source", "source"), "source");
    spec_.entry = required_string(root_, "entry", "entry");
    check_entry(spec_.entry, root_.get("entry"), "entry");
    if (const toml::node* description = root_.get("description")) spec_.description = string_of(*description, "description");
    if (const toml::node* options = root_.get("build_options")) parse_build_options(*options);
  }

  // An entry (or a reference) as the backend names kernels: an identifier, or with
  // template_entries also a template instance, "matmul<float, TILE>".
  void check_entry(const std::string& entry, const toml::node* where, const std::string& field) const {
    if (is_identifier(entry)) return;
    if (!spec_.traits->template_entries || entry.find('<') == std::string::npos)
      fail(where, field, "'" + entry + "' is not an identifier" +
                             (spec_.traits->template_entries ? " or a template instance name<args>" : ""));
    if (const std::string problem = template_entry_problem(entry); !problem.empty())
      fail(where, field, "'" + entry + "' is not a template instance name<args>: " + problem);
  }

  void parse_build_options(const toml::node& node) {
    const toml::array& options = array_of(node, "build_options");
    for (std::size_t i = 0; i < options.size(); ++i) {
      const std::string field = "build_options[" + std::to_string(i) + "]";
      const std::string option = string_of(options[i], field);
      if (option.empty() || option.find_first_of(" \t\n\r") != std::string::npos)
        fail(&options[i], field, "'" + option + "' must be one token without whitespace");
      spec_.build_options.push_back(option);
    }
  }

  // A name of the shared namespace of extents, knobs and device limits.
  void check_new_name(const std::string& name, const toml::node* where, const std::string& field) {
    if (!is_expression_name(name))
      fail(where, field, "'" + name + "' must be an identifier that is not a function's name (min, max, div, ...)");
    if (is_source_keyword(name, *spec_.traits))
      fail(where, field, "'" + name + "' is a keyword of the kernel's language; the kernel gets it as a macro (-D" +
                             name + "=...), which would break its build");
    if (spec_.traits->has_limit(name))
      fail(where, field, "'" + name + "' is the name of a device limit");
    if (!declared_names_.insert(name).second) fail(where, field, "'" + name + "' is declared twice (extents and knobs share names)");
  }

  void parse_extents() {
    const toml::table& extents = table_of(required(root_, "extents", "extents"), "extents");
    if (extents.empty()) fail(&extents, "extents", "no extents; a kernel needs a problem size");
    for (const auto& [name, node_pointer] : entries_in_file_order(extents)) {
      const toml::node& node = *node_pointer;
      const std::string field = "extents." + name;
      check_new_name(name, &node, field);
      if (std::isdigit(static_cast<unsigned char>(name.back())))
        fail(&node, field, "an extent's name must not end in a digit (the workload key writes " + name + "4096)");
      const auto* value = node.as_integer();
      if (!value || value->get() < 1 || value->get() > kMaxKernelExtent)
        fail(&node, field, "must be an integer from 1 to " + std::to_string(kMaxKernelExtent));
      spec_.extents.push_back({name, value->get()});
    }
  }

  void parse_knobs() {
    const toml::table& knobs = table_of(required(root_, "knobs", "knobs"), "knobs");
    if (knobs.empty()) fail(&knobs, "knobs", "no knobs; declare at least one tunable parameter");
    for (const auto& [name, node_pointer] : entries_in_file_order(knobs)) {
      const toml::node& node = *node_pointer;
      const std::string field = "knobs." + name;
      check_new_name(name, &node, field);
      spec_.knobs.push_back(parse_knob(name, array_of(node, field), field));
    }
    std::uint64_t configs = 1;  // the space's size, as search_space::ConfigSpace::size() counts it
    for (const KernelKnob& knob : spec_.knobs)
      if (__builtin_mul_overflow(configs, knob.size(), &configs))
        fail(&knobs, "knobs", "the knobs' values make more than 2^64 configs, more than a search space can hold");
  }

  KernelKnob parse_knob(const std::string& name, const toml::array& values, const std::string& field) const {
    if (values.empty()) fail(&values, field, "no values");
    if (values.size() > kMaxKnobValues)
      fail(&values, field, std::to_string(values.size()) + " values; a knob may have at most " +
                               std::to_string(kMaxKnobValues));
    KernelKnob knob{name, {}, {}};
    for (const toml::node& value : values) {
      if (const auto* text = value.as_string()) {
        if (!is_define_token(text->get()))
          fail(&value, field, "'" + text->get() + "' must be letters, digits and _ . + - * / ( ), at most 64");
        knob.strings.push_back(text->get());
      } else if (const auto* integer = value.as_integer()) {
        if (std::fabs(static_cast<double>(integer->get())) > kLargestExactInteger) fail(&value, field, "integer beyond 2^53");
        knob.numbers.push_back(static_cast<double>(integer->get()));
      } else if (const auto* decimal = value.as_floating_point()) {
        if (!std::isfinite(decimal->get())) fail(&value, field, "values must be finite");
        knob.numbers.push_back(decimal->get());
      } else {
        fail(&value, field, "values must be numbers or strings, not " + describe_node_type(value) +
                                (value.is_boolean() ? " (write 0 and 1)" : ""));
      }
    }
    if (!knob.numbers.empty() && !knob.strings.empty()) fail(&values, field, "mixes numbers and strings");
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < knob.size(); ++i)
      if (!seen.insert(knob.value_text(i)).second) fail(&values, field, "value " + knob.value_text(i) + " is listed twice");
    return knob;
  }

  // Expressions may be written as strings, or as integers for constants ("count = 1024").
  Expression expression(const toml::node& node, const std::string& field, bool knobs_allowed) const {
    std::string text;
    if (const auto* integer = node.as_integer()) text = std::to_string(integer->get());
    else text = string_of(node, field);
    std::optional<Expression> parsed;
    try {
      parsed.emplace(text, names_);
    } catch (const std::invalid_argument& error) {
      fail(&node, field, error.what());
    }
    for (const KernelKnob& knob : spec_.knobs) {
      if (!parsed->uses(knob.name)) continue;
      if (!knobs_allowed)
        fail(&node, field, "\"" + text + "\" names knob '" + knob.name + "'; it may use extents and device limits only");
      if (!knob.is_numeric())
        fail(&node, field, "\"" + text + "\" names knob '" + knob.name + "', whose values are strings");
    }
    return *parsed;
  }

  // flops, bytes, counts, scalar values: fixed for a problem, whatever the config.
  std::optional<Expression> optional_problem_expression(const toml::table& table, const char* key,
                                                        const std::string& field) const {
    const toml::node* node = table.get(key);
    if (!node) return std::nullopt;
    return expression(*node, field, false);
  }

  void parse_args() {
    const toml::array& args = array_of(required(root_, "args", "args"), "args");
    if (args.empty()) fail(&args, "args", "no arguments");
    std::set<std::string> names;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string field = "args[" + std::to_string(i) + "]";
      KernelArg arg = parse_arg(table_of(args[i], field), field);
      if (!names.insert(arg.name).second) fail(&args[i], field + ".name", "'" + arg.name + "' is used twice");
      spec_.args.push_back(std::move(arg));
    }
    const bool has_output = std::any_of(spec_.args.begin(), spec_.args.end(), [](const KernelArg& arg) { return arg.is_output; });
    if (!has_output) fail(&args, "args", "no output buffer (mark one with output = true)");
  }

  KernelArg parse_arg(const toml::table& table, const std::string& field) const {
    reject_unknown_keys(table, field + ".", {"name", "kind", "dtype", "count", "value", "init", "data", "output"});
    KernelArg arg;
    arg.name = required_string(table, "name", field + ".name");
    if (!is_identifier(arg.name)) fail(table.get("name"), field + ".name", "'" + arg.name + "' is not an identifier");
    const std::string kind = required_string(table, "kind", field + ".kind");
    if (kind != "buffer" && kind != "scalar") fail(table.get("kind"), field + ".kind", "'" + kind + "' is not buffer or scalar");
    arg.kind = kind == "buffer" ? KernelArg::Kind::kBuffer : KernelArg::Kind::kScalar;
    try {
      arg.dtype = parse_data_type(required_string(table, "dtype", field + ".dtype"));
    } catch (const std::invalid_argument& error) {
      fail(table.get("dtype"), field + ".dtype", error.what());
    }
    if (arg.is_buffer()) parse_buffer(table, field, arg);
    else parse_scalar(table, field, arg);
    return arg;
  }

  void parse_buffer(const toml::table& table, const std::string& field, KernelArg& arg) const {
    if (table.contains("value")) fail(table.get("value"), field + ".value", "a buffer has a count, not a value");
    arg.count = expression(required(table, "count", field + ".count"), field + ".count", false);
    if (const toml::node* output = table.get("output")) {
      const auto* flag = output->as_boolean();
      if (!flag) fail(output, field + ".output", "must be true or false");
      arg.is_output = flag->get();
    }
    if (const toml::node* data = table.get("data")) {
      if (table.contains("init")) fail(data, field + ".data", "give either init or data");
      arg.data = existing_file(*data, field + ".data");
    } else if (const toml::node* init = table.get("init")) {
      arg.init = parse_init(*init, field + ".init");
    } else if (!arg.is_output) {
      arg.init = BufferInit::kRandom;
    }
  }

  void parse_scalar(const toml::table& table, const std::string& field, KernelArg& arg) const {
    for (const char* key : {"count", "init", "data", "output"})
      if (table.contains(key)) fail(table.get(key), field + "." + key, "a scalar has a value only");
    arg.value = expression(required(table, "value", field + ".value"), field + ".value", false);
  }

  BufferInit parse_init(const toml::node& node, const std::string& field) const {
    const std::string name = string_of(node, field);
    try {
      return parse_buffer_init(name);
    } catch (const std::invalid_argument&) {
      fail(&node, field, "'" + name + "' is not random, zeros, ones or iota");
    }
  }

  void parse_constraints() {
    const toml::node* node = root_.get("constraints");
    if (!node) return;
    const toml::table& constraints = table_of(*node, "constraints");
    reject_unknown_keys(constraints, "constraints.", {"rules"});
    const toml::array& rules = array_of(required(constraints, "rules", "constraints.rules"), "constraints.rules");
    for (std::size_t i = 0; i < rules.size(); ++i)
      spec_.rules.push_back(expression(rules[i], "constraints.rules[" + std::to_string(i) + "]", true));
  }

  std::vector<Expression> dims(const toml::array& list, const std::string& field, bool knobs_allowed) const {
    if (list.empty() || list.size() > 3) fail(&list, field, "needs 1 to 3 dimensions, not " + std::to_string(list.size()));
    std::vector<Expression> sizes;
    for (std::size_t i = 0; i < list.size(); ++i)
      sizes.push_back(expression(list[i], field + "[" + std::to_string(i) + "]", knobs_allowed));
    return sizes;
  }

  void parse_launch() {
    const toml::node* node = root_.get("launch");
    const LaunchModel model = spec_.traits->launch;
    if (model == LaunchModel::kCall) {
      if (node) fail(node, "launch", "a " + spec_.backend + " kernel has no launch (its entry is called once)");
      return;
    }
    if (!node)
      fail(&root_, "launch", model == LaunchModel::kNDRange
                                 ? "missing; an " + spec_.backend + " kernel needs global and local sizes"
                                 : "missing; a " + spec_.backend + " kernel needs a grid (blocks) and a block (threads)");
    const toml::table& table = table_of(*node, "launch");
    reject_unknown_keys(table, "launch.", {"global", "local", "grid", "block", "shared_memory"});
    reject_other_launch_model(table, "launch", "kernel");
    spec_.launch = model == LaunchModel::kNDRange ? parse_ndrange(table) : parse_grid_block(table);
  }

  // The other launch model's keys, refused by name: a file moved between an OpenCL and a
  // grid/block backend is their likely cause, and "unknown key" would not say so.
  void reject_other_launch_model(const toml::table& table, const std::string& section, const std::string& what) const {
    const bool grid_block = spec_.traits->launch == LaunchModel::kGridBlock;
    const std::vector<const char*> others =
        grid_block ? std::vector<const char*>{"global", "local"} : std::vector<const char*>{"grid", "block", "shared_memory"};
    for (const char* key : others) {
      if (!table.contains(key)) continue;
      fail(table.get(key), section + "." + key,
           grid_block ? "a " + spec_.backend + " " + what + " launches a grid of blocks: give grid and block (Kernel Tuner's terms), not global and local"
                      : "belongs to grid/block backends; an " + spec_.backend + " " + what + " launches an NDRange: give global and local");
    }
  }

  KernelLaunch parse_ndrange(const toml::table& table) const {
    KernelLaunch launch;
    launch.global = dims(array_of(required(table, "global", "launch.global"), "launch.global"), "launch.global", true);
    const toml::array& local = array_of(required(table, "local", "launch.local"), "launch.local");
    launch.local = dims(local, "launch.local", true);
    if (launch.local.size() != launch.global.size())
      fail(&local, "launch.local", "has " + std::to_string(launch.local.size()) + " dimensions, global " +
                                       std::to_string(launch.global.size()));
    return launch;
  }

  KernelLaunch parse_grid_block(const toml::table& table) const {
    KernelLaunch launch;
    launch.global = dims(array_of(required(table, "grid", "launch.grid"), "launch.grid"), "launch.grid", true);
    if (const toml::node* block = table.get("block")) {
      launch.local = dims(array_of(*block, "launch.block"), "launch.block", true);
      if (launch.local.size() != launch.global.size())
        fail(block, "launch.block", "has " + std::to_string(launch.local.size()) + " dimensions, grid " +
                                        std::to_string(launch.global.size()));
    } else {
      launch.local = default_block(table, launch.global.size());
    }
    if (const toml::node* shared = table.get("shared_memory"))
      launch.shared_memory = expression(*shared, "launch.shared_memory", true);
    return launch;
  }

  // Without `block`, the block is the knobs Kernel Tuner's block_size_names default to:
  // block_size_x, _y and _z, each the dimension its letter names, 1 where the knob is absent.
  std::vector<Expression> default_block(const toml::table& table, std::size_t dimensions) const {
    static constexpr std::array<const char*, 3> kNames = {"block_size_x", "block_size_y", "block_size_z"};
    const auto knob_named = [&](const std::string& name) -> const KernelKnob* {
      const auto found = std::find_if(spec_.knobs.begin(), spec_.knobs.end(), [&](const KernelKnob& k) { return k.name == name; });
      return found == spec_.knobs.end() ? nullptr : &*found;
    };
    if (!knob_named(kNames[0]))
      fail(&table, "launch.block", "missing, and there is no knob block_size_x to default it to (Kernel Tuner's block_size_names)");
    std::vector<Expression> block;
    for (std::size_t d = 0; d < kNames.size(); ++d) {
      const KernelKnob* knob = knob_named(kNames[d]);
      if (d >= dimensions) {
        if (knob)
          fail(&table, "launch.block", std::string("missing, and knob ") + kNames[d] + " makes the block " + std::to_string(d + 1) +
                                           "-dimensional, but launch.grid has " + std::to_string(dimensions) +
                                           "; give the grid as many dimensions (\"1\" where unused)");
        continue;
      }
      if (knob && !knob->is_numeric())
        fail(&table, "launch.block", std::string("missing, and knob ") + kNames[d] + ", its default, has strings for values");
      block.emplace_back(knob ? kNames[d] : "1", names_);
    }
    return block;
  }

  void parse_check() {
    const toml::node* node = root_.get("check");
    KernelCheck& check = spec_.check;
    set_default_tolerances(check);
    if (!node) return;
    const toml::table& table = table_of(*node, "check");
    reject_unknown_keys(table, "check.", {"reference", "reference_source", "global", "local", "grid", "block",
                                          "shared_memory", "expected", "rtol", "atol"});
    if (table.contains("reference") == table.contains("expected"))
      fail(&table, "check", "give either reference or expected");
    if (table.contains("reference")) parse_reference(table);
    else parse_expected(table);
    for (const char* key : {"rtol", "atol"}) {
      const toml::node* tolerance = table.get(key);
      if (!tolerance) continue;
      const std::optional<double> value = tolerance->value<double>();
      if (!value || !std::isfinite(*value) || *value < 0 || tolerance->is_boolean())
        fail(tolerance, std::string("check.") + key, "must be a number of at least 0");
      (std::string_view(key) == "rtol" ? check.rtol : check.atol) = *value;
    }
  }

  void set_default_tolerances(KernelCheck& check) const {
    const auto output = std::find_if(spec_.args.begin(), spec_.args.end(), [](const KernelArg& arg) { return arg.is_output; });
    if (!is_floating(output->dtype)) return;
    const bool is_half = output->dtype == DataType::kF16;
    check.rtol = is_half ? 1e-2 : 1e-5;
    check.atol = is_half ? 1e-3 : 1e-6;
  }

  void parse_reference(const toml::table& table) {
    KernelCheck& check = spec_.check;
    check.kind = KernelCheck::Kind::kReference;
    check.reference = required_string(table, "reference", "check.reference");
    check_entry(check.reference, table.get("reference"), "check.reference");
    check.reference_source = spec_.source;
    if (const toml::node* source = table.get("reference_source")) check.reference_source = existing_file(*source, "check.reference_source");
    if (spec_.traits->launch == LaunchModel::kCall) {
      for (const char* key : {"global", "local", "grid", "block", "shared_memory"})
        if (table.contains(key)) fail(table.get(key), std::string("check.") + key, "a " + spec_.backend + " reference has no launch");
      return;
    }
    reject_other_launch_model(table, "check", "reference");
    if (spec_.traits->launch == LaunchModel::kNDRange) parse_reference_ndrange(table);
    else parse_reference_grid_block(table);
  }

  void parse_reference_ndrange(const toml::table& table) {
    const toml::node& global = required(table, "global", "check.global");
    KernelLaunch launch;
    launch.global = dims(array_of(global, "check.global"), "check.global", false);
    if (const toml::node* local = table.get("local")) {
      launch.local = dims(array_of(*local, "check.local"), "check.local", false);
      if (launch.local.size() != launch.global.size()) fail(local, "check.local", "needs as many dimensions as check.global");
    }
    spec_.check.reference_launch = std::move(launch);
  }

  // The reference's launch is the same for every config, so it names no knobs, and its block has
  // no default from them.
  void parse_reference_grid_block(const toml::table& table) {
    KernelLaunch launch;
    launch.global = dims(array_of(required(table, "grid", "check.grid"), "check.grid"), "check.grid", false);
    const toml::node& block = required(table, "block", "check.block");
    launch.local = dims(array_of(block, "check.block"), "check.block", false);
    if (launch.local.size() != launch.global.size()) fail(&block, "check.block", "needs as many dimensions as check.grid");
    if (const toml::node* shared = table.get("shared_memory"))
      launch.shared_memory = expression(*shared, "check.shared_memory", false);
    spec_.check.reference_launch = std::move(launch);
  }

  void parse_expected(const toml::table& table) {
    KernelCheck& check = spec_.check;
    check.kind = KernelCheck::Kind::kExpected;
    for (const char* key : {"reference_source", "global", "local", "grid", "block", "shared_memory"})
      if (table.contains(key)) fail(table.get(key), std::string("check.") + key, "belongs to a reference, not to expected");
    const toml::node& expected = *table.get("expected");
    if (expected.is_string()) {
      check.expected.push_back(existing_file(expected, "check.expected"));
    } else {
      const toml::array& files = array_of(expected, "check.expected");
      for (std::size_t i = 0; i < files.size(); ++i)
        check.expected.push_back(existing_file(files[i], "check.expected[" + std::to_string(i) + "]"));
    }
    const auto outputs = std::count_if(spec_.args.begin(), spec_.args.end(), [](const KernelArg& arg) { return arg.is_output; });
    if (static_cast<std::size_t>(outputs) != check.expected.size())
      fail(&expected, "check.expected", std::to_string(check.expected.size()) + " files for " + std::to_string(outputs) + " output buffers");
  }

  const toml::table& root_;
  const KernelFileBackends& backends_;
  KernelSpec spec_;
  std::set<std::string> declared_names_;
  std::vector<std::string> names_;  // what expressions may name: spec_.expression_names()
};

}  // namespace

std::string KernelKnob::value_text(std::size_t option) const {
  if (!is_numeric()) return strings.at(option);
  const double value = numbers.at(option);
  if (value == std::floor(value) && std::fabs(value) <= kLargestExactInteger)
    return std::to_string(static_cast<std::int64_t>(value));
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;  // shortest exact form
  return std::string(text.data(), end);
}

std::vector<std::string> KernelSpec::expression_names() const {
  std::vector<std::string> names;
  for (const Extent& extent : extents) names.push_back(extent.name);
  for (const KernelKnob& knob : knobs) names.push_back(knob.name);
  if (traits)
    for (const DeviceLimit& limit : traits->device_limits) names.emplace_back(limit.name);
  return names;
}

KernelSpec parse_kernel_file(std::string_view text, const std::filesystem::path& path, const KernelFileBackends& backends) {
  toml::table root;
  try {
    root = toml::parse(text, path.string());
  } catch (const toml::parse_error& error) {
    throw std::invalid_argument(one_line(path.string() + ":" + std::to_string(error.source().begin.line) + ": " +
                                         std::string(error.description())));
  }
  return KernelFileParser(root, path, backends).parse();
}

KernelSpec load_kernel_file(const std::filesystem::path& path, const KernelFileBackends& backends) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path.string() + ": cannot read the kernel file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_kernel_file(text.str(), path, backends);
}

}  // namespace optune::kernels
