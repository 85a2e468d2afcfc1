// core/ranks.cpp - one process as a run of one rank, and the world pointer.
#include "core/ranks.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <utility>
#include <cstdlib>
#include <new>

#include "core/console.h"
#include "core/errors.h"
#include "core/interrupt.h"

namespace nbody {
namespace {

class DoneGather final : public PendingGather {
 public:
  bool test() override { return true; }
};

class SoloRanks final : public Ranks {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  std::string host() const override {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    return name;
  }
  std::string describe() const override { return "one process"; }
  std::vector<std::string> all_gather(const std::string& mine) const override { return {mine}; }
  void all_gather_in_place(void*, std::size_t, const std::vector<std::size_t>&,
                           const std::vector<std::size_t>&) const override {}
  std::unique_ptr<PendingGather> start_all_gather(void*, std::size_t, const std::vector<std::size_t>&,
                                                  const std::vector<std::size_t>&) const override {
    return std::make_unique<DoneGather>();
  }
  int max(int value) const override { return value; }
  [[noreturn]] void abort(int exit_code) const override { std::_Exit(exit_code); }
};

const Ranks* g_world = nullptr;

}  // namespace

const Ranks& solo_ranks() {
  static const SoloRanks solo;
  return solo;
}

const Ranks& world() { return g_world ? *g_world : solo_ranks(); }

void set_world(const Ranks* ranks) { g_world = ranks; }

namespace {
std::mutex g_last_words_mutex;
std::function<void(const std::string&)> g_last_words;
// Held while the words are said: what they read (a run's locals) is not undone under them by the scope ending.
std::mutex g_saying;
}  // namespace

LastWords::LastWords(std::function<void(const std::string&)> say) {
  std::lock_guard<std::mutex> lock(g_last_words_mutex);
  previous_ = std::exchange(g_last_words, std::move(say));
}

LastWords::~LastWords() {
  std::lock_guard<std::mutex> saying(g_saying);
  std::lock_guard<std::mutex> lock(g_last_words_mutex);
  g_last_words = std::move(previous_);
}

void last_words(const std::string& why) {
  std::lock_guard<std::mutex> saying(g_saying);
  std::function<void(const std::string&)> say;
  {
    std::lock_guard<std::mutex> lock(g_last_words_mutex);
    say = std::exchange(g_last_words, nullptr);  // once, whichever thread gives up first
  }
  if (!say) return;
  try {
    say(why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", one_line(e.what()).c_str());
  }
}

namespace {
// A rank's interrupt as one number, ordered as agreed_interrupt takes the largest: the signal recorded first (SIGTERM
// over SIGINT), then the one that came. 0: none.
int interrupt_code() {
  int const recorded = interrupt_signal();
  return recorded == 0 ? 0 : recorded * 256 + (came_signal() & 255);
}
// The recorded signal of a code agreed on; its signal that came named on this rank too.
int adopt(int code) {
  if (code == 0) return 0;
  if (int const came = code % 256; came != 0) name_came_signal(came);
  return code / 256;
}
}  // namespace

int agreed_interrupt(const Ranks& ranks) {
  if (ranks.size() == 1) return interrupt_signal();
  return adopt(ranks.max(interrupt_code()));
}

void agree(const Ranks& ranks, const std::function<void()>& step) {
  if (ranks.size() == 1) return step();
  // Each rank's outcome travels as "<exit code> <host> <message>"; an empty string is success.
  std::string outcome;
  try {
    step();
  } catch (const Interrupted& e) {
    // Every rank hears of it below and stops here with it, so that the job ends as a whole.
    outcome = "signal " + std::to_string(e.signal == interrupt_signal() ? interrupt_code() : e.signal * 256);
  } catch (const JobFailure& e) {
    outcome = std::to_string(e.exit_code) + " " + e.what();
  } catch (const InputError& e) {
    outcome = std::string("2 ") + e.what();
  } catch (const std::bad_alloc&) {
    outcome = "1 out of memory";  // the options are not known here: no advice on them
  } catch (const std::exception& e) {
    outcome = std::string("1 ") + e.what();
  }
  bool const interrupted = outcome.rfind("signal ", 0) == 0;
  if (!outcome.empty() && !interrupted) {
    std::size_t const space = outcome.find(' ');
    outcome.insert(space + 1, ranks.host() + " ");
  }
  auto const all = ranks.all_gather(outcome);
  // An interrupt anywhere ends the step on every rank, before any failure is said: the user asked the job to stop.
  int interrupt = 0;  // the largest, as agreed_interrupt takes it
  for (auto const& a : all)
    if (a.rfind("signal ", 0) == 0) interrupt = std::max(interrupt, std::atoi(a.c_str() + 7));
  if (interrupt) throw Interrupted(adopt(interrupt), true);
  int first = -1, failed = 0;
  for (int r = 0; r < int(all.size()); ++r) {
    if (all[std::size_t(r)].empty()) continue;
    ++failed;
    if (first < 0) first = r;
  }
  if (first < 0) return;
  std::string const& o = all[std::size_t(first)];
  std::size_t const space = o.find(' '), host_end = o.find(' ', space + 1);
  int const code = std::atoi(o.substr(0, space).c_str());
  std::string const host = o.substr(space + 1, host_end - space - 1);
  std::string message = o.substr(host_end + 1);
  bool same_message = true;
  for (auto const& a : all)
    if (!a.empty() && a.substr(a.find(' ', a.find(' ') + 1)) != o.substr(host_end)) same_message = false;
  if (failed < ranks.size() || !same_message) {
    message = "rank " + std::to_string(first) + " of " + std::to_string(ranks.size()) + " (" + host + "): " + message;
    if (failed > 1) message += " (and " + std::to_string(failed - 1) + " more rank(s) failed)";
  }
  throw JobFailure(message, code);
}

}  // namespace nbody
