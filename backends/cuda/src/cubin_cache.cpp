#include "cubin_cache.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <unistd.h>

namespace optune::backends::cuda {
namespace fs = std::filesystem;
namespace {

std::string sha256_hex(const std::string& text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned size = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_atomically(const fs::path& path, const std::string& bytes) {
  const fs::path temporary = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) return false;
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) fs::remove(temporary, error);
  return !error;
}

}  // namespace

CubinCache::CubinCache(std::string dir) : dir_(std::move(dir)) {}

std::optional<CachedModule> CubinCache::find(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  const fs::path stem = fs::path(dir_) / sha256_hex(key);
  // The key first: the other two are written before it, so a key that matches has its files.
  const auto stored_key = read_file(stem.string() + ".key");
  if (!stored_key || *stored_key != key) return std::nullopt;
  const auto module = read_file(stem.string() + ".module");
  const auto description = read_file(stem.string() + ".json");
  if (!module || module->empty() || !description) return std::nullopt;
  try {
    const auto json = nlohmann::json::parse(*description);
    CachedModule cached;
    cached.module.assign(module->begin(), module->end());
    cached.is_ptx = json.at("is_ptx").get<bool>();
    cached.lowered_names = json.at("lowered_names").get<std::map<std::string, std::string>>();
    cached.compile_seconds = json.at("compile_seconds").get<double>();
    return cached;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // damaged: compiled again and stored over
  }
}

void CubinCache::store(const std::string& key, const CachedModule& cached) const {
  if (dir_.empty()) return;
  std::error_code error;
  fs::create_directories(dir_, error);
  const fs::path stem = fs::path(dir_) / sha256_hex(key);
  const nlohmann::json description = {{"is_ptx", cached.is_ptx},
                                      {"lowered_names", cached.lowered_names},
                                      {"compile_seconds", cached.compile_seconds}};
  if (write_atomically(stem.string() + ".module", std::string(cached.module.begin(), cached.module.end())) &&
      write_atomically(stem.string() + ".json", description.dump()))
    write_atomically(stem.string() + ".key", key);
}

}  // namespace optune::backends::cuda
