// app/modes.h - the things nbody can do, one function each; each returns the exit code.
#pragma once

#include <string>

#include "app/options.h"

namespace nbody::app {

int run_simulation(const Options& options);     // --run (and --save)
int run_benchmark(const Options& options);      // --benchmark
// The default mode where it cannot open the viewer (`why`): a notice, then the benchmark; what the benchmark refuses
// (Options::batch_refusal) is refused here too.
int run_benchmark_instead(const Options& options, const std::string& why);
int run_validate(const Options& options);       // --validate
int run_devices(const Options& options);        // --devices
int run_compare_threading(const Options& options);  // --compare-threading
int run_viewer(const Options& options);         // --viewer, --offscreen (app/viewer.cpp)
int run_serve(const Options& options);          // --serve: the viewer in a browser (app/serve.cpp)
// No mode named: the viewer where a window opens, else (no display, a stale DISPLAY, no viewer
// built) the benchmark, with a notice saying why.
int run_default_mode(const Options& options);
bool viewer_available();                        // built with the viewer's libraries
bool display_available();                       // DISPLAY or WAYLAND_DISPLAY is set

// Sets the line a second Ctrl-C prints before exiting at once: the outputs of `options` it leaves
// unwritten. The modes update it as they write them.
void note_unwritten_outputs(const Options& options);
// What a process ending now would leave unwritten, as that note names it ("--checkpoint a.h5 and --json r.json are
// not written"; "" for none): said when an interrupt ends a mode before its outputs (a start-up phase). A mode that
// writes what it has before it ends on the interrupt says that instead ("the table holds the 9 rows measured
// before it").
std::string unwritten_outputs();

// Refuses, before any work, an output path nbody could not or would not write, and two outputs
// that name one file (InputError).
void check_outputs(const Options& options);

// One writer a report (--json, --csv): its WriterLock is taken here, after check_outputs, and held until
// release_reports (the process's end), so that another nbody given the same name while this one works is refused
// rather than have whichever ends last replace the other's report. Rank 0 alone (it writes them).
void lock_reports(const Options& options);
void release_reports();

// Refuses (InputError) --interop on where the run would not be on a CUDA GPU (none usable, with --backend auto):
// for the viewer and the server, before a window or an address. One process only (ranks draw from host copies).
void check_interop_on(const Options& options);

}  // namespace nbody::app
