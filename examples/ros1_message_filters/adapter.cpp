// Conformance adapter (spec/conformance.md) around the real ROS 1 C++ ApproximateTime policy,
// `message_filters::sync_policies::ApproximateTime` from Debian's libmessage-filters-dev
// (ros_comm noetic, 1.15.15), compiled unmodified. See README.md next to this file.
//
// It is also the C++ template for your own ApproximateTime port: replace `Run` (one trace:
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
#include <vector>

#include <boost/make_shared.hpp>
#include <nlohmann/json.hpp>
#include <ros/console.h>
#include <ros/time.h>

#include "ros1_policy.h"

using json = nlohmann::json;

namespace {

using namespace ros1_policy;  // Stamped, Ptr, NullPtr, Policy<N>, Sync<N>, Callback<N>, add_at

void collect(json& ids, const Ptr& m) { ids.push_back(m->id); }
void collect(json&, const NullPtr&) {}

std::size_t topic_count(const json& config) {
  const json& topics = config.at("topics");
  return topics.is_array() ? topics.size() : topics.get<std::size_t>();
}

// A ROS 1 Duration from ns; throws std::runtime_error outside the 32-bit range.
ros::Duration duration(const json& value) {
  ros::Duration d;
  d.fromNSec(value.get<std::int64_t>());
  return d;
}

// An input the adapter cannot hand to the policy (malformed, or not representable as a
// ROS 1 Time): reported as an error output, and the synchronizer is left as it was.
json input_error(std::size_t index, const char* field, const std::string& why) {
  std::cerr << "input " << index << ": " << why << '\n';
  return {{"input", index}, {"kind", "error"}, {"field", field}, {"rule", "?"}};
}

// The policy built from the trace's config; throws std::invalid_argument to refuse it
// before the policy's own ROS_ASSERTs could abort the process.
template <int N>
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
    policy.setMaxIntervalDuration(duration(interval));
  }
  const json bounds = config.value("inter_message_lower_bounds", json());
  if (!bounds.is_null()) {
    if (!bounds.is_array() || bounds.size() != static_cast<std::size_t>(N))
      throw std::invalid_argument("inter_message_lower_bounds must list one bound per topic");
    for (int i = 0; i < N; ++i) {
      if (!bounds[i].is_number_integer() || bounds[i].get<std::int64_t>() < 0)
        throw std::invalid_argument("a lower bound must be an integer >= 0");
      policy.setInterMessageLowerBound(i, duration(bounds[i]));
    }
  }
  return policy;
}

// One trace. Upstream has no reset, so every trace, and every run after an `end` input,
// gets a fresh synchronizer.
template <int N>
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
        topic.get<std::int64_t>() >= N) {
      outputs.push_back(input_error(current, "topic", "topic index out of range"));
      continue;
    }
    if (!stamp.is_number_integer() || stamp.get<std::int64_t>() < 0) {
      outputs.push_back(input_error(current, "stamp", "stamp must be an integer >= 0"));
      continue;
    }
    auto message = boost::make_shared<Stamped>();
    message->id = input.at("id").get<std::string>();
    try {
      message->stamp.fromNSec(stamp.get<std::uint64_t>());  // throws from 2^32 s on
    } catch (const std::exception& error) {
      outputs.push_back(input_error(current, "stamp", error.what()));
      continue;
    }
    try {
      add_at<N>(*sync, topic.get<std::size_t>(), message);
    } catch (const std::exception& error) {
      // ROS 1 time arithmetic left its 32-bit range inside add(): upstream throws to the
      // subscriber and keeps the synchronizer as the throw left it. So does this adapter.
      outputs.push_back(input_error(current, "stamp", error.what()));
    }
  }
  return outputs;
}

json answer(const json& trace) {
  json reply = {{"name", trace.at("name")}};
  try {
    const json& config = trace.at("config");
    if (config.value("arithmetic", json("ros2")) != "ros1")
      throw std::invalid_argument("this is ROS 1: the config must use \"arithmetic\": \"ros1\"");
    json outputs;
    switch (topic_count(config)) {
      case 2: outputs = run<2>(config, trace.at("inputs")); break;
      case 3: outputs = run<3>(config, trace.at("inputs")); break;
      case 4: outputs = run<4>(config, trace.at("inputs")); break;
      case 5: outputs = run<5>(config, trace.at("inputs")); break;
      case 6: outputs = run<6>(config, trace.at("inputs")); break;
      case 7: outputs = run<7>(config, trace.at("inputs")); break;
      case 8: outputs = run<8>(config, trace.at("inputs")); break;
      case 9: outputs = run<9>(config, trace.at("inputs")); break;
      default: throw std::invalid_argument("ROS 1 synchronizes 2 to 9 topics");
    }
    reply["outputs"] = outputs;
  } catch (const std::exception& error) {  // a config this build cannot run: refuse the trace
    reply["error"] = error.what();
  }
  return reply;
}

}  // namespace

int main() {
  ros::Time::init();  // MessageEvent stamps its receipt time with ros::Time::now()
  // The policy's warnings (AT-R4: out of order, closer than the bound) are not compared by
  // the `upstream` profile; at tens of thousands of traces they only slow the run down.
  if (ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Error))
    ros::console::notifyLoggerLevelsChanged();
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
