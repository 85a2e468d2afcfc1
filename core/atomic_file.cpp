// core/atomic_file.cpp - temporary file plus rename.
#include "core/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/errors.h"

namespace nbody {

void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<bool(const std::string& tmp_path)>& write) {
  std::string const tmp = path + ".tmp";
  auto fail = [&](const std::string& doing) {
    int const err = errno;
    std::remove(tmp.c_str());
    std::string const message = path + ": " + doing + " " + what + ": " + (err ? std::strerror(err) : "failed");
    if (err == ENOSPC || err == EIO || err == EDQUOT) throw RuntimeFailure(message);
    throw InputError(message);
  };
  errno = 0;
  if (!write(tmp)) fail("cannot write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot move into place");
}

void write_text_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, "output", [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    f.flush();
    return bool(f);
  });
}

}  // namespace nbody
