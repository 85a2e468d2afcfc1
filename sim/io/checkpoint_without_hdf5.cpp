// sim/io/checkpoint_without_hdf5.cpp - a build without HDF5 has no checkpoints, and says so.
#include "core/errors.h"
#include "sim/io/checkpoint.h"

namespace nbody::sim {

namespace {
[[noreturn]] void refuse(const std::string& path) {
  throw InputError(path + ": checkpoints need HDF5, and this nbody was built without it (install libhdf5-dev, rebuild)");
}
}  // namespace

bool checkpoints_built() { return false; }

void write_checkpoint(const std::string& path, const BodySet&, const RunRecord&, const hermite::HermiteState*) {
  refuse(path);
}

void write_snapshot(const std::string& path, const BodySet&, const RunRecord&, Precision, const std::vector<double>*) {
  throw InputError(path + ": snapshots need HDF5, and this nbody was built without it (install libhdf5-dev, rebuild)");
}

CheckpointHeader read_checkpoint_header(const std::string& path, const SettingNames&) { refuse(path); }

Checkpoint read_checkpoint(const std::string& path, const SettingNames&) { refuse(path); }

bool is_nbody_snapshot(const std::string&) { return false; }  // the tipsy reader then says what the file is

bool is_nbody_checkpoint(const std::string&) { return false; }

std::string recorded_course(const std::string&) { return ""; }

Snapshot read_snapshot(const std::string& path, const SettingNames&, bool) {
  throw InputError(path + ": snapshots need HDF5, and this nbody was built without it (install libhdf5-dev, rebuild)");
}

bool is_foreign_snapshot(const std::string&) { return false; }

double snapshot_coordinate_rounding(const BodySet&, Precision) { return 0.0; }

ForeignSnapshot read_foreign_snapshot(const std::string& path, const SettingNames&, bool) {
  throw InputError(path + ": HDF5 snapshots need HDF5, and this nbody was built without it (install libhdf5-dev, rebuild)");
}

}  // namespace nbody::sim
