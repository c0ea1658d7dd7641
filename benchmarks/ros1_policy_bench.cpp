// Throughput of the real ROS 1 C++ ApproximateTime policy (Debian's libmessage-filters-dev,
// ros_comm noetic) on a trace written by bench_approximate_time.py: the same-run C++
// baseline of the fast path (issue 35). Only the policy's add() calls are timed, in CPU time
// of this process (one core), like the Python figure beside it.
//
//   ros1_policy_bench TRACE [REPETITIONS]
//
// TRACE, little-endian: "TAT1", u32 topic count (2..9), u32 queue_size, i64
// max_interval_duration ns, f64 age_penalty, u64 message count M; then M u32 topic indexes;
// then M i64 stamps (ns). Prints one line of key=value pairs: messages, sets (the sets the
// callback received in each repetition: a checksum), best_seconds, msgs_per_cpu_s.

#include <time.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/make_shared.hpp>
#include <ros/console.h>

#include "../examples/ros1_message_filters/ros1_policy.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the trace file is little-endian");

namespace {

using namespace ros1_policy;

struct Trace {
  std::uint32_t topics = 0;
  std::uint32_t queue_size = 0;
  std::int64_t max_interval_ns = 0;
  double age_penalty = 0;
  std::vector<std::uint32_t> topic;
  std::vector<Ptr> messages;  // built before any timing
};

template <typename T>
T take(const std::string& bytes, std::size_t& at) {
  if (at + sizeof(T) > bytes.size()) throw std::runtime_error("trace file is truncated");
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

Trace read_trace(const char* path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error(std::string("cannot open trace file ") + path);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.compare(0, 4, "TAT1") != 0) throw std::runtime_error("not a TAT1 trace file");
  std::size_t at = 4;
  Trace trace;
  trace.topics = take<std::uint32_t>(bytes, at);
  trace.queue_size = take<std::uint32_t>(bytes, at);
  trace.max_interval_ns = take<std::int64_t>(bytes, at);
  trace.age_penalty = take<double>(bytes, at);
  const auto count = take<std::uint64_t>(bytes, at);
  if (trace.topics < 2 || trace.topics > 9) throw std::runtime_error("ROS 1 takes 2 to 9 topics");
  if (trace.queue_size < 1) throw std::runtime_error("queue_size must be >= 1");
  if (count > (bytes.size() - at) / 12) throw std::runtime_error("trace file is truncated");
  trace.topic.reserve(count);
  trace.messages.reserve(count);
  for (std::uint64_t k = 0; k < count; ++k) {
    const auto topic = take<std::uint32_t>(bytes, at);
    if (topic >= trace.topics) throw std::runtime_error("topic index out of range");
    trace.topic.push_back(topic);
  }
  for (std::uint64_t k = 0; k < count; ++k) {
    const auto stamp = take<std::int64_t>(bytes, at);
    if (stamp < 0) throw std::runtime_error("stamps must be >= 0 (ROS 1 Time is unsigned)");
    auto message = boost::make_shared<Stamped>();
    message->stamp.fromNSec(static_cast<std::uint64_t>(stamp));  // throws from 2^32 s on
    trace.messages.push_back(message);
  }
  return trace;
}

double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// One repetition: a fresh synchronizer (upstream has no reset), all messages fed; returns
// the CPU seconds of the add() calls alone and the number of sets published.
template <int N>
std::pair<double, std::uint64_t> repetition(const Trace& trace) {
  Policy<N> policy(trace.queue_size);
  policy.setAgePenalty(trace.age_penalty);
  ros::Duration interval;
  interval.fromNSec(trace.max_interval_ns);  // throws outside ROS 1's 32-bit Duration
  policy.setMaxIntervalDuration(interval);
  std::uint64_t sets = 0;
  Callback<N> callback = [&sets](auto const&...) { ++sets; };
  auto sync = std::make_unique<Sync<N>>(policy);
  sync->registerCallback(callback);
  const std::size_t count = trace.messages.size();
  const double started = cpu_seconds();
  for (std::size_t k = 0; k < count; ++k) add_at<N>(*sync, trace.topic[k], trace.messages[k]);
  const double seconds = cpu_seconds() - started;
  return {seconds, sets};
}

template <int N>
int bench(const Trace& trace, int repetitions) {
  double best = 0;
  std::uint64_t sets = 0;
  for (int r = 0; r < repetitions; ++r) {
    const auto [seconds, published] = repetition<N>(trace);
    if (r > 0 && published != sets) throw std::runtime_error("repetitions published differently");
    sets = published;
    if (r == 0 || seconds < best) best = seconds;
  }
  const double count = static_cast<double>(trace.messages.size());
  std::cout << "messages=" << trace.messages.size() << " sets=" << sets
            << " best_seconds=" << best << " msgs_per_cpu_s=" << (best > 0 ? count / best : 0)
            << " repetitions=" << repetitions << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: ros1_policy_bench TRACE [REPETITIONS]\n";
    return 2;
  }
  try {
    const int repetitions = argc == 3 ? std::stoi(argv[2]) : 3;
    if (repetitions < 1) throw std::runtime_error("REPETITIONS must be >= 1");
    ros::Time::init();  // MessageEvent stamps its receipt time with ros::Time::now()
    if (ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Error))
      ros::console::notifyLoggerLevelsChanged();
    const Trace trace = read_trace(argv[1]);
    switch (trace.topics) {
      case 2: return bench<2>(trace, repetitions);
      case 3: return bench<3>(trace, repetitions);
      case 4: return bench<4>(trace, repetitions);
      case 5: return bench<5>(trace, repetitions);
      case 6: return bench<6>(trace, repetitions);
      case 7: return bench<7>(trace, repetitions);
      case 8: return bench<8>(trace, repetitions);
      default: return bench<9>(trace, repetitions);
    }
  } catch (const std::exception& error) {
    std::cerr << "ros1_policy_bench: " << error.what() << '\n';
    return 1;
  }
}
