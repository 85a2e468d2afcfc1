// sim/kernels/pair_order.h - the order in which the fast GPU kernel issues the pair interactions of one
// step (force_kernels.cuh), and the compile-time check that an order keeps the sums in j order.
#pragma once

#include <cstddef>
#include <utility>

namespace nbody::sim::kernels {

// The order in which the fast kernel issues the pairs of one step: kStep j-bodies of the tile
// against the thread's kBodies bodies. Pair p = u * kBodies + r couples j-body u of the step with
// body r. Each pair has a distance stage (d and r^2) and a force stage (m r^-3 and the three
// accumulating FMAs); token p names the first, p + kForceStage the second. An order is valid when
// every stage appears once, each pair's distance comes before its force, and each body's forces
// come in j order. Then every order gives bitwise the same sums; it changes only the instruction
// stream the compiler schedules, and with it the speed (docs/benchmarks.md).
inline constexpr int kForceStage = 1 << 8;

template <int kBodies, int kStep, std::size_t kCount>
constexpr bool valid_pair_order(const int (&tokens)[kCount]) {
  constexpr int kPairs = kBodies * kStep;
  if (kCount != 2 * std::size_t(kPairs)) return false;
  bool distance_done[kPairs] = {}, force_done[kPairs] = {};
  for (int t : tokens) {
    int const p = t % kForceStage;
    if (t < 0 || p >= kPairs) return false;
    bool* const done = t >= kForceStage ? force_done : distance_done;
    if (done[p]) return false;
    if (t >= kForceStage && (!distance_done[p] || (p >= kBodies && !force_done[p - kBodies]))) return false;
    done[p] = true;
  }
  return true;
}

template <int kBodies, int kStep, int... kTokens>
struct PairOrder {
  static constexpr int bodies = kBodies, step = kStep;
  static constexpr int tokens[] = {kTokens...};
  static_assert(valid_pair_order<kBodies, kStep>(tokens), "not a valid pair order");
};

// Pairs in j order, each pair's two stages together: the plain loop nest.
template <int kBodies, int kStep, class Indices>
struct JMajor;
template <int kBodies, int kStep, int... kIndex>
struct JMajor<kBodies, kStep, std::integer_sequence<int, kIndex...>> {
  using type = PairOrder<kBodies, kStep, (kIndex / 2 + (kIndex % 2) * kForceStage)...>;
};
template <int kBodies, int kStep>
using JMajorOrder = typename JMajor<kBodies, kStep, std::make_integer_sequence<int, 2 * kBodies * kStep>>::type;

// 4 bodies x 4 j-bodies in the order that ran fastest in fp32 on an H200, out of about 740 valid
// orders timed (random ones, then mutations of the best): 2.210e12 interactions/s at N = 1,048,576
// against 2.178e12 for JMajorOrder<4, 4> (docs/benchmarks.md). Same instructions, scheduled
// differently by the compiler. In fp64 it is slower than JMajorOrder<4, 4>. Pair p = 4 u + r; kF
// marks a force stage.
inline constexpr int kF = kForceStage;
using MeasuredOrder4x4 =
    PairOrder<4, 4, 1, 13, kF + 1, 5, kF + 5, 2, kF + 2, 9, kF + 9, kF + 13, 0, kF + 0, 6, kF + 6, 10, kF + 10, 4,
              kF + 4, 3, kF + 3, 7, kF + 7, 8, kF + 8, 12, kF + 12, 14, kF + 14, 11, kF + 11, 15, kF + 15>;

}  // namespace nbody::sim::kernels
