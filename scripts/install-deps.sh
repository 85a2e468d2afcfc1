#!/usr/bin/env bash
# scripts/install-deps.sh - installs the Debian packages nbody needs to build and test.
# Idempotent: installs only what is missing, so it is cheap to call before every build.
set -euo pipefail

# Build and test dependencies (always).
packages=(
  cmake ninja-build g++ pkg-config   # build tools
  libcli11-dev                       # command-line parsing
  nlohmann-json3-dev                 # JSON output (--json)
  libgtest-dev                       # unit tests (GoogleTest)
  libglfw3-dev libglew-dev libglm-dev # viewer: window and input, GL loader, camera maths
  libimgui-dev libstb-dev            # viewer: HUD widgets (Dear ImGui), PNG screenshots (stb_image_write)
  libgl-dev libegl-dev               # viewer: OpenGL and EGL headers
  xvfb xauth libgl1-mesa-dri         # viewer tests: a real X server in memory, Mesa's software GL
  xdotool                            # viewer tests: synthetic keys and mouse in that X server
  libhdf5-dev                        # checkpoints (HDF5, the GADGET/SWIFT layout)
  python3 python3-h5py python3-venv  # the tests that read nbody's files as Python users will; the venv for what PyPI adds
  ffmpeg                             # --video: H.264 MP4 recording (ffmpeg), and ffprobe for its tests
  libopenmpi-dev openmpi-bin         # one simulation over many hosts (MPI ranks) and mpirun for its tests
  python3-mpi4py                     # Python: Simulation(comm=...) over Open MPI ranks; built for Debian's Open MPI,
                                     # needs no NumPy headers, so .venv's (pip, 2.x) NumPy works with it
  python3-matplotlib                 # the plots (tools/plot_benchmarks.py, tools/scaling_model.py)
  libboost-dev                       # --serve: HTTP and WebSocket (Boost.Beast, header-only)
  libturbojpeg0-dev                  # --serve: frames as JPEG (libjpeg-turbo)
  chromium                           # --serve's browser test: headless Chromium, driven through DevTools
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA toolkit does not come from apt here (NVIDIA's own packages); without it nbody builds
# the CPU engine, the viewer and every CPU test.
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: notice: nvcc not found; building without CUDA (CPU engine and viewer only)." \
       "Install the CUDA toolkit for the GPU engine." >&2
fi
