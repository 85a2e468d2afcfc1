// sim/engines/hermite_cpu_forces.cpp - the CPU force+jerk pass in the canonical order. Built with -O3 and the
// machine's vector units (sim/engines/CMakeLists.txt) but strict IEEE arithmetic (no fast-math): the lanes of a
// block run one instruction sequence, so every body gets the same bits in any lane, block or thread.
//
// The bits also depend on where GCC fuses a multiply and an add into an FMA (-ffp-contract=fast, its default),
// which it decides per loop after vectorising: a loop of another shape (fully unrolled, say) can fuse other pairs
// and change the results. Check a change here against the end-state hash of a run before and after.
#include "sim/engines/hermite_cpu_forces.h"

#include <omp.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>

namespace nbody::sim {

namespace {

using hermite::ActiveBody;
using hermite::ForceJerk;
constexpr std::size_t W = kHermiteLanes;

// One block of W active bodies against one group: the group's partials, spans summed in order. (fp64; fp32 below.)
template <class Real>
void block_group(const ActiveBody* active, const HermiteJBodies& jb, std::size_t begin, std::size_t end,
                 std::size_t span, Real eps2, ForceJerk* out, std::size_t stride, std::size_t lanes) {
  // Indices as doubles (exact below 2^53): the lane's self test is then a compare of the lanes' own width.
  double xi[W], yi[W], zi[W], vxi[W], vyi[W], vzi[W], idx[W];
  for (std::size_t l = 0; l < W; ++l) {
    ActiveBody const& b = active[l];
    xi[l] = b.x, yi[l] = b.y, zi[l] = b.z, vxi[l] = b.vx, vyi[l] = b.vy, vzi[l] = b.vz;
    idx[l] = b.index == ~std::uint64_t(0) ? -1.0 : double(b.index);
  }
  double gax[W] = {}, gay[W] = {}, gaz[W] = {}, gjx[W] = {}, gjy[W] = {}, gjz[W] = {}, gphi[W] = {};
  for (std::size_t s0 = begin; s0 < end; s0 += span) {
    std::size_t const s1 = s0 + span < end ? s0 + span : end;
    double ax[W] = {}, ay[W] = {}, az[W] = {}, jx[W] = {}, jy[W] = {}, jz[W] = {}, phi[W] = {};
    for (std::size_t j = s0; j < s1; ++j) {
      std::size_t const local = j - jb.first;
      double const xj = jb.x[local], yj = jb.y[local], zj = jb.z[local];
      double const vxj = jb.vx[local], vyj = jb.vy[local], vzj = jb.vz[local];
      Real const mj = Real(jb.m[local]);
      double const jd = double(j);
#pragma omp simd
      for (std::size_t l = 0; l < W; ++l) {
        auto const t = hermite::pair_force_jerk<Real>(Real(xj - xi[l]), Real(yj - yi[l]), Real(zj - zi[l]),
                                                      Real(vxj - vxi[l]), Real(vyj - vyi[l]), Real(vzj - vzi[l]), mj,
                                                      eps2, Real(idx[l] == jd ? 1.0 : 0.0));
        ax[l] += double(t.ax);
        ay[l] += double(t.ay);
        az[l] += double(t.az);
        jx[l] += double(t.jx);
        jy[l] += double(t.jy);
        jz[l] += double(t.jz);
        phi[l] += double(t.phi);
      }
    }
    for (std::size_t l = 0; l < W; ++l) {
      gax[l] += ax[l], gay[l] += ay[l], gaz[l] += az[l];
      gjx[l] += jx[l], gjy[l] += jy[l], gjz[l] += jz[l];
      gphi[l] += phi[l];
    }
  }
  for (std::size_t l = 0; l < lanes; ++l) out[l * stride] = {gax[l], gay[l], gaz[l], gjx[l], gjy[l], gjz[l], gphi[l], 0.0};
}

// The same for fp32, with the same bits as block_group<float> (every pair in fp32 from the fp64 differences, added
// in fp64 in index order), in three passes over chunks of kChunk j-bodies: (1) the fp64 differences rounded to
// fp32, a vector of 8 lanes per j; (2) the pair arithmetic over (j, lane) as one flat fp32 loop, 16 pairs a
// 512-bit vector; (3) the terms widened and added in fp64, j in index order for every lane. In one loop (as
// block_group<float>) GCC vectorises the mixed fp64/fp32 body 8 lanes wide and splits every fp64 vector in
// halves: 39 conversions and shuffles per j against 13 here, and fp32 ran at a quarter of fp64's rate.
constexpr std::size_t kChunk = 16;
// 64-byte vectors are returned differently without AVX-512; GCC notes it (-Wpsabi, an error under -Werror on such
// targets), which matters for calls across objects only: these helpers are internal. GCC reports it at the end of
// the file, so it stays off to there.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef double D8 __attribute__((vector_size(8 * sizeof(double))));
typedef float F8 __attribute__((vector_size(8 * sizeof(float))));
static_assert(W == 8, "the fp32 passes are written for 8 lanes");

inline D8 load8(const double* p) { D8 v; std::memcpy(&v, p, sizeof v); return v; }
inline F8 load8(const float* p) { F8 v; std::memcpy(&v, p, sizeof v); return v; }
inline void store8(float* p, F8 v) { std::memcpy(p, &v, sizeof v); }
#if defined(__AVX512F__)
// GCC 12 widens a generic 8-float vector in two 128-bit halves and a shuffle; one instruction each way here.
// (The maskz forms with every lane set: the plain ones start from an undefined vector, which GCC 12 warns of.)
inline D8 to_double(F8 v) { return D8(_mm512_maskz_cvtps_pd(0xff, __m256(v))); }
inline F8 to_float(D8 v) { return F8(_mm512_maskz_cvtpd_ps(0xff, __m512d(v))); }
inline F8 self_of(D8 idx, double jd) {
  return F8(_mm256_maskz_mov_ps(_mm512_cmp_pd_mask(__m512d(idx), _mm512_set1_pd(jd), _CMP_EQ_OQ), _mm256_set1_ps(1.0f)));
}
#else
inline D8 to_double(F8 v) { return __builtin_convertvector(v, D8); }
inline F8 to_float(D8 v) { return __builtin_convertvector(v, F8); }
inline F8 self_of(D8 idx, double jd) {
  D8 const one = {1, 1, 1, 1, 1, 1, 1, 1}, zero = {};
  return to_float(idx == jd ? one : zero);
}
#endif

enum Input { kDx, kDy, kDz, kWx, kWy, kWz, kMass, kSelf, kInputs };
enum Term { kAx, kAy, kAz, kJx, kJy, kJz, kPhi, kTerms };

void block_group_fp32(const ActiveBody* active, const HermiteJBodies& jb, std::size_t begin, std::size_t end,
                      std::size_t span, float eps2, ForceJerk* out, std::size_t stride, std::size_t lanes) {
  constexpr std::size_t E = kChunk * W;
  alignas(64) double xi_[W], yi_[W], zi_[W], vxi_[W], vyi_[W], vzi_[W], idx_[W];
  for (std::size_t l = 0; l < W; ++l) {
    ActiveBody const& b = active[l];
    xi_[l] = b.x, yi_[l] = b.y, zi_[l] = b.z, vxi_[l] = b.vx, vyi_[l] = b.vy, vzi_[l] = b.vz;
    idx_[l] = b.index == ~std::uint64_t(0) ? -1.0 : double(b.index);
  }
  D8 const xi = load8(xi_), yi = load8(yi_), zi = load8(zi_), vxi = load8(vxi_), vyi = load8(vyi_), vzi = load8(vzi_);
  D8 const idx = load8(idx_);
  alignas(64) float in[kInputs][E];
  alignas(64) float terms[kTerms][E];
  alignas(64) float mj[kChunk];
  D8 gax = {}, gay = {}, gaz = {}, gjx = {}, gjy = {}, gjz = {}, gphi = {};
  for (std::size_t s0 = begin; s0 < end; s0 += span) {
    std::size_t const s1 = s0 + span < end ? s0 + span : end;
    D8 ax = {}, ay = {}, az = {}, jx = {}, jy = {}, jz = {}, phi = {};
    for (std::size_t c0 = s0; c0 < s1; c0 += kChunk) {
      std::size_t const used = s1 - c0 < kChunk ? s1 - c0 : kChunk;
      std::size_t const first = c0 - jb.first;
      const double *xj = jb.x + first, *yj = jb.y + first, *zj = jb.z + first;
      const double *vxj = jb.vx + first, *vyj = jb.vy + first, *vzj = jb.vz + first;
      for (std::size_t c = 0; c < used; ++c) mj[c] = float(jb.m[first + c]);
      double jd = double(c0);
      for (std::size_t c = 0; c < used; ++c, jd += 1.0) {
        std::size_t const e = c * W;
        store8(in[kDx] + e, to_float(xj[c] - xi));
        store8(in[kDy] + e, to_float(yj[c] - yi));
        store8(in[kDz] + e, to_float(zj[c] - zi));
        store8(in[kWx] + e, to_float(vxj[c] - vxi));
        store8(in[kWy] + e, to_float(vyj[c] - vyi));
        store8(in[kWz] + e, to_float(vzj[c] - vzi));
        float const m = mj[c];
        store8(in[kMass] + e, F8{m, m, m, m, m, m, m, m});
        store8(in[kSelf] + e, self_of(idx, jd));
      }
      // A short chunk: the rest repeats its last pair (computed, never added), so the pass below is whole.
      for (std::size_t c = used; c < kChunk; ++c)
        for (std::size_t k = 0; k < kInputs; ++k) std::memcpy(in[k] + c * W, in[k] + (used - 1) * W, W * sizeof(float));
      // A trip count the compiler cannot see: with a constant one it may unroll the loop fully and fuse other
      // multiply-adds than block_group<float> does (it did at kChunk = 4 and 8).
      std::size_t elems = E;
      asm("" : "+r"(elems));
#pragma omp simd
      for (std::size_t e = 0; e < elems; ++e) {
        auto const t = hermite::pair_force_jerk<float>(in[kDx][e], in[kDy][e], in[kDz][e], in[kWx][e], in[kWy][e],
                                                       in[kWz][e], in[kMass][e], eps2, in[kSelf][e]);
        terms[kAx][e] = t.ax, terms[kAy][e] = t.ay, terms[kAz][e] = t.az;
        terms[kJx][e] = t.jx, terms[kJy][e] = t.jy, terms[kJz][e] = t.jz, terms[kPhi][e] = t.phi;
      }
      for (std::size_t c = 0; c < used; ++c) {
        std::size_t const e = c * W;
        ax += to_double(load8(terms[kAx] + e));
        ay += to_double(load8(terms[kAy] + e));
        az += to_double(load8(terms[kAz] + e));
        jx += to_double(load8(terms[kJx] + e));
        jy += to_double(load8(terms[kJy] + e));
        jz += to_double(load8(terms[kJz] + e));
        phi += to_double(load8(terms[kPhi] + e));
      }
    }
    gax += ax, gay += ay, gaz += az, gjx += jx, gjy += jy, gjz += jz, gphi += phi;
  }
  for (std::size_t l = 0; l < lanes; ++l) out[l * stride] = {gax[l], gay[l], gaz[l], gjx[l], gjy[l], gjz[l], gphi[l], 0.0};
}

}  // namespace

void hermite_partials(const ActiveBody* active, std::size_t count, const HermiteJBodies& j, std::size_t group_length,
                      double eps2, bool fp32, int threads, ForceJerk* out) {
  if (count == 0 || j.count == 0) return;
  std::size_t const groups = (j.count + group_length - 1) / group_length;
  std::size_t const blocks = (count + W - 1) / W;
  std::size_t const span = hermite::hermite_span_length(group_length);
  auto const items = static_cast<long>(blocks * groups);
  // Below about a millisecond of work a parallel region costs more than it saves (and on a loaded machine a
  // team waits for its slowest thread): one thread then.
  bool const parallel = double(count) * double(j.count) > 1e6 && items > 1;
  int const team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) if (parallel)
  for (long item = 0; item < items; ++item) {
    std::size_t const g = std::size_t(item) % groups, b = std::size_t(item) / groups;
    std::size_t const begin = j.first + g * group_length;
    std::size_t const end = begin + group_length < j.first + j.count ? begin + group_length : j.first + j.count;
    std::size_t const lanes = count - b * W < W ? count - b * W : W;
    ForceJerk* o = out + g * count + b * W;
    if (fp32)
      block_group_fp32(active + b * W, j, begin, end, span, float(eps2), o, 1, lanes);
    else
      block_group<double>(active + b * W, j, begin, end, span, eps2, o, 1, lanes);
  }
}

}  // namespace nbody::sim
