// tests/test_outputs.cpp - outputs written whole or not at all, refused targets, paths checked before the work.
// Links only nbody::core: the two helpers it needs from test_support.h (which pulls in the physics
// headers) are written here, fresh_dir() named as test::fresh_test_dir names its folders.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.h"
#include "core/errors.h"
#include "core/output_path.h"
#include "rejection.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;

// A new empty folder for the running test, named after it (as test::fresh_test_dir); removed at the
// end, its permissions restored first so that a test that made it unwritable cannot leave it behind.
class FreshDir {
 public:
  FreshDir()
      : path_(fs::temp_directory_path() / ("nbody-outputs-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~FreshDir() {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(path_, ec);
  }
  FreshDir(const FreshDir&) = delete;
  FreshDir& operator=(const FreshDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

  // Every name in the folder (hidden ones too), sorted: what a save left behind.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (auto const& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

using Names = std::vector<std::string>;

using test::rejected_with;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

bool write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.flush();
  return bool(f);
}

// Root ignores permission bits: a read-only file or an unwritable folder stops only other users.
bool running_as_root() { return ::geteuid() == 0; }

// --- Whole or nothing ---------------------------------------------------------------------------

TEST(OutputFile, ReplacesWholeAndLeavesNoTemporary) {
  FreshDir dir;
  std::string const path = dir.file("out.bin");
  spit(path, "old");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  std::string seen_tmp;
  write_file_atomically(path, "snapshot", [&](const std::string& tmp) {
    seen_tmp = tmp;
    return write_bytes(tmp, "new contents");
  });
  EXPECT_EQ(slurp(path), "new contents");
  EXPECT_EQ(dir.entries(), Names{"out.bin"});
  // The temporary file was a hidden, unique name beside the target, not the shared "out.bin.tmp".
  EXPECT_EQ(fs::path(seen_tmp).parent_path(), dir.path());
  EXPECT_EQ(fs::path(seen_tmp).filename().string().rfind(".out.bin.", 0), 0u) << seen_tmp;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u) << "the replaced file's permissions are kept";
}

TEST(OutputFile, FailingWriterLeavesOldFileWhole) {
  FreshDir dir;
  std::string const path = dir.file("out.bin");
  spit(path, "old snapshot");
  std::string const half(1 << 20, 'x');
  // Disk full half-way: a failure of the machine.
  EXPECT_THROW(write_file_atomically(path, "snapshot",
                                     [&](const std::string& tmp) {
                                       write_bytes(tmp, half);
                                       errno = ENOSPC;
                                       return false;
                                     }),
               RuntimeFailure);
  EXPECT_EQ(slurp(path), "old snapshot");
  EXPECT_EQ(dir.entries(), Names{"out.bin"});
  // A writer that fails without saying why.
  EXPECT_TRUE(rejected_with([&] { write_file_atomically(path, "snapshot", [&](const std::string& tmp) {
                                    write_bytes(tmp, half);
                                    errno = 0;
                                    return false;
                                  }); },
                            "cannot write snapshot: failed"));
  EXPECT_EQ(slurp(path), "old snapshot");
  EXPECT_EQ(dir.entries(), Names{"out.bin"});
  // A writer that throws: the exception passes through, the temporary file does not stay.
  EXPECT_THROW(write_file_atomically(path, "snapshot",
                                     [&](const std::string& tmp) -> bool {
                                       write_bytes(tmp, half);
                                       throw std::runtime_error("encoder crashed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(slurp(path), "old snapshot");
  EXPECT_EQ(dir.entries(), Names{"out.bin"});
}

TEST(OutputFile, TargetThatTurnsBadDuringTheRunIsRefused) {
  FreshDir dir;
  std::string const path = dir.file("out.bin");
  std::string const elsewhere = dir.file("elsewhere.bin");
  spit(elsewhere, "keep");
  // Checked at the start (nothing there yet), a symbolic link by the time the data is written.
  EXPECT_TRUE(rejected_with([&] { write_file_atomically(path, "snapshot", [&](const std::string& tmp) {
                                    fs::create_symlink(elsewhere, path);
                                    return write_bytes(tmp, "new");
                                  }); },
                            "is a symbolic link"));
  EXPECT_TRUE(fs::is_symlink(path));
  EXPECT_EQ(slurp(elsewhere), "keep");
  EXPECT_EQ(dir.entries(), (Names{"elsewhere.bin", "out.bin"}));
}

TEST(OutputFile, TemporaryFileSwappedByAnotherProgramIsNotMovedIntoPlace) {
  FreshDir dir;
  std::string const path = dir.file("out.bin");
  spit(path, "old");
  std::string seen_tmp;
  EXPECT_TRUE(rejected_with([&] { write_file_atomically(path, "snapshot", [&](const std::string& tmp) {
                                    seen_tmp = tmp;
                                    write_bytes(tmp, "ours");
                                    fs::remove(tmp);
                                    spit(tmp, "planted");  // another inode under the same name
                                    return true;
                                  }); },
                            "was replaced while it was written"));
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(slurp(seen_tmp), "planted") << "another program's file is not ours to remove";
}

// --- Refused targets: the check before the work, and the write itself ------------------------------

TEST(OutputPath, AcceptsANewFileAndAWritableFileAndCreatesNothing) {  // the control for the refusals
  FreshDir dir;
  EXPECT_NO_THROW(check_output_path(dir.file("new.bin"), "--save"));
  spit(dir.file("old.bin"), "old");
  EXPECT_NO_THROW(check_output_path(dir.file("old.bin"), "--save"));
  EXPECT_EQ(dir.entries(), Names{"old.bin"});
  EXPECT_EQ(output_path_problem(dir.file("new.bin")), "");
}

TEST(OutputPath, RefusesASymbolicLinkAndLeavesItsTargetAlone) {
  FreshDir dir;
  std::string const real = dir.file("real.bin");
  std::string const link = dir.file("link.bin");
  spit(real, "keep");
  fs::create_symlink(real, link);
  EXPECT_TRUE(rejected_with([&] { check_output_path(link, "--save"); }, "--save " + link + ": is a symbolic link"));
  EXPECT_TRUE(rejected_with([&] { write_text_file(link, "new"); }, "is a symbolic link"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(real), "keep");
  // A dangling link: writing through it would create a file wherever it points.
  std::string const dangling = dir.file("dangling.bin");
  fs::create_symlink(dir.file("nowhere.bin"), dangling);
  EXPECT_TRUE(rejected_with([&] { write_text_file(dangling, "new"); }, "is a symbolic link"));
  EXPECT_FALSE(fs::exists(dir.file("nowhere.bin")));
  EXPECT_EQ(dir.entries(), (Names{"dangling.bin", "link.bin", "real.bin"}));
}

TEST(OutputPath, RefusesADirectory) {
  FreshDir dir;
  std::string const sub = dir.file("frames");
  fs::create_directory(sub);
  EXPECT_TRUE(rejected_with([&] { check_output_path(sub, "--json"); }, "--json " + sub + ": is a directory"));
  EXPECT_TRUE(rejected_with([&] { write_text_file(sub, "{}"); }, "is a directory"));
  EXPECT_TRUE(rejected_with([&] { check_output_path(sub + "/", "--json"); }, "ends in '/'"));
  EXPECT_TRUE(fs::is_directory(sub));
  EXPECT_TRUE(fs::is_empty(sub));
  EXPECT_EQ(dir.entries(), Names{"frames"});
}

TEST(OutputPath, RefusesAFifoWithoutBlocking) {
  FreshDir dir;
  std::string const fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  // Opening a FIFO for writing blocks until a reader comes; the refusal must come before any open.
  auto refused = std::async(std::launch::async, [&] {
    return rejected_with([&] { check_output_path(fifo, "--csv"); }, "--csv " + fifo + ": is a FIFO") &&
           rejected_with([&] { write_text_file(fifo, "a,b\n"); }, "is a FIFO");
  });
  if (refused.wait_for(std::chrono::seconds(10)) == std::future_status::timeout) {
    int const reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // releases a blocked writer
    refused.wait();
    if (reader >= 0) ::close(reader);
    FAIL() << "writing to a FIFO blocked";
  }
  EXPECT_TRUE(refused.get());
  EXPECT_EQ(dir.entries(), Names{"pipe"});
}

// A file no one may write is kept from root too (a container's user), which access() lets write any file.
TEST(OutputPath, RefusesAReadOnlyFile) {
  FreshDir dir;
  std::string const path = dir.file("done.bin");
  spit(path, "keep");
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  EXPECT_TRUE(rejected_with([&] { check_output_path(path, "--save"); }, "--save " + path + ": is read-only"));
  EXPECT_TRUE(rejected_with([&] { write_text_file(path, "new"); }, "is read-only"));
  EXPECT_EQ(slurp(path), "keep");
  EXPECT_EQ(dir.entries(), Names{"done.bin"});
}

TEST(OutputPath, RefusesAMissingFolder) {
  FreshDir dir;
  std::string const folder = dir.file("nope");
  std::string const path = folder + "/out.bin";
  // The whole message, as the user sees it after "error: ".
  EXPECT_TRUE(rejected_with([&] { check_output_path(path, "--save"); },
                            "--save " + path + ": the folder " + folder + " does not exist"));
  // The write says what it was writing, as before ("cannot write snapshot").
  EXPECT_TRUE(rejected_with([&] { write_file_atomically(path, "snapshot", [](const std::string&) { return true; }); },
                            path + ": cannot write snapshot: the folder " + folder + " does not exist"));
  spit(dir.file("file.txt"), "x");
  EXPECT_TRUE(rejected_with([&] { check_output_path(dir.file("file.txt/out.bin"), "--save"); }, "is not a folder"));
  // The kernel's file systems, which root may "write" by the access check but which make no file: refused before the
  // run, not at its end.
  EXPECT_TRUE(rejected_with([&] { check_output_path("/proc/c.h5", "--checkpoint"); },
                            "--checkpoint /proc/c.h5: the folder /proc is on the kernel's proc file system, which "
                            "holds no files"));
  if (fs::is_directory("/sys")) {
    EXPECT_TRUE(rejected_with([&] { check_output_path("/sys/c.h5", "--checkpoint"); }, "sysfs file system"));
  }
  EXPECT_EQ(dir.entries(), Names{"file.txt"});
}

// A name the file system takes, but not the hidden temporary file the output is written through (".NAME.xxxxxx"):
// refused before the run, not found at its end with the output lost. The longest name allowed is written.
TEST(OutputPath, RefusesANameTooLongForItsTemporaryFile) {
  FreshDir dir;
  long const limit = ::pathconf(dir.file("").c_str(), _PC_NAME_MAX);
  ASSERT_GT(limit, 20);
  auto const temporary_length = [](const std::string& path, bool keep_extension) {
    return fs::path(temporary_name(path, keep_extension)).filename().string().size();
  };
  std::string const fits = dir.file(std::string(std::size_t(limit) - 11, 'a') + ".h5");  // ".NAME.xxxxxx": 8 more
  std::string const over = dir.file(std::string(std::size_t(limit) - 10, 'b') + ".h5");
  ASSERT_EQ(temporary_length(fits, false), std::size_t(limit));
  ASSERT_EQ(temporary_length(over, false), std::size_t(limit) + 1);
  EXPECT_EQ(output_path_problem(fits), "");
  write_text_file(fits, "whole");
  EXPECT_EQ(slurp(fits), "whole");
  // Its temporary file is one the file system refuses, though the name itself is one it takes.
  spit(over, "x");
  std::string const temporary = temporary_name(over);
  EXPECT_LT(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644), 0);
  EXPECT_EQ(errno, ENAMETOOLONG);
  EXPECT_TRUE(rejected_with([&] { check_output_path(over, "--checkpoint"); },
                            ": the name is too long: nbody writes through hidden temporary files beside it, whose "
                            "names are up to " + std::to_string(limit + 1) + " bytes, over the " +
                                std::to_string(limit) + " this file system allows; give a name at least 1 byte shorter"));
  // Files named after it leave it less: a diagnostics series' ".partial" 8 bytes more, the advice for the name given.
  EXPECT_TRUE(rejected_with([&] { check_output_path(fits, "--diagnostics", {}, 8); },
                            "whose names are up to " + std::to_string(limit + 8) + " bytes, over the " +
                                std::to_string(limit) + " this file system allows; give a name at least 8 bytes shorter"));
  // A name over the limit itself says so too, not only the system's "File name too long".
  std::string const itself = dir.file(std::string(std::size_t(limit) + 5, 'd'));
  EXPECT_TRUE(rejected_with([&] { check_output_path(itself, "--save"); }, "give a name at least 13 bytes shorter"));
  // A video's temporary file keeps the extension (ffmpeg goes by it): 4 more for ".mp4".
  std::string const video = dir.file(std::string(std::size_t(limit) - 14, 'c') + ".mp4");
  EXPECT_EQ(name_length_problem(video), "");
  EXPECT_NE(name_length_problem(video, true), "");
}

TEST(OutputPath, RefusesAnUnwritableFolder) {
  if (running_as_root()) GTEST_SKIP() << "running as root, which may write in any folder: its mode stops no one";
  FreshDir dir;
  std::string const folder = dir.file("locked");
  fs::create_directory(folder);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  std::string const path = folder + "/out.bin";
  EXPECT_TRUE(rejected_with([&] { check_output_path(path, "--save"); },
                            "--save " + path + ": the folder " + folder + " is not writable"));
  EXPECT_TRUE(rejected_with([&] { write_text_file(path, "new"); }, "is not writable"));
  EXPECT_TRUE(fs::is_empty(folder));
}

// --- Two options, one file --------------------------------------------------------------------------

TEST(OutputPath, RefusesTwoSpellingsOfOneFile) {
  FreshDir dir;
  std::string const plain = dir.file("r.bin");
  fs::create_directory(dir.file("sub"));
  fs::create_directory_symlink(dir.path(), dir.file("alias"));
  std::string const relative = fs::relative(plain).string();  // from the working folder, not absolute
  for (std::string const& other : {dir.file("./r.bin"), dir.file("sub/../r.bin"), dir.file("alias/r.bin"), relative}) {
    EXPECT_TRUE(rejected_with([&] { check_distinct_outputs({{"--save", plain}, {"--json", other}}); },
                              "--save and --json both name " + plain + "; give each output its own file"))
        << other;
  }
  // A bare name and ./name in the working folder, for a file that does not exist yet (weakly_canonical
  // alone leaves the bare name relative).
  std::string const bare = "nbody-output-test-" + std::to_string(::getpid()) + ".bin";
  ASSERT_FALSE(fs::exists(bare));
  EXPECT_TRUE(rejected_with([&] { check_distinct_outputs({{"--save", bare}, {"--json", "./" + bare}}); },
                            "--save and --json both name " + bare));
  // Two names of one existing file (a hard link).
  spit(plain, "x");
  fs::create_hard_link(plain, dir.file("hard.bin"));
  EXPECT_TRUE(rejected_with([&] { check_distinct_outputs({{"--csv", dir.file("hard.bin")}, {"--save", plain}}); },
                            "--csv and --save both name"));
}

TEST(OutputPath, AcceptsDistinctFiles) {  // the control: the same-file check does not refuse everything
  FreshDir dir;
  EXPECT_NO_THROW(check_distinct_outputs({{"--save", dir.file("r.bin")},
                                          {"--json", dir.file("r.json")},
                                          {"--csv", ""},  // not given
                                          {"--screenshot", ""},
                                          {"--frames-dir", dir.file("sub/r.bin")}}));
  EXPECT_EQ(dir.entries(), Names{});
}

// --- Concurrent saves to one path -------------------------------------------------------------------

constexpr std::size_t kSaveBytes = 3u << 20;  // "a few MB": large enough that two writers overlap
constexpr std::uint32_t kSavesPerWriter = 50;

// One save's content: "NBODYSAV", writer and save numbers, then bytes that only that save produces,
// so a file that mixes two saves, or stops short, is caught.
std::string save_content(std::uint32_t writer, std::uint32_t save) {
  std::string bytes(kSaveBytes, '\0');
  std::memcpy(&bytes[0], "NBODYSAV", 8);
  std::memcpy(&bytes[8], &writer, 4);
  std::memcpy(&bytes[12], &save, 4);
  std::uint64_t x = 0x9E3779B97F4A7C15ull * (std::uint64_t(writer) * 1000 + save + 1);
  for (std::size_t i = 16; i + 8 <= bytes.size(); i += 8) {
    x ^= x << 13;  // xorshift64 (Marsaglia 2003)
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(&bytes[i], &x, 8);
  }
  return bytes;
}

::testing::AssertionResult one_whole_save(const std::string& bytes) {
  if (bytes.size() != kSaveBytes) return ::testing::AssertionFailure() << bytes.size() << " bytes, not " << kSaveBytes;
  if (bytes.compare(0, 8, "NBODYSAV") != 0) return ::testing::AssertionFailure() << "no header";
  std::uint32_t writer = 0, save = 0;
  std::memcpy(&writer, &bytes[8], 4);
  std::memcpy(&save, &bytes[12], 4);
  if (bytes != save_content(writer, save)) {
    return ::testing::AssertionFailure() << "writer " << writer << "'s save " << save << " is not whole";
  }
  return ::testing::AssertionSuccess();
}

TEST(OutputConcurrency, CheckerRejectsMixedAndTruncatedFiles) {  // the negative control of the test below
  std::string const a = save_content(0, 7), b = save_content(1, 7);
  EXPECT_TRUE(one_whole_save(a));
  EXPECT_TRUE(one_whole_save(b));
  std::string const mixed = a.substr(0, kSaveBytes / 2) + b.substr(kSaveBytes / 2);  // what a shared FILE.tmp made
  EXPECT_FALSE(one_whole_save(mixed));
  EXPECT_FALSE(one_whole_save(a.substr(0, kSaveBytes - 1)));
  EXPECT_FALSE(one_whole_save(b + "x"));
}

TEST(OutputConcurrency, TwoWritersOnOnePathLeaveOneWholeSave) {
  FreshDir dir;
  std::string const path = dir.file("shared.bin");
  std::mutex names_mutex;
  std::set<std::string> tmp_names;
  std::vector<std::string> failures;
  std::atomic<int> writers_left{2};
  auto writer = [&](std::uint32_t id) {
    try {
      for (std::uint32_t k = 0; k < kSavesPerWriter; ++k) {
        std::string const content = save_content(id, k);
        write_file_atomically(path, "snapshot", [&](const std::string& tmp) {
          {
            std::lock_guard<std::mutex> lock(names_mutex);
            tmp_names.insert(tmp);
          }
          return write_bytes(tmp, content);
        });
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(names_mutex);
      failures.push_back("writer " + std::to_string(id) + ": " + e.what());
    }
    --writers_left;
  };
  // A reader meanwhile: every time it finds the file, it finds one whole save.
  int reads = 0, broken_reads = 0;
  std::string first_broken;
  std::thread reader([&] {
    while (writers_left > 0) {
      std::string const bytes = slurp(path);
      if (bytes.empty()) continue;  // before the first rename
      ++reads;
      if (auto whole = one_whole_save(bytes); !whole && broken_reads++ == 0) first_broken = whole.message();
    }
  });
  std::thread first(writer, 0u), second(writer, 1u);
  first.join();
  second.join();
  reader.join();

  EXPECT_EQ(failures, Names{});
  EXPECT_TRUE(one_whole_save(slurp(path)));
  EXPECT_EQ(dir.entries(), Names{"shared.bin"});
  EXPECT_EQ(tmp_names.size(), std::size_t(2 * kSavesPerWriter)) << "every save had a temporary file of its own";
  EXPECT_EQ(broken_reads, 0) << "of " << reads << " reads; first: " << first_broken;
  RecordProperty("reads_during_writes", reads);
}

// --- One writer a path -----------------------------------------------------------------------------

// What constructing a WriterLock on `path` threw ("" where it took the lock, which it then lets go).
std::string refusal_of(const std::string& path) {
  try {
    WriterLock const lock(path, "--checkpoint " + path);
    return lock.held() ? "" : "held no lock";
  } catch (const InputError& e) {
    return e.what();
  }
}

// A child process that calls `take` (a lock taken) and then waits to be killed: its pid once `take` returned true, or
// -1 (the child killed) where it returned false.
pid_t holding_child(const std::function<bool()>& take) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  std::fflush(nullptr);
  pid_t const child = ::fork();
  if (child == 0) {
    char const c = take() ? 'y' : 'n';
    static_cast<void>(::write(ready[1], &c, 1));
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  bool const took = child > 0 && ::read(ready[0], &c, 1) == 1 && c == 'y';
  ::close(ready[0]);
  if (child > 0 && !took) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  return took ? child : -1;
}

TEST(WriterLock, ASecondWriterIsRefusedUntilTheFirstLetsGo) {
  FreshDir dir;
  std::string const path = dir.file("c.h5"), lock_file = dir.file(".c.h5.lock");
  {
    WriterLock const first(path, "--checkpoint " + path);
    ASSERT_TRUE(first.held());
    EXPECT_TRUE(fs::exists(lock_file));
    // Another simulation of this process (a Python script's second run) is refused as another process would be.
    EXPECT_EQ(refusal_of(path), "--checkpoint " + path + ": is being written by another run now (another simulation "
                                "of this process, which holds " + lock_file + "); wait for it to end, or name another "
                                "file");
    EXPECT_EQ(refusal_of(dir.file("other.h5")), "") << "another path is another writer's";
    // Nor does another output of this process replace it (a Python script's other simulation saving there); its
    // checkpoint writes are the lock holder's own (the run's checkpoint, written through the run).
    std::string const held = "is being written by a run of this process now (the run a callback is called from, or "
                             "another simulation's, which holds " + lock_file + "); wait for it to end, or name another "
                             "file";
    EXPECT_EQ(output_path_problem(path), held);
    EXPECT_THROW(write_text_file(path, "{}\n"), InputError);
    EXPECT_FALSE(fs::exists(path));
    {
      // Another run's checkpoint write (its periodic series, say) is not this lock's holder's.
      WriterLock const other(dir.file("b.h5"), "--checkpoint b.h5");
      CheckpointWrite const others(&other), none(nullptr);
      EXPECT_EQ(output_path_problem(path), held);
    }
    {
      CheckpointWrite const own(&first);
      EXPECT_EQ(output_path_problem(path), "");
      write_text_file(path, "state\n");
    }
    EXPECT_EQ(another_writer_of(path), held);
  }
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_EQ(dir.entries(), Names{}) << "the lock's file goes with it";
  EXPECT_EQ(refusal_of(path), "");
}

TEST(WriterLock, ALetGoLeavesAnotherWritersFileAtTheName) {
  FreshDir dir;
  std::string const path = dir.file("c.h5"), lock_file = dir.file(".c.h5.lock");
  std::optional<WriterLock> first;
  first.emplace(path, "--checkpoint " + path);
  ASSERT_TRUE(first->held());
  ASSERT_EQ(::unlink(lock_file.c_str()), 0);  // removed from outside (a user cleaning the folder)
  WriterLock const second(path, "--checkpoint " + path);
  ASSERT_TRUE(second.held());
  first.reset();
  EXPECT_TRUE(fs::exists(lock_file)) << "the first writer's release removed the second's lock";
  EXPECT_NE(refusal_of(path).find("is being written by another run now"), std::string::npos);
}

TEST(WriterLock, NoLockIsSaidWhy) {
  FreshDir dir;
  std::string const path = dir.file("c.h5");
  ASSERT_EQ(::symlink("/nonexistent", dir.file(".c.h5.lock").c_str()), 0);
  WriterLock const none(path, "--checkpoint " + path);
  EXPECT_FALSE(none.held());
  EXPECT_EQ(none.why_not().rfind("cannot open it: ", 0), 0u) << none.why_not();
  EXPECT_EQ(none.lock_path(), dir.file(".c.h5.lock"));
}

// A file at the lock's name that no lock made (a user's notes, a report written there) is left as it is: the writer
// locks it as it is, where it used to empty the file, write its process id in it and remove it. A second writer is
// still refused.
TEST(WriterLock, AFileThatIsNoLockIsLeftAsItIs) {
  FreshDir dir;
  std::string const path = dir.file("c.h5"), lock_file = dir.file(".c.h5.lock");
  for (std::string const& text : {std::string("notes\n"), std::string("{\"bodies\": 64}\n"), std::string(400, '7')}) {
    spit(lock_file, text);
    {
      WriterLock const held(path, "--checkpoint " + path);
      EXPECT_TRUE(held.held());
      EXPECT_EQ(slurp(lock_file), text);
      EXPECT_NE(output_path_problem(path).find("is being written by a run of this process now"), std::string::npos);
    }
    EXPECT_EQ(slurp(lock_file), text);
  }
  // A lock a killed writer left (its "PID HOST" line), or an empty one, is still taken over.
  for (std::string const& text : {std::string("4242 node7\n"), std::string()}) {
    spit(lock_file, text);
    {
      WriterLock const taken(path, "--checkpoint " + path);
      EXPECT_TRUE(taken.held()) << text;
    }
    EXPECT_FALSE(fs::exists(lock_file));
  }
}

// No output takes the name of a lock: a writer of the file it is named after would take it over as its own.
TEST(OutputPath, RefusesALocksName) {
  FreshDir dir;
  EXPECT_EQ(output_path_problem(dir.file(".run.h5.lock")),
            "names like .run.h5.lock are the locks nbody's writers hold beside their files (run.h5's), made and "
            "removed by nbody; name another file");
  EXPECT_EQ(output_path_problem(dir.file("run.lock")), "");  // not hidden: no lock's name
  EXPECT_EQ(output_path_problem(dir.file(".lock")), "");
}

TEST(WriterLock, AnotherProcessIsNamedAndALockLeftByAKilledOneIsTakenOver) {
  FreshDir dir;
  std::string const path = dir.file("c.h5"), lock_file = dir.file(".c.h5.lock");
  // Holds the lock until killed outright, as a job the out-of-memory killer ends.
  pid_t const child = holding_child([&] { return (new WriterLock(path, "--checkpoint " + path))->held(); });
  ASSERT_GT(child, 0);
  std::string const refused = refusal_of(path);
  // Nor does any other output of this process replace it (another job's --save or --json naming that checkpoint).
  std::string const looked = output_path_problem(path);
  std::string wrote;
  try {
    write_text_file(dir.file("c.h5"), "{}\n", "--json");
  } catch (const InputError& e) {
    wrote = e.what();
  }
  bool const written = fs::exists(path);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string const held = "is being written by another run now (process " + std::to_string(child) + " on " + host +
                           ", which holds " + lock_file + "); wait for it to end, or name another file";
  EXPECT_EQ(refused, "--checkpoint " + path + ": " + held);
  EXPECT_EQ(looked, held);
  EXPECT_EQ(wrote, path + ": cannot write --json: " + held);
  EXPECT_FALSE(written);
  // The killed process left its file, which holds no lock: the next writer takes it, and removes it when done.
  EXPECT_EQ(dir.entries(), Names{".c.h5.lock"});
  EXPECT_EQ(output_path_problem(path), "");
  EXPECT_EQ(refusal_of(path), "");
  EXPECT_EQ(dir.entries(), Names{});
}

// A lock held for a moment (another writer's look, or a writer that finds the name changed and lets go) is waited out,
// not taken for a run at work: the writer and the look both go ahead once it is let go.
TEST(WriterLock, ALockHeldForAMomentIsWaitedOut) {
  FreshDir dir;
  std::string const path = dir.file("c.h5"), lock_file = dir.file(".c.h5.lock");
  for (bool look : {false, true}) {
    int const fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT, 0666);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);
    std::thread release([fd] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      ::close(fd);
    });
    std::string const refused = look ? another_writer_of(path) : refusal_of(path);
    release.join();
    EXPECT_EQ(refused, "") << (look ? "the look" : "the writer");
  }
}

// A holder that could not write its name (a file another user's killed run left, read-only to it) is not named as the
// process that file names where that process is gone: that one holds nothing.
TEST(WriterLock, AHolderIsNotNamedAfterAProcessThatIsGone) {
  FreshDir dir;
  std::string const path = dir.file("c.h5"), lock_file = dir.file(".c.h5.lock");
  std::fflush(nullptr);
  pid_t const gone = ::fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  spit(lock_file, std::to_string(gone) + " " + host + "\n");
  // Holds the lock without writing its name, until killed.
  pid_t const child = holding_child([&] {
    int const fd = ::open(lock_file.c_str(), O_RDONLY);
    return fd >= 0 && ::flock(fd, LOCK_EX) == 0;
  });
  ASSERT_GT(child, 0);
  std::string const refused = refusal_of(path);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(refused, "--checkpoint " + path + ": is being written by another run now (another process, which holds " +
                         lock_file + "); wait for it to end, or name another file");
}

// A file of a series is named after its step: any name of that form finds the series' lock, whichever HDF5 ending it
// has, however long its step; other names find none (a date in a name is a step only where a series is written).
TEST(WriterLock, AFileOfASeriesFindsTheSeriesLock) {
  EXPECT_EQ(series_lock_name_of("out/c_00000100.h5"), std::optional<std::string>("out/c_########.h5"));
  EXPECT_EQ(series_lock_name_of("out/s_00000100.hdf5"), std::optional<std::string>("out/s_########.h5"));
  EXPECT_EQ(series_lock_name_of("s_123456789.hdf5"), std::optional<std::string>("s_########.h5"));
  EXPECT_EQ(series_lock_name_of("run_00000000"), std::optional<std::string>("run_########"));
  EXPECT_EQ(series_lock_name_of("run.x_00000007.ckpt"), std::optional<std::string>("run.x_########.ckpt"));
  for (const char* other : {"c.h5", "c_1234567.h5", "c00000100.h5", "out/.c_00000100.h5.lock", "c_00000100.h5/x"})
    EXPECT_EQ(series_lock_name_of(other), std::nullopt) << other;
  // The series' own naming agrees (driver::series_lock_name is this of its first file).
  FreshDir dir;
  std::string const series = dir.file("c_########.h5");
  pid_t const child = holding_child([&] { return (new WriterLock(series, "--snapshots c.h5"))->held(); });
  ASSERT_GT(child, 0);
  std::string const looked = another_writer_of(dir.file("c_00000300.hdf5"));
  std::string const other = another_writer_of(dir.file("d_00000300.h5"));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_NE(looked.find("is being written by another run now (process " + std::to_string(child)), std::string::npos)
      << looked;
  EXPECT_NE(looked.find(dir.file(".c_########.h5.lock")), std::string::npos) << looked;
  EXPECT_EQ(other, "");
}

// A file another program holds open under an exclusive lock (HDF5's, h5py's mode 'a'; a run's diagnostics series'
// working file) is no output while it does: replacing it would cut that program off from the name its writes are
// meant for. A shared lock (a reader's) is no such hold.
TEST(WriterLock, AFileHeldOpenToBeWrittenIsNoOutput) {
  FreshDir dir;
  std::string const path = dir.file("c.h5");
  write_text_file(path, "x");
  for (int const kind : {LOCK_EX, LOCK_SH}) {
    pid_t const child = holding_child([&] {
      int const fd = ::open(path.c_str(), O_RDONLY);
      return fd >= 0 && ::flock(fd, kind) == 0;
    });
    ASSERT_GT(child, 0);
    std::string const looked = output_path_problem(path);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    if (kind == LOCK_EX)
      EXPECT_NE(looked.find("is held open to be written now"), std::string::npos) << looked;
    else
      EXPECT_EQ(looked, "");
  }
  EXPECT_EQ(output_path_problem(path), "") << "once let go";
}

}  // namespace
}  // namespace nbody
