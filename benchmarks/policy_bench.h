// What the two same-run C++ baselines of bench_approximate_time.py share
// (ros1_policy_bench.cpp, ros2_policy_bench.cpp): the trace file the script writes, the CPU
// clock, and the repetitions with their one-line report, so both programs read the same
// input and are timed and reported the same way (issue 35: each target measured in one run
// with its baseline).
//
// TRACE, little-endian: "TAT1", u32 topic count, u32 queue_size, i64 max_interval_duration
// ns, f64 age_penalty, u64 message count M; then M u32 topic indexes; then M i64 stamps
// (ns). The report: one line of key=value pairs: messages, sets (the sets the callback
// received in each repetition: a checksum), best_seconds, msgs_per_cpu_s, repetitions.
#ifndef TIMEALIGN_POLICY_BENCH_H
#define TIMEALIGN_POLICY_BENCH_H

#include <time.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the trace file is little-endian");

namespace policy_bench {

struct TraceFile {
  std::uint32_t topics = 0;
  std::uint32_t queue_size = 0;
  std::int64_t max_interval_ns = 0;
  double age_penalty = 0;
  std::vector<std::uint32_t> topic;
  std::vector<std::int64_t> stamp;
};

template <typename T>
T take(const std::string& bytes, std::size_t& at) {
  if (at + sizeof(T) > bytes.size()) throw std::runtime_error("trace file is truncated");
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

// The trace at `path`, refused with a reason when malformed or when its topic count is
// outside what the program's policy takes.
inline TraceFile read_trace(const char* path, std::uint32_t min_topics, std::uint32_t max_topics) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error(std::string("cannot open trace file ") + path);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.compare(0, 4, "TAT1") != 0) throw std::runtime_error("not a TAT1 trace file");
  std::size_t at = 4;
  TraceFile trace;
  trace.topics = take<std::uint32_t>(bytes, at);
  trace.queue_size = take<std::uint32_t>(bytes, at);
  trace.max_interval_ns = take<std::int64_t>(bytes, at);
  trace.age_penalty = take<double>(bytes, at);
  const auto count = take<std::uint64_t>(bytes, at);
  if (trace.topics < min_topics || trace.topics > max_topics)
    throw std::runtime_error("this policy takes " + std::to_string(min_topics) + " to " +
                             std::to_string(max_topics) + " topics");
  if (trace.queue_size < 1) throw std::runtime_error("queue_size must be >= 1");
  if (!(trace.age_penalty >= 0)) throw std::runtime_error("age_penalty must be >= 0");
  if (trace.max_interval_ns < 0) throw std::runtime_error("max_interval_duration must be >= 0");
  if (count > (bytes.size() - at) / 12) throw std::runtime_error("trace file is truncated");
  trace.topic.reserve(count);
  trace.stamp.reserve(count);
  for (std::uint64_t k = 0; k < count; ++k) {
    const auto topic = take<std::uint32_t>(bytes, at);
    if (topic >= trace.topics) throw std::runtime_error("topic index out of range");
    trace.topic.push_back(topic);
  }
  for (std::uint64_t k = 0; k < count; ++k) trace.stamp.push_back(take<std::int64_t>(bytes, at));
  return trace;
}

// CPU seconds of this process: the figure for one core, like the Python side's
// process_time(), and less sensitive than wall time to other jobs on a shared machine.
inline double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// One repetition: a fresh synchronizer from the configured `policy` (upstream has no
// reset), every message fed through `add(sync, topic, message)`; the CPU seconds of those
// calls alone and the sets the callback received.
template <class Sync, class Callback, class Policy, class Message, class Add>
std::pair<double, std::uint64_t> repetition(const Policy& policy, const TraceFile& trace,
                                            const std::vector<Message>& messages, Add add) {
  std::uint64_t sets = 0;
  Callback callback = [&sets](auto const&...) { ++sets; };
  auto sync = std::make_unique<Sync>(policy);
  sync->registerCallback(callback);
  const std::size_t count = messages.size();
  const double started = cpu_seconds();
  for (std::size_t k = 0; k < count; ++k) add(*sync, trace.topic[k], messages[k]);
  const double seconds = cpu_seconds() - started;
  return {seconds, sets};
}

// Runs `repetition()` (returning the CPU seconds of its add() calls and the sets published)
// `repetitions` times and prints the report with the best time; every repetition must
// publish the same sets (a fresh synchronizer each time), else it is an error.
template <class Repetition>
int report(std::size_t messages, int repetitions, Repetition repetition) {
  double best = 0;
  std::uint64_t sets = 0;
  for (int r = 0; r < repetitions; ++r) {
    const std::pair<double, std::uint64_t> run = repetition();
    if (r > 0 && run.second != sets) throw std::runtime_error("repetitions published differently");
    sets = run.second;
    if (r == 0 || run.first < best) best = run.first;
  }
  const double count = static_cast<double>(messages);
  std::cout << "messages=" << messages << " sets=" << sets << " best_seconds=" << best
            << " msgs_per_cpu_s=" << (best > 0 ? count / best : 0)
            << " repetitions=" << repetitions << '\n';
  return 0;
}

// The whole benchmark of one configured policy: `repetitions` repetitions, reported.
template <class Sync, class Callback, class Policy, class Message, class Add>
int run(const Policy& policy, const TraceFile& trace, const std::vector<Message>& messages,
        int repetitions, Add add) {
  return report(messages.size(), repetitions,
                [&] { return repetition<Sync, Callback>(policy, trace, messages, add); });
}

// `bench(std::integral_constant<std::size_t, N>())` for the run-time topic count N in
// [Low, High]: the policy fixes its topic count at compile time.
template <std::size_t Low, std::size_t High, class Bench>
int dispatch(std::size_t topics, Bench bench) {
  if constexpr (Low > High) {
    throw std::runtime_error("topic count out of range");
  } else {
    if (topics == Low) return bench(std::integral_constant<std::size_t, Low>());
    return dispatch<Low + 1, High>(topics, bench);
  }
}

// REPETITIONS from the command line `PROGRAM TRACE [REPETITIONS]` (3 when absent), or a
// usage error.
inline int repetitions_from(int argc, char** argv, const char* program) {
  if (argc < 2 || argc > 3)
    throw std::invalid_argument(std::string("usage: ") + program + " TRACE [REPETITIONS]");
  const int repetitions = argc == 3 ? std::stoi(argv[2]) : 3;
  if (repetitions < 1) throw std::invalid_argument("REPETITIONS must be >= 1");
  return repetitions;
}

// main()'s body run with every error reported on stderr as `program: what` (exit status 1)
// rather than as an uncaught exception.
template <class Body>
int guarded(const char* program, Body body) {
  try {
    return body();
  } catch (const std::exception& error) {
    std::cerr << program << ": " << error.what() << '\n';
    return 1;
  }
}

}  // namespace policy_bench

#endif  // TIMEALIGN_POLICY_BENCH_H
