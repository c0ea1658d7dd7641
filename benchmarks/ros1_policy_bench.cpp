// Throughput of the real ROS 1 C++ ApproximateTime policy (Debian's libmessage-filters-dev,
// ros_comm noetic) on a trace written by bench_approximate_time.py: a same-run C++ baseline
// of the fast path (issue 35). Only the policy's add() calls are timed, in CPU time of this
// process (one core), like the Python figure beside it.
//
//   ros1_policy_bench TRACE [REPETITIONS]
//
// The trace file and the one-line report: policy_bench.h (shared with ros2_policy_bench.cpp).

#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include <boost/make_shared.hpp>
#include <ros/console.h>

#include "../examples/ros1_message_filters/ros1_policy.h"
#include "policy_bench.h"

namespace {

using namespace ros1_policy;

// Every message, built before any timing (ROS 1 Time is unsigned 32-bit seconds: a stamp
// outside it is refused here, not inside the timed loop).
std::vector<Ptr> messages_of(const policy_bench::TraceFile& trace) {
  std::vector<Ptr> messages;
  messages.reserve(trace.stamp.size());
  for (const std::int64_t stamp : trace.stamp) {
    if (stamp < 0) throw std::runtime_error("stamps must be >= 0 (ROS 1 Time is unsigned)");
    auto message = boost::make_shared<Stamped>();
    message->stamp.fromNSec(static_cast<std::uint64_t>(stamp));  // throws from 2^32 s on
    messages.push_back(message);
  }
  return messages;
}

// The policy as the trace configures it (ROS 1's Duration is signed 32-bit seconds).
template <int N>
Policy<N> policy_of(const policy_bench::TraceFile& trace) {
  Policy<N> policy(trace.queue_size);
  policy.setAgePenalty(trace.age_penalty);
  ros::Duration interval;
  interval.fromNSec(trace.max_interval_ns);  // throws outside ROS 1's 32-bit Duration
  policy.setMaxIntervalDuration(interval);
  return policy;
}

template <int N>
int bench(const policy_bench::TraceFile& trace, int repetitions) {
  return policy_bench::run<Sync<N>, Callback<N>>(
      policy_of<N>(trace), trace, messages_of(trace), repetitions,
      [](Sync<N>& sync, std::size_t topic, const Ptr& message) { add_at<N>(sync, topic, message); });
}

}  // namespace

int main(int argc, char** argv) {
  return policy_bench::guarded("ros1_policy_bench", [&] {
    const int repetitions = policy_bench::repetitions_from(argc, argv, "ros1_policy_bench");
    ros::Time::init();  // MessageEvent stamps its receipt time with ros::Time::now()
    if (ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Error))
      ros::console::notifyLoggerLevelsChanged();
    const auto trace = policy_bench::read_trace(argv[1], 2, 9);
    return policy_bench::dispatch<2, 9>(trace.topics, [&](auto topics) {
      return bench<static_cast<int>(decltype(topics)::value)>(trace, repetitions);
    });
  });
}
