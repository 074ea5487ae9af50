#include "text/output/stop_strings.h"

#include <algorithm>
#include <deque>

namespace duet {

Status validate_stop_strings(const std::vector<std::string>& stops, StopStringLimits limits) {
  if (stops.size() > limits.max_count)
    return Status::error("too many stop strings (" + std::to_string(stops.size()) + "; at most " +
                         std::to_string(limits.max_count) + ")");
  for (const std::string& s : stops) {
    if (s.empty()) return Status::error("stop strings must not be empty");
    if (s.size() > limits.max_bytes)
      return Status::error("a stop string is longer than " + std::to_string(limits.max_bytes) +
                           " bytes");
  }
  return Status::ok();
}

StopStringMatcher::StopStringMatcher(const std::vector<std::string>& stops) {
  nodes_.emplace_back();  // the root: the empty prefix
  // The trie of all stop strings.
  for (size_t i = 0; i < stops.size(); ++i) {
    const std::string& s = stops[i];
    if (s.empty()) continue;
    int node = 0;
    for (char c : s) {
      const auto byte = static_cast<uint8_t>(c);
      int next = child(node, byte);
      if (next == 0) {
        next = static_cast<int>(nodes_.size());
        nodes_.push_back(Node{.depth = nodes_[node].depth + 1});
        edges_.emplace((static_cast<uint64_t>(node) << 8) | byte, next);
      }
      node = next;
    }
    if (nodes_[node].match_index < 0) {  // a duplicate keeps the first index
      nodes_[node].match_len = nodes_[node].depth;
      nodes_[node].match_index = static_cast<int>(i);
    }
  }
  // Failure links, breadth first: fail(v) is the longest proper suffix of v's string that is
  // also a prefix of some stop string. A node that ends no stop string of its own inherits the
  // longest one that ends at its failure node (the earliest-starting match at that position).
  std::vector<std::vector<std::pair<uint8_t, int>>> children(nodes_.size());
  for (const auto& [key, to] : edges_)
    children[key >> 8].emplace_back(static_cast<uint8_t>(key & 0xFF), to);
  std::deque<int> queue;
  for (const auto& [byte, to] : children[0]) queue.push_back(to);
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (const auto& [byte, v] : children[u]) {
      nodes_[v].fail = u == 0 ? 0 : step(nodes_[u].fail, byte);
      if (nodes_[v].match_index < 0) {
        nodes_[v].match_len = nodes_[nodes_[v].fail].match_len;
        nodes_[v].match_index = nodes_[nodes_[v].fail].match_index;
      }
      queue.push_back(v);
    }
  }
}

int StopStringMatcher::child(int node, uint8_t byte) const {
  const auto it = edges_.find((static_cast<uint64_t>(node) << 8) | byte);
  return it == edges_.end() ? 0 : it->second;
}

int StopStringMatcher::step(int node, uint8_t byte) const {
  while (true) {
    if (const int next = child(node, byte); next != 0) return next;
    if (node == 0) return 0;
    node = nodes_[node].fail;
  }
}

StopResult StopStringMatcher::stop_now() {
  StopResult r;
  r.text = pending_.substr(0, static_cast<size_t>(best_start_ - released_));
  r.stopped = true;
  r.stop_index = best_index_;
  pending_.clear();
  stopped_ = true;
  return r;
}

StopResult StopStringMatcher::push(std::string_view piece) {
  if (stopped_) return StopResult{.text = {}, .stopped = true, .stop_index = best_index_};
  pending_.append(piece);
  for (char c : piece) {
    state_ = step(state_, static_cast<uint8_t>(c));
    ++consumed_;
    const Node& n = nodes_[state_];
    if (n.match_len > 0 && consumed_ - n.match_len < best_start_) {
      best_start_ = consumed_ - n.match_len;
      best_index_ = n.match_index;
    }
    // Final once no partial match that started earlier is still alive: the longest alive one
    // is the current node's string, starting at consumed_ - depth.
    if (best_start_ <= consumed_ - n.depth) return stop_now();
  }
  const uint64_t safe = std::min<uint64_t>(best_start_, consumed_ - nodes_[state_].depth);
  StopResult r;
  const auto n = static_cast<size_t>(safe - released_);
  r.text = pending_.substr(0, n);
  pending_.erase(0, n);
  released_ = safe;
  return r;
}

StopResult StopStringMatcher::finish() {
  if (stopped_) return StopResult{.text = {}, .stopped = true, .stop_index = best_index_};
  if (best_start_ != UINT64_MAX) return stop_now();
  StopResult r;
  r.text = std::move(pending_);
  pending_.clear();
  released_ = consumed_;
  state_ = 0;
  return r;
}

}  // namespace duet
