// core/real4.h - plain vector types shared by host and device code (no CUDA headers needed).
#pragma once

#include <cmath>
#include <cstddef>

#if defined(__CUDACC__)
#define NBODY_HOST_DEVICE __host__ __device__
#else
#define NBODY_HOST_DEVICE
#endif

namespace nbody {

// Position and mass of one body: (x, y, z, m). Aligned so a float version loads as one 16-byte
// access on the GPU; layout-compatible with CUDA's float4.
template <class Real>
struct alignas(4 * sizeof(Real) <= 16 ? 4 * sizeof(Real) : 16) Real4 {
  Real x, y, z, w;
};

template <class Real>
struct Real3 {
  Real x, y, z;
};

using Vec3d = Real3<double>;

inline Vec3d operator+(Vec3d a, Vec3d b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3d operator-(Vec3d a, Vec3d b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3d operator*(double s, Vec3d a) { return {s * a.x, s * a.y, s * a.z}; }
inline double dot(Vec3d a, Vec3d b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline double norm(Vec3d a) { return std::sqrt(dot(a, a)); }

}  // namespace nbody
