// core/output_path.h - output paths checked before any work: a file nbody may replace, in a folder it can write.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/setting_names.h"

namespace nbody {

// Why PATH, given for a file (or, with `folder`, a folder) that nbody reads or writes, names none, or "": it is empty,
// its last name is blank (a slip of quoting), or "-", which is not standard input or output here (a report goes to standard output): a file of that name is
// "./-". Every front end refuses these names alike (the command line's options, Python's paths), before any work.
std::string path_name_problem(const std::string& path, bool folder = false);

// Why nbody refuses to write PATH, in a few words ("is a symbolic link", "the folder /nope does not
// exist"), or "" when PATH may be written. Refused: a name path_name_problem refuses, a path that holds a control
// character (a slip: a newline pasted into a job script), a symbolic link
// (even to a regular file: replacing it would silently cut the link), a directory, a FIFO, device or
// socket, an existing file the user may not write, a path ending in '/', a folder that is missing, not
// a folder, or not writable, and the checkpoint another run writes now (another_writer_of,
// core/atomic_file.h: its lock beside it).
// Only looks (lstat, stat, access, and a look at that lock); never opens the target, so a FIFO cannot
// block it, and creates nothing.
// `longer`: the bytes that files named after PATH add to its name (a diagnostics series' ".partial", a periodic
// checkpoint's "_00000010"), which name_length_problem makes room for.
std::string output_path_problem(const std::string& path, std::size_t longer = 0);

// Why PATH's file name is too long for nbody to write (an output goes through a hidden temporary file beside it,
// temporary_name(path, keep_extension), whose name is longer: the file system's limit, usually 255 bytes, must hold
// that), or "". Part of output_path_problem (keep_extension false: every output but a video); a companion file (a
// tipsy save's .param) is checked with it before anything else. The advice is in bytes to take off, which holds for
// the name the user gave where PATH is made from it (a series file, a .partial).
std::string name_length_problem(const std::string& path, bool keep_extension = false, std::size_t longer = 0);

// Throws InputError "OPTION PATH: PROBLEM" when output_path_problem(path) finds one, naming the option as `names`
// do: "--save /nope/out.bin: the folder /nope does not exist", or "save='/nope/out.bin': ..." for Python. Call it
// for every output option before the work starts, so a bad path costs nothing; write_file_atomically applies the
// same refusals again at the end, for a path that went bad during the run.
void check_output_path(const std::string& path, const std::string& option, const SettingNames& names = {},
                       std::size_t longer = 0);

// Throws InputError when two outputs, given as (option, path), name one file, even through different
// spellings ("r.bin", "./r.bin", "out/../r.bin", a symlinked folder, a hard link):
// "--save and --json both name r.bin; give each output its own file". Empty paths (options not
// given) are skipped.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// The file name's extension in lower case (".h5" for "run.H5"; "" for none): what its format is told by.
std::string lower_extension(const std::string& path);

// Throws InputError when an output, given as (option, path), names the input file `input` (read by
// `input_option`), through any spelling: writing it would replace what the run was started from.
// `continues`: the one output that may (the state continued in place: --restart's --checkpoint).
// "--json in.h5: the --restart file; writing it would replace the checkpoint this run starts from;
// give --json another file". Empty paths are skipped.
void check_outputs_spare_input(const std::vector<std::pair<std::string, std::string>>& outputs,
                               const std::string& input_option, const std::string& input,
                               const std::string& continues = "");

}  // namespace nbody
