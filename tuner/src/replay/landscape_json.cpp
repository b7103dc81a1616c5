// Reading a landscape file's JSON: bounded in size and depth, as anything handed to --landscape
// may be hostile, and linear in the number of keys, as a cache holds one key per configuration.
#include "replay/landscape_json.hpp"

#include <zlib.h>

#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace optune::tuner {
namespace {

using Json = nlohmann::ordered_json;

// The largest published landscapes are tens of MB; a file past this is no landscape (a gzip bomb,
// /dev/zero) and would otherwise be read until memory runs out.
constexpr std::size_t kMaxBytes = std::size_t{1} << 30;
// A landscape nests 4 deep (file, cache, entry, times); values nested far deeper overflow the stack
// in nlohmann's recursive copies, comparisons and dumps.
constexpr std::size_t kMaxDepth = 64;
// nlohmann's messages quote the token they stopped at, which may be megabytes long.
constexpr std::size_t kMaxMessage = 200;

// The whole file, gunzipped when it is gzip (zlib's gzread passes other files through as they are).
std::string read_text(const std::filesystem::path& path) {
  std::unique_ptr<gzFile_s, decltype(&gzclose)> file(gzopen(path.c_str(), "rb"), &gzclose);
  if (file == nullptr) throw BadLandscapeFile(path, "cannot open the file");
  std::string text;
  char buffer[1 << 16];
  int got = 0;
  while ((got = gzread(file.get(), buffer, sizeof buffer)) > 0) {
    if (text.size() + static_cast<std::size_t>(got) > kMaxBytes)
      throw BadLandscapeFile(path, "larger than 1 GiB of text, which no landscape is");
    text.append(buffer, static_cast<std::size_t>(got));
  }
  int error = Z_OK;
  const std::string message = gzerror(file.get(), &error);
  if (got < 0) throw BadLandscapeFile(path, "unreadable (" + message + ")");
  // gzread hands over what a gzip stream that ends early holds, and tells of the end only here.
  if (error == Z_BUF_ERROR) throw BadLandscapeFile(path, "truncated: its gzip stream ends early");
  return text;
}

// nlohmann's parser building an ordered_json: its own parse inserts each key by a linear search of
// the object's keys (10 s for a cache of 100,000 entries); here a hash finds them. A repeated key
// keeps its first place and its last value, as nlohmann's parse and Python's json do.
class OrderedJsonBuilder : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return add(nullptr); }
  bool boolean(bool value) override { return add(value); }
  bool number_integer(number_integer_t value) override { return add(value); }
  bool number_unsigned(number_unsigned_t value) override { return add(value); }
  bool number_float(number_float_t value, const string_t&) override { return add(value); }
  bool string(string_t& value) override { return add(std::move(value)); }
  bool binary(binary_t& value) override { return add(Json::binary(std::move(value))); }
  bool start_object(std::size_t) override { return open(Json::object()); }
  bool key(string_t& key) override {
    open_.back().key = std::move(key);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    why_ = "not JSON (" + clipped(error.what(), kMaxMessage) + ")";
    return false;
  }

  Json root;
  const std::string& why() const { return why_; }  // why the parse stopped

 private:
  struct Open {
    Json value;
    std::string key;                                      // an object's key of the value that comes next
    std::unordered_map<std::string, std::size_t> places;  // an object's keys
  };

  bool open(Json container) {
    if (open_.size() >= kMaxDepth) {
      why_ = fmt::format("arrays and objects nested deeper than {}", kMaxDepth);
      return false;
    }
    open_.push_back({std::move(container), {}, {}});
    return true;
  }

  bool close() {
    Json done = std::move(open_.back().value);
    open_.pop_back();
    return add(std::move(done));
  }

  bool add(Json value) {
    if (open_.empty()) {
      root = std::move(value);
      return true;
    }
    Open& top = open_.back();
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
      return true;
    }
    auto& members = top.value.get_ref<Json::object_t&>();
    const auto [place, added] = top.places.emplace(top.key, members.size());
    if (added) members.Container::emplace_back(std::move(top.key), std::move(value));
    else (members.begin() + static_cast<std::ptrdiff_t>(place->second))->second = std::move(value);
    return true;
  }

  std::vector<Open> open_;
  std::string why_;
};

}  // namespace

std::string clipped(std::string text, std::size_t most) {
  if (text.size() <= most) return text;
  while (most > 0 && (static_cast<unsigned char>(text[most]) & 0xC0) == 0x80) --most;  // not inside a UTF-8 character
  text.resize(most);
  return text + "...";
}

nlohmann::ordered_json read_landscape_json(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  OrderedJsonBuilder builder;
  if (!Json::sax_parse(text, &builder)) throw BadLandscapeFile(path, builder.why());
  return std::move(builder.root);
}

}  // namespace optune::tuner
