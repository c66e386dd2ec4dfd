/*!
 * lightgbm-cegb: native early-exit prediction with a QWYC plan ("Quit When You Can",
 * Wang, Gupta, You 2018) stored in the model file's header as qwyc_* lines
 * (docs/qwyc_model_format.md is the specification; budget_extras.QWYC writes the plan).
 *
 * When a model file carries a plan and prediction asks for early stopping
 * (pred_early_stop=true), GBDT evaluates the trees in file order and stops a row at the first
 * position whose partial score leaves the plan's thresholds, instead of LightGBM's margin rule.
 * Upstream LightGBM ignores the qwyc_* lines and predicts the full ensemble.
 */
#ifndef LIGHTGBM_SRC_BOOSTING_QWYC_QWYC_PLAN_HPP_
#define LIGHTGBM_SRC_BOOSTING_QWYC_QWYC_PLAN_HPP_

#include <LightGBM/utils/common.h>
#include <LightGBM/utils/log.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace LightGBM {

struct QWYCPlan {
  enum class Mode { kBinaryTwoSided, kBinaryNegativeOnly, kMulticlassMargin };
  Mode mode = Mode::kBinaryTwoSided;
  int num_positions = 0;
  double decision_threshold = 0.0;
  std::vector<double> eps_neg, eps_pos, eps_margin;

  /*! \brief The plan of a model file's header, or nullptr when it has none. */
  static std::unique_ptr<QWYCPlan> FromKeyVals(const std::unordered_map<std::string, std::string>& kv,
                                               int num_models, int num_tree_per_iteration) {
    auto version = kv.find("qwyc_version");
    if (version == kv.end()) return nullptr;
    if (Common::Trim(version->second) != "1") {
      Log::Fatal("qwyc_version: this LightGBM reads QWYC plan version 1, the model file has '%s'",
                 version->second.c_str());
    }
    std::unique_ptr<QWYCPlan> plan(new QWYCPlan());
    const std::string mode = Get(kv, "qwyc_mode");
    if (mode == "binary_two_sided") {
      plan->mode = Mode::kBinaryTwoSided;
    } else if (mode == "binary_negative_only") {
      plan->mode = Mode::kBinaryNegativeOnly;
    } else if (mode == "multiclass_margin") {
      plan->mode = Mode::kMulticlassMargin;
    } else {
      Log::Fatal("qwyc_mode: expected binary_two_sided, binary_negative_only or multiclass_margin, got '%s'",
                 mode.c_str());
    }
    plan->num_positions = std::atoi(Get(kv, "qwyc_num_positions").c_str());
    if (plan->num_positions <= 0 || plan->num_positions * num_tree_per_iteration != num_models) {
      Log::Fatal("qwyc_num_positions: %d positions x %d trees per iteration do not match the %d trees of the file",
                 plan->num_positions, num_tree_per_iteration, num_models);
    }
    plan->decision_threshold = ParseDouble(Get(kv, "qwyc_decision_threshold"), "qwyc_decision_threshold");
    if (plan->mode == Mode::kMulticlassMargin) {
      plan->eps_margin = Doubles(kv, "qwyc_eps_margin", plan->num_positions);
    } else {
      if (num_tree_per_iteration != 1) {
        Log::Fatal("qwyc_mode=%s needs one tree per iteration, the model has %d", mode.c_str(),
                   num_tree_per_iteration);
      }
      plan->eps_neg = Doubles(kv, "qwyc_eps_neg", plan->num_positions);
      plan->eps_pos = Doubles(kv, "qwyc_eps_pos", plan->num_positions);
      for (int r = 0; r < plan->num_positions; ++r) {
        if (!(plan->eps_neg[r] <= plan->decision_threshold && plan->decision_threshold <= plan->eps_pos[r])) {
          Log::Fatal("qwyc_eps_neg / qwyc_eps_pos at position %d (%g, %g) do not bracket qwyc_decision_threshold %g",
                     r, plan->eps_neg[r], plan->eps_pos[r], plan->decision_threshold);
        }
      }
    }
    return plan;
  }

  /*!
   * \brief Early-exit raw prediction: output[0..K-1] = partial scores at the stopping position;
   *        returns the number of trees evaluated. tree_output(t) is file tree t's output.
   */
  int Run(double* output, int num_tree_per_iteration, const std::function<double(int)>& tree_output) const {
    const int K = num_tree_per_iteration;
    std::fill(output, output + K, 0.0);
    std::vector<double> votes(mode == Mode::kMulticlassMargin ? K : 0);
    for (int r = 0; r < num_positions; ++r) {
      for (int c = 0; c < K; ++c) {
        output[c] += tree_output(r * K + c);
      }
      if (r == num_positions - 1) break;
      if (mode == Mode::kMulticlassMargin) {
        std::copy(output, output + K, votes.begin());
        std::partial_sort(votes.begin(), votes.begin() + 2, votes.end(), std::greater<double>());
        if (votes[0] - votes[1] > eps_margin[r]) return (r + 1) * K;
      } else if (output[0] > eps_pos[r] || output[0] < eps_neg[r]) {
        return r + 1;
      }
    }
    return num_positions * K;
  }

 private:
  static std::string Get(const std::unordered_map<std::string, std::string>& kv, const char* key) {
    auto it = kv.find(key);
    if (it == kv.end()) Log::Fatal("QWYC plan: the model file has qwyc_version but no %s line", key);
    return Common::Trim(it->second);
  }

  static double ParseDouble(const std::string& token, const char* key) {
    if (token == "inf") return std::numeric_limits<double>::infinity();
    if (token == "-inf") return -std::numeric_limits<double>::infinity();
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    if (token.empty() || *end != '\0' || std::isnan(v)) {
      Log::Fatal("%s: '%s' is not a number", key, token.c_str());
    }
    return v;
  }

  static std::vector<double> Doubles(const std::unordered_map<std::string, std::string>& kv, const char* key,
                                     int expected) {
    std::vector<double> out;
    for (const std::string& token : Common::Split(Get(kv, key).c_str(), ' ')) {
      if (!token.empty()) out.push_back(ParseDouble(token, key));
    }
    if (static_cast<int>(out.size()) != expected) {
      Log::Fatal("%s: %d values, qwyc_num_positions says %d", key, static_cast<int>(out.size()), expected);
    }
    return out;
  }
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_BOOSTING_QWYC_QWYC_PLAN_HPP_
