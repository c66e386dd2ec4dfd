/*!
 * Copyright (c) 2026 The lightgbm-cegb authors.
 * Licensed under the MIT License (as LightGBM; see the LICENSE file in the root of the patched
 * LightGBM source tree).
 *
 * lightgbm-cegb: metric=cegb_cost, the mean per-row prediction cost of the model so far on a
 * dataset (training or validation), with the accounting of budget_extras.cost_report:
 *
 *   cegb_cost = mean over rows of ( acquisition + evaluation ) + coupled
 *
 *   acquisition: each acquisition unit (a cegb_feature_group, or a feature in no group) whose
 *                feature some split on the row's paths through the trees tests, paid once per row
 *                at the unit's lazy cost (the cost file's group_cost, else the largest
 *                cegb_penalty_feature_lazy of its members);
 *   evaluation:  cegb_penalty_split + cegb_penalty_feature_split[f] for every split on feature f
 *                on the row's paths, plus the cost file's `tree` cost for every tree;
 *   coupled:     cegb_penalty_feature_coupled[f] once per model for every feature f some split
 *                of the model uses (per feature, as budget_extras.model_coupled_cost).
 *
 * Incremental: each dataset keeps, per row, a bitset of the units it acquired and its cost so
 * far; when the model has new trees, only those are walked (rows routed by their bins with the
 * CEGB learner's BinRouter). The counted trees are known by address: a model that no
 * longer starts with them (a merged model, shuffled trees) is recounted from its trees; removed
 * trees (RollbackOneIter) are reported by ForgetTrees, since a later tree may take a removed
 * tree's address. The Booster attaches the metric to its dataset (GBDT::Init, ResetTrainingData,
 * AddValidDataset call CEGBCostMetric::AttachAll).
 */
#ifndef LIGHTGBM_SRC_METRIC_CEGB_COST_METRIC_HPP_
#define LIGHTGBM_SRC_METRIC_CEGB_COST_METRIC_HPP_

#include <LightGBM/bin.h>
#include <LightGBM/config.h>
#include <LightGBM/dataset.h>
#include <LightGBM/metric.h>
#include <LightGBM/tree.h>
#include <LightGBM/utils/log.h>
#include <LightGBM/utils/openmp_wrapper.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../treelearner/cegb/bin_router.hpp"
#include "../treelearner/cegb/cegb_costs.hpp"

namespace LightGBM {

class CEGBCostMetric : public Metric {
 public:
  explicit CEGBCostMetric(const Config& config) : config_(config) {
    if (!HasCosts(config)) {
      Log::Fatal("metric cegb_cost needs CEGB costs to count: give cegb_penalty_feature_lazy, "
                 "cegb_penalty_feature_coupled, cegb_penalty_feature_split, cegb_penalty_split > 0 or "
                 "cegb_cost_file (none is given)");
    }
    if (config.linear_tree) {
      Log::Fatal("metric cegb_cost does not support linear_tree=true (a linear leaf reads features that no "
                 "split tests; budget_extras.cost_report refuses linear trees too)");
    }
  }

  void Init(const Metadata& /*metadata*/, data_size_t num_data) override { num_data_ = num_data; }

  const std::vector<std::string>& GetName() const override { return name_; }

  /*! \brief Lower is better. */
  double factor_to_bigger_better() const override { return -1.0; }

  std::vector<double> Eval(const double* /*score*/, const ObjectiveFunction* /*objective*/) const override {
    if (data_ == nullptr || models_ == nullptr) {
      Log::Fatal("metric cegb_cost is evaluated without a model: it is computed by a Booster (GBDT, DART or RF) "
                 "on its own training and validation datasets");
    }
    Sync();
    double sum = 0.0;
    for (double c : row_cost_) sum += c;
    const double mean = num_data_ > 0 ? sum / static_cast<double>(num_data_) : 0.0;
    double coupled = 0.0;
    for (size_t f = 0; f < feature_used_.size(); ++f) {
      if (feature_used_[f]) coupled += coupled_[f];
    }
    return {mean + tree_cost_ * static_cast<double>(models_->size()) + coupled};
  }

  /*! \brief Whether `metric` is a cegb_cost metric (early stopping skips it: it only grows with the trees). */
  static bool IsCostMetric(const Metric* metric) { return dynamic_cast<const CEGBCostMetric*>(metric) != nullptr; }

  /*!
   * \brief Attach the cegb_cost metrics among `metrics` to the rows of `data` and the trees of
   *        `models` (costs resolved against the training data's feature names).
   */
  static void AttachAll(const std::vector<const Metric*>& metrics, const Dataset* data, const Dataset* train_data,
                        const std::vector<std::unique_ptr<Tree>>* models) {
    for (const Metric* metric : metrics) {
      const CEGBCostMetric* cost = dynamic_cast<const CEGBCostMetric*>(metric);
      // the Booster owns its metrics as non-const objects; they are handed to GBDT as const
      if (cost != nullptr) const_cast<CEGBCostMetric*>(cost)->Attach(data, train_data, models);
    }
  }

  /*! \brief Trees were removed from the model (RollbackOneIter): recount the model at the next evaluation. */
  static void ForgetTrees(const std::vector<const Metric*>& training,
                          const std::vector<std::vector<const Metric*>>& valid) {
    auto forget = [](const Metric* metric) {
      const CEGBCostMetric* cost = dynamic_cast<const CEGBCostMetric*>(metric);
      if (cost != nullptr) cost->recount_ = true;
    };
    for (const Metric* metric : training) forget(metric);
    for (const auto& metrics : valid) {
      for (const Metric* metric : metrics) forget(metric);
    }
  }

  /*! \brief Early stopping skips cegb_cost: warn when a validation dataset has no other metric. */
  static void WarnIfOnlyCost(const std::vector<const Metric*>& metrics, int valid_index) {
    if (metrics.empty()) return;
    for (const Metric* metric : metrics) {
      if (!IsCostMetric(metric)) return;
    }
    Log::Warning("Early stopping skips metric cegb_cost (the prediction cost only grows with the trees) and "
                 "validation data %d has no other metric: it does not stop training early", valid_index);
  }

 private:
  static bool HasCosts(const Config& config) {
    bool named = false;
    for (const char* key : {"cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled", "cegb_penalty_feature_split"}) {
      named = named || config.cegb_named_costs.count(key) > 0;
    }
    return named || !config.cegb_penalty_feature_lazy.empty() || !config.cegb_penalty_feature_coupled.empty() ||
           !config.cegb_penalty_feature_split.empty() || config.cegb_penalty_split > 0.0 ||
           !config.cegb_cost_file.empty();
  }

  void Attach(const Dataset* data, const Dataset* train_data, const std::vector<std::unique_ptr<Tree>>* models) {
    if (data->num_data() != num_data_) {
      Log::Fatal("metric cegb_cost: the dataset has %d rows, the metric was initialized for %d",
                 static_cast<int>(data->num_data()), static_cast<int>(num_data_));
    }
    if (data == data_ && models == models_) return;  // the same rows and trees (a reset objective): keep the counts
    const std::vector<std::string>& names = train_data->feature_names();
    const CEGBCosts costs = CEGBCosts::Resolve(config_, names);
    const int n = static_cast<int>(names.size());
    data_ = data;
    models_ = models;
    coupled_.assign(n, 0.0);
    split_.assign(n, config_.cegb_penalty_split);
    unit_bit_.assign(n, -1);
    unit_cost_.clear();
    std::vector<int> bit_of_group(costs.num_groups, -1);
    for (int g = 0; g < costs.num_groups; ++g) {
      if (!costs.lazy.empty() && costs.group_lazy[g] > 0.0) {
        bit_of_group[g] = static_cast<int>(unit_cost_.size());
        unit_cost_.push_back(costs.group_lazy[g]);
      }
    }
    for (int f = 0; f < n; ++f) {
      if (!costs.coupled.empty()) coupled_[f] = costs.coupled[f];
      if (!costs.split.empty()) split_[f] += costs.split[f];
      unit_bit_[f] = bit_of_group[costs.group[f]];
    }
    tree_cost_ = costs.tree;
    words_ = static_cast<int>((unit_cost_.size() + 63) / 64);
    Reset();
  }

  void Reset() const {
    row_cost_.assign(num_data_, 0.0);
    paid_.assign(static_cast<size_t>(num_data_) * words_, 0);
    feature_used_.assign(coupled_.size(), false);
    accounted_.clear();
    recount_ = false;
  }

  /*! \brief Count the trees of the model not counted yet; recount all when an earlier one changed. */
  void Sync() const {
    const std::vector<std::unique_ptr<Tree>>& models = *models_;
    bool same = !recount_ && accounted_.size() <= models.size();
    for (size_t t = 0; same && t < accounted_.size(); ++t) same = models[t].get() == accounted_[t];
    if (!same) Reset();
    for (size_t t = accounted_.size(); t < models.size(); ++t) {
      AddTree(*models[t]);
      accounted_.push_back(models[t].get());
    }
  }

  /*! \brief Route every row through `tree` by its bins; add what the row's path acquires and evaluates. */
  void AddTree(const Tree& tree) const {
    const int num_internal = tree.num_leaves() - 1;
    if (num_internal <= 0) return;
    const int num_features = static_cast<int>(coupled_.size());
    for (int node = 0; node < num_internal; ++node) {
      const int real = tree.split_feature(node);
      if (real < 0 || real >= num_features) {
        Log::Fatal("metric cegb_cost: a split tests feature %d, the data has %d features", real, num_features);
      }
      feature_used_[real] = true;
    }
    // per leaf: the units its path acquires and the evaluation cost of its path's splits
    const int num_leaves = tree.num_leaves();
    const std::vector<std::vector<int>> paths = LeafPaths(tree);
    std::vector<uint64_t> leaf_bits(static_cast<size_t>(num_leaves) * words_, 0);
    std::vector<double> leaf_split(num_leaves, 0.0);
    for (int leaf = 0; leaf < num_leaves; ++leaf) {
      for (int node : paths[leaf]) {
        const int real = tree.split_feature(node);
        leaf_split[leaf] += split_[real];
        const int bit = unit_bit_[real];
        if (bit >= 0) leaf_bits[static_cast<size_t>(leaf) * words_ + (bit >> 6)] |= uint64_t(1) << (bit & 63);
      }
    }
    const BinRouter router(tree, *data_);
    router.ForEachRow(num_data_, [](data_size_t) { return false; }, [&](int, data_size_t row, int leaf) {
      double cost = leaf_split[leaf];
      uint64_t* paid = paid_.data() + static_cast<size_t>(row) * words_;
      const uint64_t* bits = leaf_bits.data() + static_cast<size_t>(leaf) * words_;
      for (int w = 0; w < words_; ++w) {
        uint64_t fresh = bits[w] & ~paid[w];
        paid[w] |= fresh;
        for (size_t bit = static_cast<size_t>(w) * 64; fresh != 0; ++bit, fresh >>= 1) {
          if (fresh & 1) cost += unit_cost_[bit];
        }
      }
      row_cost_[row] += cost;
    });
  }

  const Config config_;
  const std::vector<std::string> name_{"cegb_cost"};
  data_size_t num_data_ = 0;
  const Dataset* data_ = nullptr;
  const std::vector<std::unique_ptr<Tree>>* models_ = nullptr;
  std::vector<double> coupled_;    // per real feature
  std::vector<double> split_;      // per real feature: cegb_penalty_split + cegb_penalty_feature_split
  std::vector<int> unit_bit_;      // per real feature: the bit of its acquisition unit, -1 = costs nothing
  std::vector<double> unit_cost_;  // per bit
  double tree_cost_ = 0.0;
  int words_ = 0;
  // the state: what the counted trees cost each row
  mutable std::vector<double> row_cost_;
  mutable std::vector<uint64_t> paid_;  // num_data_ x words_
  mutable std::vector<bool> feature_used_;
  mutable std::vector<const Tree*> accounted_;  // the counted trees, in model order
  mutable bool recount_ = false;                // trees were removed: recount the model
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_METRIC_CEGB_COST_METRIC_HPP_
