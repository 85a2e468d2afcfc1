// driver/course.h - a run's course: which trajectory a state is on, recorded in every snapshot and checkpoint
// (sim::RunRecord::course), so that a run can tell its own files in a series from another course's.
//
// A run from step 0 starts a course from its bodies and settings. A restart, a script's next run or a setting
// changed in the viewer stays on it, unless a setting that decides the trajectory changes: the run then branches
// onto a new course at that step, one that the same change at the same step gives again (a branch resubmitted after a
// kill is on its own course, whose files it may write over). Each is a 64-bit FNV-1a digest, 16 hexadecimal digits.
#pragma once

#include <cstdint>
#include <string>

#include "core/precision.h"
#include "sim/io/checkpoint.h"
#include "sim/physics/body_set.h"
#include "sim/physics/integrator.h"

namespace nbody::driver {

// The settings that decide a course's trajectory, as text: the integrator; dt (fixed steps), or hermite4's eta,
// longest step (its power of two: the steps taken) and floor, and its eta_start where `first_steps` (bodies start
// again, so it chooses their steps; where each goes on from its own step it changes nothing); the softening; the
// precision; euler-damped's damping. Kernels, devices, layouts and threading are not in it: they give the same bits.
std::string course_settings(const sim::StepProgram& program, double softening, Precision precision, double damping,
                            bool first_steps);

// The course of a new run from `bodies` (their values and time) under the program and physics given (as
// course_settings takes them, every body starting).
std::string new_course(const sim::BodySet& bodies, const sim::StepProgram& program, double softening,
                       Precision precision, double damping);

// The course a run takes at `step`, from the course `parent`, under `settings`; with `bodies`, where the bodies were
// given anew there (edited in a checkpoint, set from Python).
std::string branch_course(const std::string& parent, std::uint64_t step, const std::string& settings,
                          const sim::BodySet* bodies = nullptr);

// The course of a checkpoint's state: the one it records, or for an older nbody's file, which records none, one from
// what it records of its run (the same for every read of the file).
std::string course_of(const sim::RunRecord& saved);

}  // namespace nbody::driver
