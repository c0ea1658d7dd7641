// The ROS 1 C++ ApproximateTime policy instantiated for run-time topic counts: shared by the
// conformance adapter (adapter.cpp) and the throughput baseline
// (benchmarks/ros1_policy_bench.cpp), so both drive the very same instantiation.
#ifndef TIMEALIGN_ROS1_POLICY_H
#define TIMEALIGN_ROS1_POLICY_H

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <boost/function.hpp>
#include <boost/shared_ptr.hpp>
#include <message_filters/synchronizer.h>
#include <message_filters/sync_policies/approximate_time.h>
#include <ros/message_traits.h>
#include <ros/time.h>

// A header-less message: the policy reads the stamp through the TimeStamp trait, so no
// std_msgs/Header (and no serialization) is involved; `id` is the trace's message id.
struct Stamped {
  ros::Time stamp;
  std::string id;
};

namespace ros {
namespace message_traits {
template <>
struct HasHeader<Stamped> : public FalseType {};
template <>
struct TimeStamp<Stamped> {
  static ros::Time value(const Stamped& m) { return m.stamp; }
  static ros::Time* pointer(Stamped& m) { return &m.stamp; }
  static ros::Time const* pointer(const Stamped& m) { return &m.stamp; }
};
}  // namespace message_traits
}  // namespace ros

namespace ros1_policy {

using message_filters::NullType;
using Ptr = boost::shared_ptr<Stamped const>;
using NullPtr = boost::shared_ptr<NullType const>;

// The policy is a template over up to 9 message types: slot I holds Stamped for I < N.
template <int N, int I>
using Slot = std::conditional_t<(I < N), Stamped, NullType>;
template <int N>
using Policy = message_filters::sync_policies::ApproximateTime<
    Slot<N, 0>, Slot<N, 1>, Slot<N, 2>, Slot<N, 3>, Slot<N, 4>, Slot<N, 5>, Slot<N, 6>,
    Slot<N, 7>, Slot<N, 8>>;
template <int N>
using Sync = message_filters::Synchronizer<Policy<N>>;

// The callback takes all 9 parameters, unused ones typed NullType. Registering this
// boost::function directly works for every N, 9 included (Signal9 has no member-pointer
// overload for 9 and boost::bind stops at 8 bound arguments).
template <int N, int I>
using Arg = std::conditional_t<(I < N), const Ptr&, const NullPtr&>;
template <int N>
using Callback = boost::function<void(Arg<N, 0>, Arg<N, 1>, Arg<N, 2>, Arg<N, 3>, Arg<N, 4>,
                                      Arg<N, 5>, Arg<N, 6>, Arg<N, 7>, Arg<N, 8>)>;

// Feed message `msg` to slot `topic` (a run-time index) of a synchronizer with N slots.
template <int N, int I = 0>
void add_at(Sync<N>& sync, std::size_t topic, const Ptr& msg) {
  if constexpr (I < N) {
    if (topic == static_cast<std::size_t>(I)) {
      sync.template add<I>(msg);
    } else {
      add_at<N, I + 1>(sync, topic, msg);
    }
  } else {
    throw std::invalid_argument("topic index out of range");
  }
}

}  // namespace ros1_policy

#endif  // TIMEALIGN_ROS1_POLICY_H
