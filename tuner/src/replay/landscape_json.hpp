// The JSON of a landscape file (optune/tuner/replay/landscape_file.hpp): the file's text, gunzipped
// when it is gzip, parsed with each object's keys in the file's order. Private to the tuner library.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace optune::tuner {

// A landscape file that cannot be read: one line naming the file and what is wrong.
struct BadLandscapeFile : std::invalid_argument {
  BadLandscapeFile(const std::filesystem::path& path, const std::string& why)
      : std::invalid_argument("landscape " + path.string() + ": " + why) {}
};

// Throws BadLandscapeFile when the file cannot be opened, its gzip stream is broken or ends early,
// it is larger than 1 GiB (gunzipped), is not JSON or nests arrays and objects deeper than 64.
nlohmann::ordered_json read_landscape_json(const std::filesystem::path& path);

// The file's own text as a message quotes it: at most `most` bytes (a value may be megabytes
// long), cut where a UTF-8 character starts and marked "...".
std::string clipped(std::string text, std::size_t most = 80);

}  // namespace optune::tuner
