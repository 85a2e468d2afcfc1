// core/console.h - standard output and error that a stalled console cannot hold an interrupted process up.
#pragma once

namespace nbody {

// Replaces stdout (line-buffered) and stderr (unbuffered) with streams over the same descriptors whose writes wait
// for the console as any write does, until an interrupt is recorded (core/interrupt.h). From then on, what a console
// does not take at once (a stalled ssh session, a terminal stopped with Ctrl-S, a pipe no one reads) is dropped, so
// that the interrupted mode writes its files and exits instead of waiting on a line of its report; the signal itself
// ends a write it finds waiting (the handlers have no SA_RESTART). A write that fails (EPIPE, a full disk) sets the
// stream's error, as before. Call once from main, after any freopen of stdout and before any output.
void make_console_interruptible();

}  // namespace nbody
