// core/atomic_file.h - files are written whole or not at all: to PATH.tmp first, then renamed.
#pragma once

#include <functional>
#include <string>

namespace nbody {

// Calls write(tmp_path) to fill PATH.tmp (it returns false on failure, leaving errno set), then
// renames it to PATH. On any failure the temporary file is removed and an exception names PATH
// and `what`: InputError for what the user can fix (no such directory, no permission),
// RuntimeFailure for the machine (disk full, I/O error).
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<bool(const std::string& tmp_path)>& write);

// Writes `text` to PATH the same way (JSON, CSV, reports).
void write_text_file(const std::string& path, const std::string& text);

}  // namespace nbody
