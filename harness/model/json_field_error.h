// What a user reads when a file's JSON has the right syntax but a field of the wrong type or a field
// missing: the file, the field (a JSON pointer) and what was expected, never the library's exception
// text ("[json.exception.type_error.302] type must be string, but is number", which names neither).
#pragma once

#include <exception>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace ncclfi::harness {

// Reads a document the way a loader does; throws (a library exception) on what it cannot take.
using JsonReader = std::function<void(const nlohmann::json&)>;

// The library's message in words: "expected a string, got a number" (a type error), "missing" (a key
// that is not there), else its text without the "[json.exception....]" tag.
std::string json_error_text(const std::exception& error);

// The JSON pointer of the field `read` fails on in `doc`: the deepest member or element whose removal
// lets `read` through (so the field is found whatever reader code threw). For a missing key, its name
// is appended. "" when the whole document is the problem. Costs a bounded number of re-reads
// (kMaxLocateProbes per level).
std::string locate_json_problem(const nlohmann::json& doc, const JsonReader& read,
                                const std::exception& error);
inline constexpr size_t kMaxLocateProbes = 256;

// "FILE: /pointer: expected a string, got a number" for `error`, which `read` threw on `doc`.
std::string json_field_error(const std::string& file, const nlohmann::json& doc, const JsonReader& read,
                             const std::exception& error);

}  // namespace ncclfi::harness
