// The ROS 2 C++ ApproximateTime policy instantiated for run-time topic counts: shared by the
// conformance adapter (adapter.cpp) and the throughput baseline
// (benchmarks/ros2_policy_bench.cpp), so both drive the very same instantiation. It takes
// either form of the policy (spec/approximate_time.md AT-D22): the variadic
// `ApproximateTime<Ms...>` of `approximate_time.hpp` (rolling @361e42c and later), or the
// nine-slot `ApproximateTime<M0, M1, M2 = NullType, ...>` of `approximate_time.h` (Humble,
// Jazzy); TIMEALIGN_MF_VARIADIC says which, else `__has_include` decides.
#ifndef TIMEALIGN_ROS2_POLICY_H
#define TIMEALIGN_ROS2_POLICY_H

#ifndef TIMEALIGN_MF_VARIADIC
#if __has_include(<message_filters/sync_policies/approximate_time.hpp>)
#define TIMEALIGN_MF_VARIADIC 1
#else
#define TIMEALIGN_MF_VARIADIC 0
#endif
#endif

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#if TIMEALIGN_MF_VARIADIC
#include <message_filters/message_traits.hpp>
#include <message_filters/sync_policies/approximate_time.hpp>
#include <message_filters/synchronizer.hpp>
#else
#include <message_filters/message_traits.h>
#include <message_filters/null_types.h>
#include <message_filters/sync_policies/approximate_time.h>
#include <message_filters/synchronizer.h>
#endif
#include <rclcpp/duration.hpp>
#include <rclcpp/time.hpp>

// A header-less message, as in upstream's own tests: the policy reads the stamp through the
// TimeStamp trait. (A std_msgs Header would cap stamps at int32 seconds.)
struct Stamped {
  rclcpp::Time stamp;
  std::string id;
};

namespace message_filters {
namespace message_traits {
template <>
struct TimeStamp<Stamped> {
  static rclcpp::Time value(const Stamped& m) { return m.stamp; }
};
}  // namespace message_traits
}  // namespace message_filters

namespace ros2_policy {

using Ptr = std::shared_ptr<Stamped const>;

#if TIMEALIGN_MF_VARIADIC
// The variadic policy: the topic count is a compile-time constant, N copies of Stamped.
constexpr std::size_t kMinTopics = 1;
constexpr const char* kTopicRange = "this build (variadic approximate_time.hpp) synchronizes 1 to 9 topics";
template <std::size_t N>
using Slots = std::make_index_sequence<N>;
template <std::size_t I, std::size_t N>
using Slot = Stamped;
#else
// The nine-slot policy: slots 0..N-1 are Stamped, the rest NullType; M0 and M1 are
// mandatory, so at least two topics.
constexpr std::size_t kMinTopics = 2;
constexpr const char* kTopicRange =
    "this build (nine-slot approximate_time.h, ROS 2 Humble/Jazzy) synchronizes 2 to 9 topics";
template <std::size_t N>
using Slots = std::make_index_sequence<9>;
template <std::size_t I, std::size_t N>
using Slot = std::conditional_t<(I < N), Stamped, message_filters::NullType>;
#endif
template <std::size_t N, class Indices>
struct Types;
template <std::size_t N, std::size_t... Is>
struct Types<N, std::index_sequence<Is...>> {
  using Policy = message_filters::sync_policies::ApproximateTime<Slot<Is, N>...>;
  using Callback = std::function<void(const std::shared_ptr<Slot<Is, N> const>&...)>;
};
template <std::size_t N>
using Policy = typename Types<N, Slots<N>>::Policy;
template <std::size_t N>
using Callback = typename Types<N, Slots<N>>::Callback;
template <std::size_t N>
using Sync = message_filters::Synchronizer<Policy<N>>;

// Feed message `msg` to slot `topic` (a run-time index) of a synchronizer with N slots.
template <std::size_t N, std::size_t I = 0>
void add_at(Sync<N>& sync, std::size_t topic, const Ptr& msg) {
  if constexpr (I < N) {
    if (topic == I) {
      sync.template add<static_cast<int>(I)>(msg);
    } else {
      add_at<N, I + 1>(sync, topic, msg);
    }
  } else {
    throw std::invalid_argument("topic index out of range");
  }
}

}  // namespace ros2_policy

#endif  // TIMEALIGN_ROS2_POLICY_H
