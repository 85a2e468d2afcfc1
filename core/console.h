// core/console.h - standard output and error that a stalled console cannot hold an interrupted process up.
#pragma once

#include <string>

namespace nbody {

// Replaces stdout (line-buffered) and stderr (unbuffered) with streams over the same descriptors whose writes wait
// for the console as any write does, until an interrupt is recorded (core/interrupt.h). From then on, what a console
// does not take at once (a stalled ssh session, a terminal stopped with Ctrl-S, a pipe no one reads) is dropped, so
// that the interrupted mode writes its files and exits instead of waiting on a line of its report (a console that
// takes a line within 0.2 s still gets it whole); the signal itself
// ends a write it finds waiting (the handlers have no SA_RESTART). A write that fails (EPIPE, a full disk) sets the
// stream's error, as before. Call once from main, after any freopen of stdout and before any output.
// std::cout, std::cerr and std::clog are bound to the new streams too.
void make_console_interruptible();

// The errno of the first write to the console that failed (EPIPE: its reader went away; ENOSPC), or 0.
int console_error();

// A message as one line: a control character a value brought into it (--dt $'0.01\n', a path with an escape) shown
// escaped ("\n", "\x1b"), so that an error stays the one line a script reads and a terminal is not driven by it.
std::string one_line(const std::string& text);

}  // namespace nbody
