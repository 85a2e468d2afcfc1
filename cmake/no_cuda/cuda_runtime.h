// cmake/no_cuda/cuda_runtime.h - put first on the include path of a build without CUDA, so that a machine
// which happens to have the CUDA headers still proves that no code of this build needs them.
#error "a CUDA header is included in a build without CUDA (NBODY_ENABLE_CUDA=OFF): move the code behind NBODY_HAVE_CUDA or into a CUDA-only file"
