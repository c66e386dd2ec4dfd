/*!
 * lightgbm-cegb: Cost-Efficient Gradient Boosting (Peter et al., NeurIPS 2017) for LightGBM's
 * serial tree learner. Replaces upstream's src/treelearner/cost_effective_gradient_boosting.hpp.
 *
 * Gain of a candidate split s of leaf L on feature f (every term scaled by cegb_tradeoff):
 *
 *   gain'(s) = gain(s) - tradeoff * ( cegb_penalty_split * n_L
 *                                   + coupled[f] * [f not yet used by the model]
 *                                   + lazy[f] * #{rows i in L : f not yet paid for row i} )
 *
 * and, for monotone splits, LightGBM's monotone penalty factor multiplies gain'(s).
 *
 * Differences from upstream 4.7.0 (each has a regression test in tests/fork):
 *  a. the coupled refund restores exactly what was deducted (upstream cached the split before
 *     the deduction and so credited the penalty twice);
 *  b. the refund only considers splits that passed every per-node filter (interaction
 *     constraints, feature_fraction_bynode) and carries the monotone penalty like a fresh split;
 *     cached splits of a leaf are dropped when the leaf is split (no stale parent splits);
 *  c. the "already paid" bits are indexed by the GLOBAL row id (bagging subset mode and GOSS
 *     used bag positions), and after each tree every training row, in-bag or not, is routed
 *     through the tree and marked for the features on its path;
 *  d. state is (re)allocated for the current parameters on every reset (num_leaves can grow,
 *     lazy penalties can be added after coupled-only training);
 *  e. the state is rebuilt from the model's existing trees when they change behind the
 *     learner's back (init_model / merged models, RollbackOneIter, parameter resets);
 *  h. bit indices are 64-bit (rows x features >= 2^31 works).
 * Penalty vectors are validated in Config::CheckParamConflict (defect f).
 */
#ifndef LIGHTGBM_SRC_TREELEARNER_CEGB_COST_EFFICIENT_GRADIENT_BOOSTING_HPP_
#define LIGHTGBM_SRC_TREELEARNER_CEGB_COST_EFFICIENT_GRADIENT_BOOSTING_HPP_

#include <LightGBM/config.h>
#include <LightGBM/dataset.h>
#include <LightGBM/tree.h>
#include <LightGBM/utils/log.h>
#include <LightGBM/utils/openmp_wrapper.h>
#include <LightGBM/utils/threading.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "../data_partition.hpp"
#include "../serial_tree_learner.h"
#include "../split_info.hpp"

namespace LightGBM {

class CostEfficientGradientBoosting {
 public:
  explicit CostEfficientGradientBoosting(const SerialTreeLearner* tree_learner)
      : tree_learner_(tree_learner) {}

  static bool IsEnable(const Config* config) {
    return !(config->cegb_tradeoff >= 1.0f && config->cegb_penalty_split <= 0.0f &&
             config->cegb_penalty_feature_coupled.empty() &&
             config->cegb_penalty_feature_lazy.empty());
  }

  /*! \brief Size the state for the current config; called on init and on every config reset. */
  void Init() {
    const Config* config = tree_learner_->config_;
    const Dataset* train_data = tree_learner_->train_data_;
    if (full_data_ == nullptr) {
      full_data_ = train_data;
    }
    num_features_ = train_data->num_features();
    CheckVectorSize(config->cegb_penalty_feature_coupled, "cegb_penalty_feature_coupled");
    CheckVectorSize(config->cegb_penalty_feature_lazy, "cegb_penalty_feature_lazy");
    const size_t cache_size = static_cast<size_t>(config->num_leaves) * num_features_;
    if (splits_per_leaf_.size() != cache_size) {
      splits_per_leaf_.assign(cache_size, SplitInfo());
      pending_refund_.assign(cache_size, 0.0);
      refund_.assign(cache_size, 0.0);
    }
    if (is_feature_used_in_split_.size() != static_cast<size_t>(num_features_)) {
      is_feature_used_in_split_.assign(num_features_, false);
      models_dirty_ = true;
    }
    const bool lazy = !config->cegb_penalty_feature_lazy.empty();
    if (lazy && paid_.empty()) {
      AllocatePaidBits();
      models_dirty_ = true;  // rows may already have paid for features of existing trees
    } else if (!lazy) {
      paid_.clear();
      paid_.shrink_to_fit();
    }
  }

  /*! \brief The full training data changed (not a bagging subset). */
  void ResetTrainingData(const Dataset* full_data) {
    full_data_ = full_data;
    bag_indices_ = nullptr;
    paid_.clear();
    is_feature_used_in_split_.clear();
    Init();
    models_dirty_ = true;
  }

  /*! \brief Bagging in subset mode: data partition indices are positions in `used_indices`. */
  void SetBagging(const data_size_t* subset_used_indices) { bag_indices_ = subset_used_indices; }

  /*!
   * \brief Make the state reflect exactly the trees of the model (coupled: features used by any
   *        tree are paid; lazy: every training row is marked for the features on its paths).
   *        Cheap when nothing changed since the last call.
   */
  void SyncWithModels(const std::vector<std::unique_ptr<Tree>>& models) {
    bool same = !models_dirty_ && models.size() == accounted_.size();
    for (size_t i = 0; same && i < models.size(); ++i) {
      same = models[i].get() == accounted_[i];
    }
    if (same) return;
    std::fill(is_feature_used_in_split_.begin(), is_feature_used_in_split_.end(), false);
    std::fill(paid_.begin(), paid_.end(), 0);
    accounted_.clear();
    for (const auto& tree : models) {
      MarkTree(*tree);
      accounted_.push_back(tree.get());
    }
    models_dirty_ = false;
  }

  void BeforeTrain() {
    Threading::For<size_t>(0, splits_per_leaf_.size(), 1024,
      [this] (int /*thread_index*/, size_t start, size_t end) {
      for (size_t i = start; i < end; ++i) {
        splits_per_leaf_[i].Reset();
        refund_[i] = 0.0;
        pending_refund_[i] = 0.0;
      }
    });
  }

  /*! \brief Penalty subtracted from the gain of a split of `leaf_index` on `feature_index`. */
  double DeltaGain(int feature_index, int real_fidx, int leaf_index, int num_data_in_leaf) {
    const Config* config = tree_learner_->config_;
    double delta = config->cegb_tradeoff * config->cegb_penalty_split * num_data_in_leaf;
    double coupled = 0.0;
    if (!config->cegb_penalty_feature_coupled.empty() &&
        !is_feature_used_in_split_[feature_index]) {
      coupled = config->cegb_tradeoff * config->cegb_penalty_feature_coupled[real_fidx];
      delta += coupled;
    }
    if (!config->cegb_penalty_feature_lazy.empty()) {
      delta += config->cegb_tradeoff * LazyCost(feature_index, real_fidx, leaf_index);
    }
    pending_refund_[Slot(leaf_index, feature_index)] = coupled;
    return delta;
  }

  /*!
   * \brief Remember the final (penalized, filtered) best split of `leaf_index` on
   *        `feature_index`, for a later coupled refund. `gain_factor` is the factor applied to
   *        the gain after DeltaGain (LightGBM's monotone penalty), so the refund is scaled alike.
   */
  void RecordSplit(int feature_index, int leaf_index, const SplitInfo& split, double gain_factor,
                   bool passes_filters) {
    const size_t slot = Slot(leaf_index, feature_index);
    if (passes_filters) {
      splits_per_leaf_[slot] = split;
      refund_[slot] = pending_refund_[slot] * gain_factor;
    } else {
      splits_per_leaf_[slot].Reset();
      refund_[slot] = 0.0;
    }
  }

  /*! \brief Called right before `best_leaf` is split with `best_split_info`. */
  void UpdateLeafBestSplits(Tree* tree, int best_leaf, const SplitInfo* best_split_info,
                            std::vector<SplitInfo>* best_split_per_leaf) {
    const Config* config = tree_learner_->config_;
    const Dataset* train_data = tree_learner_->train_data_;
    const int inner_feature_index = train_data->InnerFeatureIndex(best_split_info->feature);
    auto& best = *best_split_per_leaf;
    if (!config->cegb_penalty_feature_coupled.empty() &&
        !is_feature_used_in_split_[inner_feature_index]) {
      is_feature_used_in_split_[inner_feature_index] = true;
      for (int i = 0; i < tree->num_leaves(); ++i) {
        if (i == best_leaf) continue;
        const size_t slot = Slot(i, inner_feature_index);
        SplitInfo* split = &splits_per_leaf_[slot];
        if (split->gain <= kMinScore || best[i].gain <= kMinScore) continue;
        split->gain += refund_[slot];
        refund_[slot] = 0.0;
        if (*split > best[i]) {
          best[i] = *split;
        }
      }
    }
    if (!config->cegb_penalty_feature_lazy.empty()) {
      data_size_t cnt = 0;
      const data_size_t* idx = tree_learner_->data_partition_->GetIndexOnLeaf(best_leaf, &cnt);
      for (data_size_t j = 0; j < cnt; ++j) {
        SetPaid(inner_feature_index, GlobalRow(idx[j]));
      }
    }
    // The split leaf becomes two new leaves: its cached splits are stale.
    InvalidateLeaf(best_leaf);
    InvalidateLeaf(tree->num_leaves());
  }

  /*! \brief Called with every finished tree: every training row pays for its path. */
  void AfterTrain(const Tree* tree) {
    MarkTree(*tree);
    accounted_.push_back(tree);
  }

  /*! \brief Bytes held by the per-row "already paid" bits. */
  size_t PaidBitsBytes() const { return paid_.size() * sizeof(uint64_t); }

 private:
  inline size_t Slot(int leaf, int feature) const {
    return static_cast<size_t>(leaf) * num_features_ + feature;
  }

  void InvalidateLeaf(int leaf) {
    if (static_cast<size_t>(leaf + 1) * num_features_ > splits_per_leaf_.size()) return;
    for (int f = 0; f < num_features_; ++f) {
      splits_per_leaf_[Slot(leaf, f)].Reset();
      refund_[Slot(leaf, f)] = 0.0;
    }
  }

  void CheckVectorSize(const std::vector<double>& v, const char* name) const {
    if (!v.empty() && v.size() != static_cast<size_t>(full_data_->num_total_features())) {
      Log::Fatal("%s should have one entry per feature: got %d entries for %d features", name,
                 static_cast<int>(v.size()), full_data_->num_total_features());
    }
  }

  inline data_size_t GlobalRow(data_size_t partition_index) const {
    return bag_indices_ == nullptr ? partition_index : bag_indices_[partition_index];
  }

  // Paid bits: feature-major, each feature's row block padded to a multiple of 64 rows, so
  // threads that own disjoint 64-aligned row ranges never share a word.
  void AllocatePaidBits() {
    num_rows_ = full_data_->num_data();
    row_stride_ = (static_cast<size_t>(num_rows_) + 63) / 64 * 64;
    paid_.assign(row_stride_ / 64 * static_cast<size_t>(num_features_), 0);
  }
  inline size_t BitIndex(int inner_feature, data_size_t row) const {
    return static_cast<size_t>(inner_feature) * row_stride_ + static_cast<size_t>(row);
  }
  inline bool IsPaid(int inner_feature, data_size_t row) const {
    const size_t b = BitIndex(inner_feature, row);
    return (paid_[b >> 6] >> (b & 63)) & 1;
  }
  inline void SetPaid(int inner_feature, data_size_t row) {
    const size_t b = BitIndex(inner_feature, row);
    paid_[b >> 6] |= (uint64_t(1) << (b & 63));
  }

  double LazyCost(int feature_index, int real_fidx, int leaf_index) const {
    const double penalty = tree_learner_->config_->cegb_penalty_feature_lazy[real_fidx];
    if (penalty == 0.0) return 0.0;
    data_size_t cnt = 0;
    const data_size_t* idx = tree_learner_->data_partition_->GetIndexOnLeaf(leaf_index, &cnt);
    data_size_t unpaid = 0;
    for (data_size_t j = 0; j < cnt; ++j) {
      unpaid += !IsPaid(feature_index, GlobalRow(idx[j]));
    }
    return penalty * unpaid;
  }

  /*! \brief Account for one tree of the model: coupled flags, and lazy bits for every row. */
  void MarkTree(const Tree& tree) {
    const Dataset* data = full_data_;
    const int num_internal = tree.num_leaves() - 1;
    if (num_internal <= 0) return;
    std::vector<int> inner(num_internal);
    for (int node = 0; node < num_internal; ++node) {
      inner[node] = data->InnerFeatureIndex(tree.split_feature(node));
      if (inner[node] >= 0 && !is_feature_used_in_split_.empty()) {
        is_feature_used_in_split_[inner[node]] = true;
      }
    }
    if (paid_.empty()) return;
    // Route every training row with its bins; a bin's representative value is its upper bound
    // (exact for thresholds learned on this binning, which are always bin upper bounds).
    const data_size_t n = num_rows_;
    const int nthreads = OMP_NUM_THREADS();
    const data_size_t block = std::max<data_size_t>(
        64, (n / std::max(1, nthreads * 4) + 63) / 64 * 64);
    const int num_blocks = static_cast<int>((n + block - 1) / block);
    OMP_INIT_EX();
    #pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
    for (int b = 0; b < num_blocks; ++b) {
      OMP_LOOP_EX_BEGIN();
      const data_size_t start = static_cast<data_size_t>(b) * block;
      const data_size_t end = std::min<data_size_t>(n, start + block);
      std::vector<std::unique_ptr<BinIterator>> iters(num_features_);
      for (int node = 0; node < num_internal; ++node) {
        const int f = inner[node];
        if (f >= 0 && iters[f] == nullptr) {
          iters[f].reset(data->FeatureIterator(f));
          iters[f]->Reset(start);
        }
      }
      for (data_size_t row = start; row < end; ++row) {
        int node = 0;
        while (node >= 0) {
          const int f = inner[node];
          double value = 0.0;
          if (f >= 0) {
            const BinMapper* mapper = data->FeatureBinMapper(f);
            const uint32_t bin = iters[f]->Get(row);
            if (mapper->missing_type() == MissingType::NaN && bin == mapper->num_bin() - 1 &&
                mapper->bin_type() == BinType::NumericalBin) {
              value = std::nan("");
            } else {
              value = mapper->BinToValue(bin);
            }
            SetPaid(f, row);
          }
          node = tree.NextNode(value, node);
        }
      }
      OMP_LOOP_EX_END();
    }
    OMP_THROW_EX();
  }

  const SerialTreeLearner* tree_learner_;
  const Dataset* full_data_ = nullptr;
  const data_size_t* bag_indices_ = nullptr;
  int num_features_ = 0;
  data_size_t num_rows_ = 0;
  size_t row_stride_ = 0;
  std::vector<SplitInfo> splits_per_leaf_;
  std::vector<double> pending_refund_;
  std::vector<double> refund_;
  std::vector<bool> is_feature_used_in_split_;
  std::vector<uint64_t> paid_;
  std::vector<const Tree*> accounted_;
  bool models_dirty_ = true;
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_TREELEARNER_CEGB_COST_EFFICIENT_GRADIENT_BOOSTING_HPP_
