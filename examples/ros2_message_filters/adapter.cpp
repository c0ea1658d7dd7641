// Conformance adapter (spec/conformance.md) around the real ROS 2 C++ ApproximateTime policy,
// `message_filters::sync_policies::ApproximateTime`, compiled unmodified with rclcpp. It builds
// against either form of the policy (spec/approximate_time.md AT-D22):
// - the variadic `ApproximateTime<Ms...>` of `approximate_time.hpp` (rolling @361e42c and
//   later): 1 to 9 topics here;
// - the nine-slot `ApproximateTime<M0, M1, M2 = NullType, ...>` of `approximate_time.h`
//   (Humble @fc93cd9, Jazzy @d3eecd6): 2 to 9 topics, the unused slots NullType.
// CMakeLists.txt picks the form from the headers it finds (TIMEALIGN_MF_VARIADIC); without
// it, `__has_include` decides. See README.md next to this file (what was built where).
//
// It is also the C++ template for your own ApproximateTime port: replace `run` (one trace:
// build, feed, collect the callbacks) and keep the protocol loop at the bottom.
//
// Protocol: one JSON line per trace on stdin (a timealign.vector/1 object without
// "outputs"); one JSON line per trace on stdout: {"name": N, "outputs": [...]} with each
// output tagged with the index of the input that produced it, or {"name": N, "error": "..."}
// when the trace cannot run here at all. Flush after every line; diagnostics go to stderr.

#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "ros2_policy.h"

using json = nlohmann::json;

namespace {

using namespace ros2_policy;

// A callback argument: a message's id; a NullType slot (nine-slot policy) holds nothing.
void collect(json& ids, const Ptr& message) { ids.push_back(message->id); }
template <class T>
void collect(json&, const std::shared_ptr<T const>&) {}

std::size_t topic_count(const json& config) {
  const json& topics = config.at("topics");
  return topics.is_array() ? topics.size() : topics.get<std::size_t>();
}

// An input the adapter cannot hand to the policy (malformed, or not a valid rclcpp::Time):
// reported as an error output, and the synchronizer is left as it was.
json input_error(std::size_t index, const char* field, const std::string& why) {
  std::cerr << "input " << index << ": " << why << '\n';
  return {{"input", index}, {"kind", "error"}, {"field", field}, {"rule", "?"}};
}

// The policy built from the trace's config; throws std::invalid_argument to refuse it
// before the policy's own asserts could abort the process.
template <std::size_t N>
Policy<N> policy_from(const json& config) {
  const json& queue = config.at("queue_size");
  if (!queue.is_number_integer() || queue.get<std::int64_t>() < 1 ||
      queue.get<std::int64_t>() > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("queue_size must be an integer in [1, 2^32)");
  Policy<N> policy(queue.get<std::uint32_t>());
  const json penalty = config.value("age_penalty", json());
  if (!penalty.is_null()) {
    if (!penalty.is_number() || !(penalty.get<double>() >= 0))
      throw std::invalid_argument("age_penalty must be a number >= 0");
    policy.setAgePenalty(penalty.get<double>());
  }
  const json interval = config.value("max_interval_duration", json());
  if (!interval.is_null()) {
    if (!interval.is_number_integer() || interval.get<std::int64_t>() < 0)
      throw std::invalid_argument("max_interval_duration must be an integer >= 0");
    policy.setMaxIntervalDuration(rclcpp::Duration::from_nanoseconds(interval.get<std::int64_t>()));
  }
  const json bounds = config.value("inter_message_lower_bounds", json());
  if (!bounds.is_null()) {
    if (!bounds.is_array() || bounds.size() != N)
      throw std::invalid_argument("inter_message_lower_bounds must list one bound per topic");
    for (std::size_t i = 0; i < N; ++i) {
      if (!bounds[i].is_number_integer() || bounds[i].get<std::int64_t>() < 0)
        throw std::invalid_argument("a lower bound must be an integer >= 0");
      policy.setInterMessageLowerBound(
          static_cast<int>(i), rclcpp::Duration::from_nanoseconds(bounds[i].get<std::int64_t>()));
    }
  }
  return policy;
}

// One trace. Upstream has no reset, so every trace, and every run after an `end` input,
// gets a fresh synchronizer.
template <std::size_t N>
json run(const json& config, const json& inputs) {
  const Policy<N> configured = policy_from<N>(config);
  json outputs = json::array();
  std::size_t current = 0;  // the input being fed: callbacks run synchronously inside add()
  Callback<N> callback = [&](auto const&... messages) {
    json ids = json::array();
    (collect(ids, messages), ...);
    outputs.push_back({{"input", current}, {"kind", "published"}, {"ids", ids}});
  };
  auto sync = std::make_unique<Sync<N>>(configured);
  sync->registerCallback(callback);
  for (current = 0; current < inputs.size(); ++current) {
    const json& input = inputs[current];
    if (input.value("op", "") == "end") {
      // The end of a run (AT-R17): what upstream holds is simply abandoned (the pending
      // messages are not compared by the `upstream` profile); the next run starts afresh.
      sync = std::make_unique<Sync<N>>(configured);
      sync->registerCallback(callback);
      continue;
    }
    const json& topic = input.at("topic");
    const json& stamp = input.at("stamp");
    if (!topic.is_number_integer() || topic.get<std::int64_t>() < 0 ||
        topic.get<std::int64_t>() >= static_cast<std::int64_t>(N)) {
      outputs.push_back(input_error(current, "topic", "topic index out of range"));
      continue;
    }
    if (!stamp.is_number_integer() ||
        (stamp.is_number_unsigned() && stamp.get<std::uint64_t>() > INT64_MAX)) {
      outputs.push_back(input_error(current, "stamp", "stamp must be an int64 integer"));
      continue;
    }
    auto message = std::make_shared<Stamped>();
    message->id = input.at("id").get<std::string>();
    try {
      // rclcpp::Time throws std::runtime_error on a negative time point.
      message->stamp = rclcpp::Time(stamp.get<std::int64_t>(), RCL_ROS_TIME);
      add_at<N>(*sync, topic.get<std::size_t>(), message);
    } catch (const std::exception& error) {
      // rclcpp::Duration arithmetic overflowed inside add() (std::overflow_error): upstream
      // throws to the caller and keeps the synchronizer as the throw left it. So does this.
      outputs.push_back(input_error(current, "stamp", error.what()));
    }
  }
  return outputs;
}

json answer(const json& trace) {
  json reply = {{"name", trace.at("name")}};
  try {
    const json& config = trace.at("config");
    const json arithmetic = config.value("arithmetic", json());
    if (!arithmetic.is_null() && arithmetic != "ros2")
      throw std::invalid_argument("this is ROS 2: the config must use the ros2 arithmetic");
    const json& inputs = trace.at("inputs");
    json outputs;
    const std::size_t topics = topic_count(config);
    if (topics < kMinTopics || topics > 9) throw std::invalid_argument(kTopicRange);
    switch (topics) {
#if TIMEALIGN_MF_VARIADIC
      case 1: outputs = run<1>(config, inputs); break;
#endif
      case 2: outputs = run<2>(config, inputs); break;
      case 3: outputs = run<3>(config, inputs); break;
      case 4: outputs = run<4>(config, inputs); break;
      case 5: outputs = run<5>(config, inputs); break;
      case 6: outputs = run<6>(config, inputs); break;
      case 7: outputs = run<7>(config, inputs); break;
      case 8: outputs = run<8>(config, inputs); break;
      case 9: outputs = run<9>(config, inputs); break;
      default: throw std::invalid_argument(kTopicRange);
    }
    reply["outputs"] = outputs;
  } catch (const std::exception& error) {  // a config this build cannot run: refuse the trace
    reply["error"] = error.what();
  }
  return reply;
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json reply;
    try {
      reply = answer(json::parse(line));
    } catch (const std::exception& error) {  // not even a trace: answer without a name
      reply = {{"name", nullptr}, {"error", error.what()}};
    }
    std::cout << reply.dump() << '\n' << std::flush;
  }
  return 0;
}
