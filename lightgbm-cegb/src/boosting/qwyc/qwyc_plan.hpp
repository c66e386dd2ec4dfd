/*!
 * Copyright (c) 2026 The lightgbm-cegb authors.
 * Licensed under the MIT License (as LightGBM; see the LICENSE file in the root of the patched
 * LightGBM source tree).
 *
 * lightgbm-cegb: native early-exit prediction with a QWYC plan ("Quit When You Can",
 * Wang, Gupta, You 2018) stored in the model file's header as qwyc_* lines
 * (docs/qwyc_model_format.md is the specification; budget_extras.QWYC writes the plan).
 *
 * When a model file carries a plan and prediction asks for early stopping
 * (pred_early_stop=true), GBDT evaluates the trees in file order and stops a row at the first
 * position whose partial score leaves the plan's thresholds, instead of LightGBM's margin rule.
 * A version-2 plan (binary) also carries per-position score maps: an exited row returns its
 * partial score mapped to the expected full score (QWYC scores="calibrated").
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
#include <iterator>
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
  /*! \brief version 2: knots of position r are score_x/score_y[score_offsets[r] .. score_offsets[r + 1]) */
  std::vector<int> score_offsets;
  std::vector<double> score_x, score_y;

  /*!
   * \brief The plan of a model file's header, or nullptr when it has none.
   *
   * Every field is validated against the model (docs/qwyc_model_format.md, "What a valid plan
   * is"); anything else is a Fatal naming the qwyc_* key, what was expected and what came.
   */
  static std::unique_ptr<QWYCPlan> FromKeyVals(const std::unordered_map<std::string, std::string>& kv,
                                               int num_models, int num_tree_per_iteration) {
    auto version = kv.find("qwyc_version");
    if (version == kv.end()) {
      for (const auto& entry : kv) {
        if (entry.first.compare(0, 5, "qwyc_") == 0) {
          Log::Fatal("QWYC plan: the model file has %s but no qwyc_version line", entry.first.c_str());
        }
      }
      return nullptr;
    }
    const std::string version_value = Common::Trim(version->second);
    if (version_value != "1" && version_value != "2") {
      Log::Fatal("qwyc_version: this LightGBM reads QWYC plan versions 1 and 2, the model file has '%s'",
                 version->second.c_str());
    }
    const bool has_maps = version_value == "2";
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
    const bool multiclass = plan->mode == Mode::kMulticlassMargin;
    if (has_maps && multiclass) {
      Log::Fatal("qwyc_version: version 2 (score maps) is for the binary modes, qwyc_mode=multiclass_margin is "
                 "version 1");
    }
    // keys: the plan's own, none of the other mode's, no unknown qwyc_* key
    const char* const kCommon[] = {"qwyc_version", "qwyc_mode", "qwyc_num_positions", "qwyc_decision_threshold",
                                   "qwyc_alpha", "qwyc_original_iteration"};
    for (const auto& entry : kv) {
      const std::string& key = entry.first;
      if (key.compare(0, 5, "qwyc_") != 0) continue;
      bool known = std::find(std::begin(kCommon), std::end(kCommon), key) != std::end(kCommon);
      if (key == "qwyc_eps_margin" || key == "qwyc_eps_neg" || key == "qwyc_eps_pos") {
        known = true;
        if ((key == "qwyc_eps_margin") != multiclass) {
          Log::Fatal("%s: not a key of qwyc_mode=%s (expected %s), but the model file has it", key.c_str(),
                     mode.c_str(), multiclass ? "qwyc_eps_margin" : "qwyc_eps_neg and qwyc_eps_pos");
        }
      }
      if (has_maps && (key == "qwyc_score_offsets" || key == "qwyc_score_x" || key == "qwyc_score_y")) {
        known = true;
      }
      if (!known) {
        Log::Fatal("%s: not a key of QWYC plan version %s (expected qwyc_version, qwyc_mode, qwyc_num_positions, "
                   "qwyc_decision_threshold, qwyc_alpha, qwyc_eps_neg, qwyc_eps_pos, qwyc_eps_margin, "
                   "qwyc_original_iteration%s)", key.c_str(), version_value.c_str(),
                   has_maps ? ", qwyc_score_offsets, qwyc_score_x, qwyc_score_y" : "");
      }
    }
    // mode against the model: multiclass_margin needs >= 2 trees per iteration, binary modes 1
    if (multiclass && num_tree_per_iteration < 2) {
      Log::Fatal("qwyc_mode: multiclass_margin needs a model with num_tree_per_iteration >= 2 (a multiclass "
                 "model), this model has num_tree_per_iteration=%d", num_tree_per_iteration);
    }
    if (!multiclass && num_tree_per_iteration != 1) {
      Log::Fatal("qwyc_mode: %s needs a model with num_tree_per_iteration=1, this model has "
                 "num_tree_per_iteration=%d (use multiclass_margin)", mode.c_str(), num_tree_per_iteration);
    }
    const std::string positions = Get(kv, "qwyc_num_positions");
    const long long R = ParseInt(positions, "qwyc_num_positions");
    if (R <= 0 || R * num_tree_per_iteration != static_cast<long long>(num_models)) {
      Log::Fatal("qwyc_num_positions: expected the model's number of iterations, %d (%d trees / %d per "
                 "iteration), got '%s'", num_models / std::max(num_tree_per_iteration, 1), num_models,
                 num_tree_per_iteration, positions.c_str());
    }
    plan->num_positions = static_cast<int>(R);
    plan->decision_threshold = ParseDouble(Get(kv, "qwyc_decision_threshold"), "qwyc_decision_threshold");
    if (!std::isfinite(plan->decision_threshold)) {
      Log::Fatal("qwyc_decision_threshold: expected a finite number, got %g", plan->decision_threshold);
    }
    if (kv.count("qwyc_alpha")) {  // informational; any double, nan included
      ParseDouble(Common::Trim(kv.at("qwyc_alpha")), "qwyc_alpha", /*allow_nan=*/true);
    }
    // qwyc_original_iteration: a permutation of 0..R-1
    const std::vector<std::string> order = Tokens(kv, "qwyc_original_iteration", plan->num_positions);
    std::vector<bool> seen(plan->num_positions, false);
    for (int r = 0; r < plan->num_positions; ++r) {
      const long long it = ParseInt(order[r], "qwyc_original_iteration");
      if (it < 0 || it >= R || seen[it]) {
        Log::Fatal("qwyc_original_iteration: expected a permutation of 0..%d (each iteration once), got '%s' "
                   "at position %d", plan->num_positions - 1, order[r].c_str(), r);
      }
      seen[it] = true;
    }
    const double thr = plan->decision_threshold;
    if (multiclass) {
      plan->eps_margin = Doubles(kv, "qwyc_eps_margin", plan->num_positions);
      for (int r = 0; r < plan->num_positions; ++r) {
        if (!(plan->eps_margin[r] >= 0.0)) {
          Log::Fatal("qwyc_eps_margin: expected values >= 0 (inf = never stop), got %g at position %d",
                     plan->eps_margin[r], r);
        }
      }
    } else {
      plan->eps_neg = Doubles(kv, "qwyc_eps_neg", plan->num_positions);
      plan->eps_pos = Doubles(kv, "qwyc_eps_pos", plan->num_positions);
      for (int r = 0; r < plan->num_positions; ++r) {
        if (!(plan->eps_neg[r] <= thr)) {
          Log::Fatal("qwyc_eps_neg: expected values <= qwyc_decision_threshold %g (-inf = never stop), got %g at "
                     "position %d", thr, plan->eps_neg[r], r);
        }
        if (!(thr <= plan->eps_pos[r])) {
          Log::Fatal("qwyc_eps_pos: expected values >= qwyc_decision_threshold %g (inf = never stop), got %g at "
                     "position %d", thr, plan->eps_pos[r], r);
        }
        if (plan->mode == Mode::kBinaryNegativeOnly && !std::isinf(plan->eps_pos[r])) {
          Log::Fatal("qwyc_eps_pos: qwyc_mode=binary_negative_only expects inf at every position, got %g at "
                     "position %d", plan->eps_pos[r], r);
        }
      }
    }
    if (has_maps) plan->ReadScoreMaps(kv);
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
        if (!score_offsets.empty()) output[0] = CalibratedScore(r, output[0]);
        return r + 1;
      }
    }
    return num_positions * K;
  }

  /*!
   * \brief Score of a row that exits at position r with partial score s (version 2): the position's
   *        map (linear between knots, slope 1 beyond the end knots), kept on the side of the
   *        decision threshold the row exited on. Python's QWYC computes the same expression.
   */
  double CalibratedScore(int r, double s) const {
    const int a = score_offsets[r], n = score_offsets[r + 1] - a;
    double v = s;
    if (n > 0) {
      const double* x = score_x.data() + a;
      const double* y = score_y.data() + a;
      if (n == 1 || s < x[0]) {
        v = y[0] + (s - x[0]);
      } else if (s > x[n - 1]) {
        v = y[n - 1] + (s - x[n - 1]);
      } else {
        int j = static_cast<int>(std::upper_bound(x, x + n, s) - x) - 1;
        j = std::min(std::max(j, 0), n - 2);
        v = y[j] + (y[j + 1] - y[j]) / (x[j + 1] - x[j]) * (s - x[j]);
      }
    }
    const double t = decision_threshold;
    return s > t ? std::max(v, std::nextafter(t, std::numeric_limits<double>::infinity())) : std::min(v, t);
  }

 private:
  /*! \brief Version 2's score maps (docs/qwyc_model_format.md, rule 11), Fatal naming the key otherwise. */
  void ReadScoreMaps(const std::unordered_map<std::string, std::string>& kv) {
    const std::vector<std::string> offsets = Tokens(kv, "qwyc_score_offsets", num_positions + 1);
    long long previous = 0;
    for (int r = 0; r <= num_positions; ++r) {
      const long long o = ParseInt(offsets[r], "qwyc_score_offsets");
      if ((r == 0 && o != 0) || o < previous || o > 100000000LL) {
        Log::Fatal("qwyc_score_offsets: expected %d non-decreasing integers from 0 to 100000000, got '%s' at index %d",
                   num_positions + 1, offsets[r].c_str(), r);
      }
      score_offsets.push_back(static_cast<int>(o));
      previous = o;
    }
    const int n = score_offsets.back();
    if (n < 1) {
      Log::Fatal("qwyc_score_offsets: version 2 carries at least one knot (a plan without maps is version 1), "
                 "got %d", n);
    }
    score_x = Doubles(kv, "qwyc_score_x", n);
    score_y = Doubles(kv, "qwyc_score_y", n);
    for (int r = 0; r < num_positions; ++r) {
      const int a = score_offsets[r], b = score_offsets[r + 1];
      const bool can_exit = r < num_positions - 1 && (!std::isinf(eps_neg[r]) || !std::isinf(eps_pos[r]));
      if (a < b && !can_exit) {
        Log::Fatal("qwyc_score_offsets: position %d has %d knots, but no row exits there (%s)", r, b - a,
                   r == num_positions - 1 ? "the last position" : "both thresholds infinite");
      }
      for (int i = a; i < b; ++i) {
        const char* key = !std::isfinite(score_x[i]) ? "qwyc_score_x" : "qwyc_score_y";
        if (!std::isfinite(score_x[i]) || !std::isfinite(score_y[i])) {
          Log::Fatal("%s: expected finite knots, got %g at knot %d (position %d)", key,
                     std::isfinite(score_x[i]) ? score_y[i] : score_x[i], i, r);
        }
        if (i > a && !(score_x[i] > score_x[i - 1])) {
          Log::Fatal("qwyc_score_x: expected strictly increasing knots within a position, got %g after %g at "
                     "knot %d (position %d)", score_x[i], score_x[i - 1], i, r);
        }
        if (i > a && !(score_y[i] > score_y[i - 1])) {
          Log::Fatal("qwyc_score_y: expected strictly increasing knots within a position, got %g after %g at "
                     "knot %d (position %d)", score_y[i], score_y[i - 1], i, r);
        }
      }
    }
  }

  static std::string Get(const std::unordered_map<std::string, std::string>& kv, const char* key) {
    auto it = kv.find(key);
    if (it == kv.end()) {
      Log::Fatal("%s: expected a %s= line (the model file has qwyc_version, so it carries a QWYC plan), got none",
                 key, key);
    }
    return Common::Trim(it->second);
  }

  /*! \brief A decimal integer (optional sign, digits only), Fatal naming key otherwise. */
  static long long ParseInt(const std::string& token, const char* key) {
    size_t i = (!token.empty() && (token[0] == '-' || token[0] == '+')) ? 1 : 0;
    if (i >= token.size() || token.size() > 18 || token.find_first_not_of("0123456789", i) != std::string::npos) {
      Log::Fatal("%s: expected an integer, got '%s'", key, token.c_str());
    }
    return std::strtoll(token.c_str(), nullptr, 10);
  }

  static double ParseDouble(const std::string& token, const char* key, bool allow_nan = false) {
    char* end = nullptr;
    const double v = token.empty() ? 0.0 : std::strtod(token.c_str(), &end);
    if (token.empty() || *end != '\0' || (std::isnan(v) && !allow_nan)) {
      Log::Fatal("%s: expected a number (decimal, exponent notation, inf or -inf), got '%s'", key, token.c_str());
    }
    return v;
  }

  static std::vector<std::string> Tokens(const std::unordered_map<std::string, std::string>& kv, const char* key,
                                         int expected) {
    std::vector<std::string> out;
    for (const std::string& token : Common::Split(Get(kv, key).c_str(), ' ')) {
      const std::string t = Common::Trim(token);
      if (!t.empty()) out.push_back(t);
    }
    if (static_cast<int>(out.size()) != expected) {
      Log::Fatal("%s: expected %d values (one per position, qwyc_num_positions), got %d", key, expected,
                 static_cast<int>(out.size()));
    }
    return out;
  }

  static std::vector<double> Doubles(const std::unordered_map<std::string, std::string>& kv, const char* key,
                                     int expected) {
    std::vector<double> out;
    for (const std::string& token : Tokens(kv, key, expected)) out.push_back(ParseDouble(token, key));
    return out;
  }
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_BOOSTING_QWYC_QWYC_PLAN_HPP_
