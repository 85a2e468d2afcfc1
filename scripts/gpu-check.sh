#!/usr/bin/env bash
# scripts/gpu-check.sh - build and check nbody on a GPU machine that has the CUDA toolkit but no
# package manager: the Debian -dev packages nbody builds against travel as .deb files in .deps/
# (fetch them with `scripts/gpu-check.sh fetch` on a machine with apt) and are unpacked into a
# private prefix, never into /. Logs go to $OUT (default /tmp/nbody-gpu).
#
#   scripts/gpu-check.sh fetch                 # here: download the .debs into .deps/
#   scripts/gpu-check.sh build tests sanitize  # there: any of build, tests, sanitize, bench-*, before, stress, ...
#   scripts/gpu-check.sh pyfetch               # here: nanobind and pytest into .pyhelp/ for the `python` stage
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/nbody-gpu}
mkdir -p "$OUT/logs"
prefix=/tmp/nbody-deps
build=build-gpu
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Open MPI unpacked into the private prefix finds its components and help files there.
export OPAL_PREFIX="$prefix/usr" PATH="$prefix/usr/bin:$PATH"
export PMIX_MCA_mca_base_component_path="$prefix/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
export PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
egl_vendor=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f $egl_vendor ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl_vendor
nbody=$build/app/nbody
status=0

step() { echo; echo "=== $* ($(date +%T))"; }

# The Debian packages of .deps/ unpacked into $prefix (Open MPI's programs under the names Debian's alternatives give
# them), and the GL libraries into /: every stage that builds needs them, and a fresh machine has none. Once a machine.
extract_deps() {
  [ -e "$prefix/.extracted" ] && return
  for f in .deps/*.deb .deps/viewer/*.deb .deps/gl/*.deb .deps/hdf5/*.deb .deps/mpi/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$prefix"; done
  for tool in mpirun mpiexec mpicxx; do
    [ -e "$prefix/usr/bin/$tool.openmpi" ] && ln -sf "$tool.openmpi" "$prefix/usr/bin/$tool"
  done
  for f in .deps/gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
  ldconfig
  touch "$prefix/.extracted"
}

# `sanitized LIMIT compute-sanitizer ...`: a sanitizer run that may not outlast LIMIT seconds. One
# that does is killed with whatever it started, so that no process of it shares the GPU with the
# measurements after it (a leftover once made a later comparison three times slower). 124: timed out.
sanitized() {
  local limit=$1; shift
  timeout -k 10 "$limit" "$@"; local rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    pkill -KILL -f -- "$build/(app|tests)/" 2>/dev/null; sleep 1; rc=124
  fi
  return $rc
}

for stage in "$@"; do
  case "$stage" in
    fetch)
      mkdir -p .deps/gl .deps/viewer
      (cd .deps && apt-get download libcli11-dev nlohmann-json3-dev libgtest-dev googletest)
      # HDF5 for checkpoints, with the libraries it links that the GPU image may lack
      mkdir -p .deps/hdf5
      (cd .deps/hdf5 && apt-get download libhdf5-dev libhdf5-103-1 libsz2 libaec0 libcurl4 libnghttp2-14 librtmp1 \
        libssh2-1 libpsl5 libldap-2.5-0 libbrotli1 libsasl2-2 libsasl2-modules-db libunistring2)
      # GL loaders (unpacked into / there: the NVIDIA driver brings the vendor libraries)
      (cd .deps/gl && apt-get download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
      # the viewer's libraries and their runtime dependencies (unpacked into the private prefix)
      # Open MPI and the libraries it loads (unpacked into the private prefix, relocated by OPAL_PREFIX)
      mkdir -p .deps/mpi
      (cd .deps/mpi && apt-get download libopenmpi3 libopenmpi-dev openmpi-bin openmpi-common libpmix2 \
        libevent-core-2.1-7 libevent-pthreads-2.1-7 libevent-2.1-7 libhwloc15 libfabric1 libucx0 libibverbs1 librdmacm1 \
        libnl-3-200 libnl-route-3-200 libpsm-infinipath1 libpsm2-2 libnuma1 libpciaccess0 libxnvctrl0 libltdl7 libmunge2 \
        libxext6)
      (cd .deps/viewer && apt-get download libglfw3-dev libglfw3 libglew-dev libglew2.2 libglm-dev libimgui-dev \
        libstb-dev libstb0 libegl-dev libgl-dev libglx-dev libopengl-dev libgles-dev libx11-6 libx11-data libxcb1 \
        libxau6 libxdmcp6 libbsd0 libmd0)
      # --serve: Boost.Beast (headers) and libjpeg-turbo
      (cd .deps/viewer && apt-get download libboost1.74-dev libboost-dev libturbojpeg0-dev libturbojpeg0)
      ;;
    build)
      step "environment"
      nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv
      nvidia-smi topo -m 2>/dev/null | head -12
      nproc; g++ --version | head -1; nvcc --version | tail -1; cmake --version | head -1
      extract_deps
      mpi_args=(); [ -x "$prefix/usr/bin/mpicxx" ] && mpi_args=(-DNBODY_WITH_MPI=ON -DMPI_CXX_COMPILER="$prefix/usr/bin/mpicxx")
      step "build"
      cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_PREFIX_PATH="$prefix/usr" -DBUILD_TESTING=ON -DNBODY_BUILD_TOOLS=ON -DNBODY_WITH_HDF5=ON "${mpi_args[@]}" \
        -DNBODY_PYTHON_MODULE=OFF \
        >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
      grep -E 'MPI' "$OUT/configure.log" | head -3
      ldd "$(find "$prefix" -name 'libhdf5_serial.so.103*' | head -1)" | grep 'not found' || echo "hdf5: every library found"
      cmake --build $build --parallel "$(nproc)" >"$OUT/build.log" 2>&1 || { grep -E 'error|Error' -A3 "$OUT/build.log" | head -60; exit 1; }
      grep -E 'spill|bytes stack' "$OUT/build.log" | sort | uniq -c | head -20
      echo "build ok"
      ;;
    pyfetch)
      # Here: what the Python stage needs from PyPI, copied from .venv (scripts/python-env.sh) into
      # .pyhelp/ (pure Python and sources: any interpreter version), since the GPU machine has no PyPI.
      site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
      mkdir -p .pyhelp
      for p in nanobind pytest _pytest pluggy iniconfig packaging py.py; do [ -e "$site/$p" ] && cp -r "$site/$p" .pyhelp/; done
      du -sh .pyhelp
      ;;
    python)
      # The Python module on the GPU, built with the system compiler (a toolchain in /opt with only a
      # static libstdc++ would give the module a private copy beside NumPy's: python/CMakeLists.txt),
      # its pytest suite, and its overhead against C++ (tools/python_overhead.py). Needs .pyhelp/.
      step "Python module (build-python)"
      extract_deps
      export PYTHONPATH="$PWD/.pyhelp"
      CXX=/usr/bin/g++ CC=/usr/bin/gcc CUDAHOSTCXX=/usr/bin/g++ cmake -S . -B build-python -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$prefix/usr" -DBUILD_TESTING=OFF -DNBODY_WITH_HDF5=ON \
        -DNBODY_PYTHON="$(command -v python3)" -DNBODY_PYTHON_MODULE=ON >"$OUT/python-configure.log" 2>&1 &&
      cmake --build build-python --parallel "$(nproc)" >"$OUT/python-build.log" 2>&1 || { tail -30 "$OUT/python-build.log"; status=1; continue; }
      export PYTHONPATH="$PWD/build-python/python:$PWD/.pyhelp"
      (cd tests/python && NBODY_EXECUTABLE="$PWD/../../build-python/app/nbody" python3 -m pytest -q -p no:cacheprovider . \
        >"$OUT/logs/pytest.log" 2>&1); rc=$?; tail -3 "$OUT/logs/pytest.log"; [ $rc -eq 0 ] || status=1
      for p in fp32 fp64; do
        python3 tools/python_overhead.py --backend cuda --precision $p --nbody build-python/app/nbody 2>&1 | tail -11
      done
      ;;
    tests)
      step "GPU tests (ctest -L gpu)"
      (cd $build && ctest --no-tests=error -L gpu --output-on-failure --parallel 4 >"$OUT/logs/ctest-gpu.log" 2>&1); rc=$?
      grep -E 'tests passed|tests failed|Failed|FAILED|Error|error' "$OUT/logs/ctest-gpu.log" | head -30
      [ $rc -eq 0 ] || tail -40 "$OUT/logs/ctest-gpu.log"
      # Every measured error, for the bounds in the tests: printed lines and each case's relative_l2.
      (cd $build && ./tests/gpu_tests --gtest_output=json:"$OUT/logs/gpu_tests.json" 2>&1 | \
        grep -E '^(max|GPU|fp64|potential)') || true
      python3 -c "
import json, collections
worst = collections.defaultdict(float)
for suite in json.load(open('$OUT/logs/gpu_tests.json'))['testsuites']:
    for t in suite['testsuite']:
        if 'relative_l2' in t:
            p = t.get('value_param', t['name'])
            key = ' '.join(p.split()[:2]) + (' N<=4097' if int(p.split('N=')[1]) <= 4097 else ' N=65536')
            worst[key] = max(worst[key], float(t['relative_l2']))
for k in sorted(worst): print('worst relative L2 %-26s %.3e' % (k, worst[k]))
" || true
      [ $rc -eq 0 ] || status=1
      step "all tests (ctest)"
      (cd $build && ctest --no-tests=error --parallel 8 --output-on-failure >"$OUT/logs/ctest-all.log" 2>&1) || status=1
      grep -E 'tests passed|\(Failed\)|Failure' "$OUT/logs/ctest-all.log" | head -20
      ;;
    sanitize)
      step "compute-sanitizer on the GPU test binary (small cases)"
      filter='AllKernels/GpuForces.*_7:AllKernels/GpuForces.*_257:AllKernels/GpuForces.*_1:GpuEngine.*'
      layouts='*TwoDrift*:*ManyShort*:*SwitchingLayout*'
      for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --error-exitcode 99 $build/tests/gpu_tests --gtest_filter="$filter" \
          >"$OUT/sanitizer-$tool.log" 2>&1; rc=$?
        echo "$tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | tail -1); $(grep -E '^\[  (PASSED|FAILED)' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
        [ $rc -eq 0 ] || status=1
        compute-sanitizer --tool $tool --error-exitcode 99 $build/tests/layout_tests_gpu --gtest_filter="$layouts" \
          >"$OUT/sanitizer-$tool-layouts.log" 2>&1; rc=$?
        echo "$tool, layouts: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool-layouts.log" | tail -1); $(grep -E '^\[  (PASSED|FAILED)' "$OUT/sanitizer-$tool-layouts.log" | tr '\n' ' ')"
        [ $rc -eq 0 ] || status=1
      done
      compute-sanitizer --tool memcheck --error-exitcode 99 $nbody --backend cuda --run --bodies 3000 --steps 4 \
        --gpus 0,0,0 --exchange staged --threading workers -q >"$OUT/sanitizer-exchange.log" 2>&1
      echo "memcheck, staged exchange over 3 slices: exit $? $(grep 'ERROR SUMMARY' "$OUT/sanitizer-exchange.log")"
      ;;
    sanitize-small)
      # The small-N paths: short segments (small-N fast shape, tiled blocks longer than a segment),
      # fused kick+drift, CUDA graphs.
      step "compute-sanitizer over small N and CUDA graphs"
      for tool in memcheck racecheck synccheck; do
        # (the bitwise test's N = 20,000 takes minutes under racecheck: memcheck only)
        filter='GpuEngine.*'; [ $tool = memcheck ] && filter='GpuGraphs.StepTimes*:GpuEngine.*:GpuForces.KernelsBlockSizes*'
        sanitized 300 compute-sanitizer --tool $tool --error-exitcode 99 $build/tests/gpu_tests --gtest_filter="$filter" \
          >"$OUT/logs/sanitizer-small-$tool.log" 2>&1; rc=$?
        echo "$tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/logs/sanitizer-small-$tool.log" | tail -1); $(grep -E '^\[  (PASSED|FAILED)' "$OUT/logs/sanitizer-small-$tool.log" | tr '\n' ' ')"
        [ $rc -eq 0 ] || status=1
      done
      # Tiled blocks longer than the 64-body segments of N = 1,000, and the small-N fast shape's blocks of 256.
      # With peer copies: under racecheck a force kernel that waits on the GPU for a peer GPU's
      # announcement did not progress (tiled, 2 GPUs: past 120 s; the same run with --exchange peer
      # or on one GPU: 3 s). The device-side wait assumes each GPU runs on its own; memcheck covers it.
      for run in "--kernel tiled --block-size 1024 --bodies 1000" "--kernel tiled --block-size 256 --bodies 1000" \
                 "--bodies 3000"; do
        sanitized 60 compute-sanitizer --tool racecheck --error-exitcode 99 $nbody --backend cuda --run $run --steps 2 -q \
          --exchange peer >"$OUT/logs/racecheck-run.log" 2>&1; rc=$?
        echo "racecheck, nbody --run $run: exit $rc $(grep 'RACECHECK SUMMARY' "$OUT/logs/racecheck-run.log")"
        [ $rc -eq 0 ] || status=1
      done
      gpus=$(nvidia-smi -L | wc -l)
      for n in 1000 4096 16384; do
        sanitized 120 compute-sanitizer --tool memcheck --error-exitcode 99 $nbody --backend cuda --run --bodies $n --steps 40 \
          --numgpus $gpus --launch graph -q >"$OUT/logs/sanitizer-graph-$n.log" 2>&1; rc=$?
        echo "memcheck, --launch graph, N = $n, $gpus GPUs: exit $rc $(grep 'ERROR SUMMARY' "$OUT/logs/sanitizer-graph-$n.log")"
        [ $rc -eq 0 ] || status=1
      done
      ;;
    bench-exchange)
      # Every device's drift storing into its peers (direct) against peer copies, over N.
      gpus=$(nvidia-smi -L | wc -l)
      step "exchange modes on $gpus GPUs over N: peer copies against direct stores"
      for x in direct peer; do for t in workers single; do
        sanitized 120 compute-sanitizer --tool memcheck --error-exitcode 99 $nbody --backend cuda --run --bodies 5000 \
          --steps 20 --numgpus $gpus --exchange $x --threading $t -q >"$OUT/logs/sanitizer-$x-$t.log" 2>&1; rc=$?
        echo "memcheck, $x exchange, $t: exit $rc $(grep 'ERROR SUMMARY' "$OUT/logs/sanitizer-$x-$t.log")"
        [ $rc -eq 0 ] || status=1
      done; done
      for n in 1024 4096 16384 65536 262144 1048576; do
        steps=2000; [ $n -ge 65536 ] && steps=208; [ $n -ge 262144 ] && steps=32; [ $n -ge 1048576 ] && steps=10
        launches="stream graph"; [ $n -ge 1048576 ] && launches=stream
        for launch in $launches; do for x in peer direct; do
          $nbody --backend cuda --benchmark --numgpus $gpus --bodies $n --steps $steps --launch $launch --exchange $x \
            --json "$OUT/logs/exchange-$n-$launch-$x.json" | grep -E 'step time' | sed "s/^/N = $n, $launch, $x: /"
        done; done
        for t in workers; do for x in peer direct; do
          $nbody --backend cuda --benchmark --numgpus $gpus --bodies $n --steps $steps --threading $t --exchange $x \
            | grep -E 'step time' | sed "s/^/N = $n, $t, $x: /"
        done; done
      done
      ;;
    sweep-small)
      step "small-N launch shapes and segment lengths (kernel_sweep small)"
      $build/kernel_sweep small | tee "$OUT/logs/sweep-small.txt"
      ;;
    bench-kernels)
      step "kernel benchmarks, one GPU"
      for args in "--precision fp32 --bodies 16384" "--precision fp32 --bodies 65536" "--precision fp32 --bodies 262144" \
                  "--precision fp32 --bodies 1048576" "--precision fp64 --bodies 262144"; do
        for kernel in naive tiled fast; do
          steps=10; [[ "$args" == *1048576* && $kernel != fast ]] && steps=3
          name=$(echo "$kernel$args" | tr -c 'a-z0-9' '_')
          $nbody --backend cuda --benchmark --numgpus 1 --kernel $kernel $args --steps $steps --warmup 2 \
            --json "$OUT/logs/bench-$name.json" >"$OUT/logs/bench-$name.txt" 2>&1 || { cat "$OUT/logs/bench-$name.txt"; status=1; }
          printf '%-6s %-34s %s | %s\n' $kernel "$args" "$(grep -m1 'interactions' "$OUT/logs/bench-$name.txt" | sed 's/(N.*//')" \
            "$(grep 'step time' "$OUT/logs/bench-$name.txt" | sed 's/ *step time *//')"
        done
      done
      $nbody --backend cuda --benchmark --numgpus 1 --precision fp64 --fp64-rsqrt precise --bodies 262144 --steps 10 \
        | grep -E 'backend|interactions'
      nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
      ;;
    before)
      # The code before a change, from .before/before.tar (git archive of the commit to compare
      # against): its nbody for the same measurements, and the machine code of both builds' kernels.
      step "build the code before the change (.before/before.tar)"
      rm -rf before-src && mkdir before-src && tar -xf .before/before.tar -C before-src
      cmake -S before-src -B build-before -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_PREFIX_PATH="$prefix/usr" -DBUILD_TESTING=OFF >"$OUT/configure-before.log" 2>&1 || { tail -20 "$OUT/configure-before.log"; exit 1; }
      cmake --build build-before --parallel "$(nproc)" --target nbody >"$OUT/build-before.log" 2>&1 || { tail -30 "$OUT/build-before.log"; exit 1; }
      [ -x build-before/app/nbody ] && echo "before: built" || status=1
      step "SASS of every kernel, before and after (tools/sass_fingerprint.py: hash of each kernel's code)"
      python3 tools/sass_fingerprint.py build-before --source sim/cuda_engine.cu >"$OUT/logs/sass-before.txt" &&
        python3 tools/sass_fingerprint.py $build >"$OUT/logs/sass-after.txt" || status=1
      echo "kernels: $(wc -l <"$OUT/logs/sass-before.txt") before, $(wc -l <"$OUT/logs/sass-after.txt") after;" \
        "identical: $(comm -12 <(sort "$OUT/logs/sass-before.txt") <(sort "$OUT/logs/sass-after.txt") | wc -l)"
      diff "$OUT/logs/sass-before.txt" "$OUT/logs/sass-after.txt" | head -10
      ;;
    sweep)
      step "fast-kernel launch-shape sweep"
      $build/kernel_sweep fp32 && $build/kernel_sweep fp64
      ;;
    profile)
      step "SASS and stall reasons of one fast-kernel shape"
      cuobjdump -sass $build/kernel_sweep | awk '/Function :/ {f = /fast_forcesIfNS0_12RsqrtDefaultELi128ENS1_9PairOrderILi4ELi4EJLi1ELi13E/} f' \
        >"$OUT/logs/fast-sass.txt" 2>&1
      awk '/FFMA|FMUL|FADD|MUFU|LDS|BAR|BRA|IADD|ISETP|LDG/ {print $2}' "$OUT/logs/fast-sass.txt" | sort | uniq -c | sort -rn | head -12
      ncu --clock-control none --kernel-name regex:fast_forces --launch-count 1 \
        --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy \
        $build/kernel_sweep one >"$OUT/logs/ncu.txt" 2>&1
      grep -E 'Stall|Issued Warp|Eligible|No Eligible|Active Warps|Achieved Occupancy|Issue Slots Busy|Executed Ipc|Warp Cycles' "$OUT/logs/ncu.txt" | head -40
      # Why warps do not issue: cycles stalled per issued instruction, by reason.
      reasons=$(for r in wait short_scoreboard long_scoreboard math_pipe_throttle dispatch_stall not_selected \
                         selected barrier mio_throttle no_instruction branch_resolving lg_throttle tex_throttle \
                         drain membar sleeping misc; do
                  printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' $r; done)
      ncu --clock-control none --kernel-name regex:fast_forces --launch-count 1 --metrics "${reasons%,}" \
        $build/kernel_sweep one 2>&1 | grep -E 'stalled' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
      ;;
    multigpu)
      gpus=$(nvidia-smi -L | wc -l)
      step "multi-GPU tests on $gpus GPUs (ctest -L multigpu)"
      (cd $build && ctest --no-tests=error -L multigpu --output-on-failure >"$OUT/logs/ctest-multigpu.log" 2>&1) || status=1
      grep -E 'tests passed|Failed|Failure' "$OUT/logs/ctest-multigpu.log" | head
      step "compute-sanitizer over every exchange, threading model and launch mode"
      for x in direct peer staged; do for t in single workers; do for l in stream graph; do
        [ $t = workers ] && [ $l = graph ] && continue  # graphs are captured by the single thread
        sanitized 120 compute-sanitizer --tool memcheck --error-exitcode 99 $nbody --backend cuda --run --bodies 5000 \
          --steps 40 --numgpus $gpus --exchange $x --threading $t --launch $l -q >"$OUT/logs/sanitizer-$x-$t-$l.log" 2>&1
        rc=$?
        echo "memcheck, $x exchange, $gpus GPUs, $t, $l: exit $rc $(grep 'ERROR SUMMARY' "$OUT/logs/sanitizer-$x-$t-$l.log")"
        [ $rc -eq 0 ] || status=1
      done; done; done
      # A device waiting on the GPU for a peer that never drifts is let through by abort()
      sanitized 120 compute-sanitizer --tool memcheck --error-exitcode 99 $build/tests/gpu_tests \
        --gtest_filter='GpuExchange.*' >"$OUT/logs/sanitizer-exchange-abort.log" 2>&1; rc=$?
      echo "memcheck, GpuExchange (abort while a device waits): exit $rc $(grep 'ERROR SUMMARY' "$OUT/logs/sanitizer-exchange-abort.log")"
      [ $rc -eq 0 ] || status=1
      step "devices and the threading comparison"
      $nbody --devices
      $nbody --backend cuda --compare-threading --numgpus $gpus --bodies 1024,4096,16384,65536 --steps 400 -q \
        --csv "$OUT/logs/compare-small-all.csv" --json "$OUT/logs/compare-small-all.json" || status=1
      $nbody --backend cuda --compare-threading --numgpus $gpus --bodies 262144,1048576 --steps 10 -q \
        --csv "$OUT/logs/compare.csv" --json "$OUT/logs/compare.json" || status=1
      $nbody --offscreen --backend cuda --numgpus $gpus --scenario collision --bodies 65536 --color device --frames 60 \
        --width 1280 --height 720 --screenshot "$OUT/logs/colour-by-device.png" 2>&1 | tail -1 || status=1
      for x in direct peer staged; do
        $nbody --backend cuda --benchmark --numgpus $gpus --bodies 1048576 --exchange $x --threading workers | \
          grep -E 'backend|step time|per device|interactions'
      done
      ;;
    stress)
      # An ordering defect between GPUs shows as different bits only now and then: the bitwise
      # multi-GPU tests and the MPI layouts, again and again, each failure's log kept.
      step "the bitwise multi-GPU tests, repeated (ctest -L multigpu --repeat until-fail:10)"
      (cd $build && ctest --no-tests=error -L multigpu --repeat until-fail:10 --output-on-failure >"$OUT/logs/stress-multigpu.log" 2>&1) || status=1
      grep -E 'tests passed|Failed|Failure' "$OUT/logs/stress-multigpu.log" | tail -5
      step "the MPI and GPU layouts, three times"
      [ -x "$prefix/usr/bin/mpirun" ] || echo "skipped: no Open MPI in .deps (nbody was built without MPI)"
      [ -x "$prefix/usr/bin/mpirun" ] && for k in 1 2 3; do
        (cd $build && ctest --no-tests=error -R MpiGpu.gpu_layouts -V >"$OUT/logs/stress-mpigpu-$k.log" 2>&1) || status=1
        echo "run $k: $(grep -c ' identical' "$OUT/logs/stress-mpigpu-$k.log") identical, \
$(grep -cE 'DIFFERENT|FAIL:' "$OUT/logs/stress-mpigpu-$k.log") failed"
      done
      ;;
    mpi)
      gpus=$(nvidia-smi -L | wc -l)
      step "MPI tests (ctest -L mpi), $gpus GPUs"
      mpirun --version | head -1
      (cd $build && ctest --no-tests=error -L mpi -V >"$OUT/logs/ctest-mpi.log" 2>&1) || status=1
      grep -E 'tests passed|Failed|Failure|FAIL:|skipped|identical|DIFFERENT' "$OUT/logs/ctest-mpi.log" | head -20
      step "MPI benchmarks: 2 ranks x 1 GPU against 1 rank x 2 GPUs"
      for n in 262144 1048576; do
        steps=10; [ $n -lt 500000 ] && steps=50
        $nbody --backend cuda --benchmark --numgpus 2 --bodies $n --steps $steps --json "$OUT/logs/mpi-1x2-$n.json" | \
          grep -E 'backend|step time|interactions'
        mpirun -np 2 $nbody --backend cuda --benchmark --bodies $n --steps $steps --json "$OUT/logs/mpi-2x1-$n.json" | \
          grep -E 'backend|step time|interactions'
      done
      step "compute-sanitizer over the exchange between ranks (2 ranks x 1 GPU, then 2 ranks sharing GPU 0 as 2 slices each)"
      mpirun -np 2 compute-sanitizer --tool memcheck --error-exitcode 99 $nbody --backend cuda --run --bodies 5000 \
        --steps 4 -q >"$OUT/logs/sanitizer-mpi.log" 2>&1
      echo "memcheck, 2 ranks: exit $? $(grep 'ERROR SUMMARY' "$OUT/logs/sanitizer-mpi.log" | tr '\n' ' ')"
      mpirun -np 2 compute-sanitizer --tool memcheck --error-exitcode 99 $nbody --backend cuda --run --bodies 5000 \
        --steps 4 --gpus 0,0 --threading workers -q >"$OUT/logs/sanitizer-mpi-workers.log" 2>&1
      echo "memcheck, 2 ranks x 2 slices, workers: exit $? $(grep 'ERROR SUMMARY' "$OUT/logs/sanitizer-mpi-workers.log" | tr '\n' ' ')"
      step "MPI all-gather between 2 ranks: latency and bandwidth"
      [ -x $build/mpi_gather_bench ] && mpirun -np 2 $build/mpi_gather_bench | tee "$OUT/logs/mpi-gather.txt"
      ;;
    bench-serve)
      # --serve at N = 1,048,576, 1280 x 720: frames/s and the step rate watching, input-to-frame latency
      # steering, against --offscreen with nobody watching (tools/serve_bench.py, a standard-library client).
      step "--serve: frames/s, input-to-frame latency, step rate against --offscreen"
      python3 tools/serve_bench.py $nbody --seconds 30 --width 1280 --height 720 --offscreen-frames 30 \
        --json "$OUT/logs/bench-serve.json" -- --backend cuda --bodies 1048576 >"$OUT/logs/bench-serve.txt" 2>&1 ||
        status=1
      cat "$OUT/logs/bench-serve.txt"
      ;;
    bench-small)
      # One GPU over N: the rates tools/scaling_model.py starts from, and the cost of a small step.
      step "one GPU over N, stream launches and CUDA graphs"
      # (graphs time whole 16-step blocks and capture two in warm-up: none at 1M, where they cannot matter)
      for n in 1024 4096 16384 65536 262144 1048576; do
        steps=2000; [ $n -ge 65536 ] && steps=208; [ $n -ge 262144 ] && steps=32; [ $n -ge 1048576 ] && steps=10
        launches="stream graph"; [ $n -ge 1048576 ] && launches=stream
        for launch in $launches; do
          $nbody --backend cuda --benchmark --numgpus 1 --bodies $n --steps $steps --launch $launch \
            --json "$OUT/logs/small-$n-$launch.json" | grep -E 'step time|interactions' | sed "s/^/N = $n, $launch: /"
        done
      done
      for n in 1024 4096; do
        $nbody --backend cuda --benchmark --numgpus 1 --bodies $n --steps 2000 --launch graph --precision fp64 | \
          grep -E 'step time' | sed "s/^/N = $n, graph, fp64: /"
      done
      step "--run against the benchmark (20,000 steps)"
      for n in 1024 4096; do for launch in stream graph; do
        $nbody --backend cuda --run --numgpus 1 --bodies $n --steps 20000 --launch $launch | grep -E 'wall' | \
          sed "s/^/N = $n, $launch: /"
      done; done
      step "threading models and launch modes, 2 GPUs, small N"
      $nbody --backend cuda --compare-threading --bodies 1024,4096,16384,65536 --steps 400 -q \
        --csv "$OUT/logs/compare-small.csv" --json "$OUT/logs/compare-small.json" || status=1
      ;;
    viewer)
      step "viewer offscreen through EGL: CUDA-GL interop against host upload"
      grep -E 'viewer:' "$OUT/configure.log" 2>/dev/null || true
      common="--offscreen --backend cuda --scenario collision --bodies 16384 --no-hud --width 960 --height 600 --frames 3"
      $nbody $common --interop on --screenshot "$OUT/logs/interop-on.png" 2>&1 | tail -3 || status=1
      $nbody $common --interop off --screenshot "$OUT/logs/interop-off.png" 2>&1 | tail -3 || status=1
      python3 -c "
from PIL import Image, ImageChops
a = Image.open('$OUT/logs/interop-on.png').convert('RGB'); b = Image.open('$OUT/logs/interop-off.png').convert('RGB')
d = ImageChops.difference(a, b); lit = sum(1 for p in a.getdata() if max(p) > 48)
print('interop vs host upload: %d of %d pixels differ; %d lit pixels' % (sum(1 for p in d.getdata() if max(p) > 0), a.width * a.height, lit))
" || status=1
      step "render time per frame (60 frames each; 10 at 1M)"
      for n in 16384 131072 1048576; do for mode in on off; do
        frames=60; [ $n -gt 200000 ] && frames=10
        $nbody --offscreen --backend cuda --bodies $n --frames $frames --no-hud --interop $mode 2>&1 | grep -E 'N =|error' || status=1
        if [ -x build-before/app/nbody ] && [ $n -gt 200000 ]; then
          echo "  before:"
          build-before/app/nbody --offscreen --backend cuda --bodies $n --frames $frames --no-hud --interop $mode 2>&1 | \
            grep -E 'N =|error' || status=1
        fi
      done; done
      step "pictures for the README (the renderer's defaults)"
      [ -f shared-data/galaxy_20K.bin ] && $nbody --offscreen --backend cuda --load shared-data/galaxy_20K.bin \
        --frames 60 --width 1280 --height 720 --screenshot "$OUT/galaxy.png" 2>&1 | tail -1
      (cd $build && ctest --no-tests=error -L gl --output-on-failure 2>&1 | grep -E 'tests passed|Failed|Skipped' | tail -8)
      ;;
    validate)
      step "validate"
      for p in fp32 fp64; do for k in fast tiled naive; do
        $nbody --backend cuda --validate --kernel $k --precision $p --bodies 65536 | grep -E 'L2|PASS|FAIL' | tr '\n' ' '; echo " ($k $p)"
      done; done
      ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
# Everything under $OUT/logs comes back as one archive (the device tool returns few files).
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs $(cd "$OUT" && ls *.log 2>/dev/null) && rm -rf "$OUT/logs" "$OUT"/*.log
exit $status
