// Throughput of the real ROS 2 C++ ApproximateTime policy (ros2/message_filters'
// `message_filters::sync_policies::ApproximateTime` with rclcpp's `Time` and `Duration`) on a
// trace written by bench_approximate_time.py: issue 35's baseline for target 1, run in the
// same run as the fast path. Only the policy's add() calls are timed, in CPU time of this
// process (one core), like the Python figure beside it.
//
//   ros2_policy_bench TRACE [REPETITIONS]
//
// The trace file and the one-line report: policy_bench.h (shared with ros1_policy_bench.cpp).
// Built by `make build/ros2_policy_bench` from upstream's unmodified sources at the pinned
// commits with benchmarks/ros2_standin/ for the rest of ROS 2, or against a ROS 2
// installation (benchmarks/README.md, "The ROS 2 C++ baseline in the same run").

#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../examples/ros2_message_filters/ros2_policy.h"
#include "policy_bench.h"

namespace {

using namespace ros2_policy;

// Every message, built before any timing: a header-less message whose TimeStamp trait gives
// rclcpp::Time(ns, RCL_ROS_TIME), as the conformance adapter feeds it (rclcpp refuses a
// negative stamp here, not inside the timed loop).
std::vector<Ptr> messages_of(const policy_bench::TraceFile& trace) {
  std::vector<Ptr> messages;
  messages.reserve(trace.stamp.size());
  for (const std::int64_t stamp : trace.stamp) {
    auto message = std::make_shared<Stamped>();
    message->stamp = rclcpp::Time(stamp, RCL_ROS_TIME);
    messages.push_back(message);
  }
  return messages;
}

// The policy as the trace configures it.
template <std::size_t N>
Policy<N> policy_of(const policy_bench::TraceFile& trace) {
  Policy<N> policy(trace.queue_size);
  policy.setAgePenalty(trace.age_penalty);
  policy.setMaxIntervalDuration(rclcpp::Duration::from_nanoseconds(trace.max_interval_ns));
  return policy;
}

template <std::size_t N>
int bench(const policy_bench::TraceFile& trace, int repetitions) {
  return policy_bench::run<Sync<N>, Callback<N>>(
      policy_of<N>(trace), trace, messages_of(trace), repetitions,
      [](Sync<N>& sync, std::size_t topic, const Ptr& message) { add_at<N>(sync, topic, message); });
}

}  // namespace

int main(int argc, char** argv) {
  return policy_bench::guarded("ros2_policy_bench", [&] {
    const int repetitions = policy_bench::repetitions_from(argc, argv, "ros2_policy_bench");
    const auto trace = policy_bench::read_trace(argv[1], kMinTopics, 9);
    return policy_bench::dispatch<kMinTopics, 9>(trace.topics, [&](auto topics) {
      return bench<decltype(topics)::value>(trace, repetitions);
    });
  });
}
