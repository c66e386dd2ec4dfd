/*!
 * Copyright (c) 2026 The lightgbm-cegb authors.
 * Licensed under the MIT License (as LightGBM; see the LICENSE file in the root of the patched
 * LightGBM source tree).
 *
 * lightgbm-cegb: Cost-Efficient Gradient Boosting (Peter et al., NeurIPS 2017) for LightGBM's
 * serial tree learner. Replaces upstream's src/treelearner/cost_effective_gradient_boosting.hpp.
 *
 * Gain of a candidate split s of leaf L on feature f of group g (every term scaled by
 * cegb_tradeoff; docs/cegb.md has the whole story):
 *
 *   gain'(s) = gain(s) - tradeoff * ( (cegb_penalty_split + split[f]) * n_L
 *                                   + coupled[g] * [no split of the model uses group g yet]
 *                                   + lazy[g] * #{rows i in L : row i has not paid group g} )
 *
 * and, for monotone splits, LightGBM's monotone penalty factor multiplies gain'(s). With
 * cegb_tradeoff_scale=gain, every penalty of a tree is further multiplied by
 *
 *   scale = max_f (G_f / lazy[g(f)]) / N
 *
 * where G_f is the best unpenalized gain of a split of the tree's root on feature f, the max runs
 * over the features the root may use whose group has a positive lazy cost, and N is the number of
 * training rows (without lazy costs: scale = max_f G_f / N). The root penalty of a feature no row
 * has paid for is then tradeoff * lazy[g(f)] * max_f (G_f / lazy[g(f)]): for the feature with the
 * best gain per unit of cost it is tradeoff times its own gain, so below tradeoff 1 that feature's
 * root split keeps a positive penalized gain (no cliff to a constant model from the lazy
 * penalty), and at tradeoff 1 or more no first purchase pays for itself. The same meaning on
 * every dataset and iteration; with uniform costs the scale is G_root / N.
 * With cegb_tradeoff_scale=first_gain the scale is computed once, at the first tree grown after
 * the parameters were set, and kept for every later tree (gains shrink as boosting converges,
 * the penalties do not). A group's
 * cost is the largest cost among its features; without cegb_feature_group every feature is its
 * own group, which is exactly per-feature CEGB.
 *
 * Differences from upstream 4.7.0 (each has a regression test in tests/fork):
 *  a. the coupled refund restores exactly what was deducted (upstream cached the split before
 *     the deduction and so credited the penalty twice);
 *  b. the refund only considers splits that passed every per-node filter (interaction
 *     constraints, feature_fraction_bynode) and carries the monotone penalty like a fresh split;
 *     cached splits of a leaf are dropped when the leaf is split (no stale parent splits);
 *  c. the "already paid" bits are indexed by the GLOBAL row id (bagging subset mode and GOSS
 *     used bag positions), and after each tree every training row, in-bag or not, is routed
 *     through the tree and marked for the groups on its path;
 *  d. state is (re)allocated for the current parameters on every reset;
 *  e. the state is rebuilt from the model's existing trees when they change behind the
 *     learner's back (init_model / merged models, RollbackOneIter, parameter resets);
 *  h. bit indices are 64-bit.
 * Beyond upstream: feature groups, per-feature split costs, named / file cost specifications
 * (cegb_costs.hpp), GreedyMiser mode (cegb_independent_branches) and an incremental lazy
 * charge: per-leaf per-group counts of rows that have not paid, counted for the smaller child
 * and derived for the larger one by subtraction (cegb_lazy_reference_scan=true recomputes them
 * by scanning, the straightforward reference used by the tests).
 *
 * cegb_budget (a cap, not a penalty): spent_ = sum_g lazy[g] * (share of the training rows that
 * have paid g), the mean per-row cost, recounted exactly before every tree and raised by every
 * purchase inside the tree (with bagging, in-bag purchases / in-bag rows); a candidate split whose
 * purchases would take spent_ above cegb_budget gets an infinite penalty, and after each purchase
 * every leaf whose cached best split now exceeds the cap falls back to its best cached split that
 * does not. Kept per row (never a total over the rows), the sums stay below twice the sum of the
 * lazy costs, which Init checks is finite. A forced split (forcedsplits_filename) the budget cannot
 * pay for is not applied (ForcedSplitOverBudget).
 *
 * Distributed training (tree_learner=data/voting/feature on LightGBM's Network layer; see
 * docs/distributed.md): the paid bits stay per machine over its local rows; with rows
 * partitioned (data, voting) the per-leaf row counts and unpaid counts are summed over the
 * machines (exact integer sums, one allreduce per split), so the split and lazy terms use global
 * counts; with splits computed by feature owners (every distributed learner) the coupled refund's
 * cached candidates live on the owners only, so the refunded best splits are synced with the max
 * reducer of SyncUpGlobalBestSplit. Every collective fires at a point every rank passes in the
 * same order and is gated by config or synced state only.
 */
#ifndef LIGHTGBM_SRC_TREELEARNER_CEGB_COST_EFFICIENT_GRADIENT_BOOSTING_HPP_
#define LIGHTGBM_SRC_TREELEARNER_CEGB_COST_EFFICIENT_GRADIENT_BOOSTING_HPP_

#include <LightGBM/config.h>
#include <LightGBM/dataset.h>
#include <LightGBM/network.h>
#include <LightGBM/tree.h>
#include <LightGBM/utils/log.h>
#include <LightGBM/utils/openmp_wrapper.h>
#include <LightGBM/utils/threading.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../data_partition.hpp"
#include "../serial_tree_learner.h"
#include "../split_info.hpp"
#include "bin_router.hpp"
#include "cegb_costs.hpp"

namespace LightGBM {

class CostEfficientGradientBoosting {
 public:
  explicit CostEfficientGradientBoosting(const SerialTreeLearner* tree_learner)
      : tree_learner_(tree_learner) {}

  static bool IsEnable(const Config* config) {
    return config->CEGBEnabled();
  }

  /*! \brief Size the state for the current config; called on init and on every config reset. */
  void Init() {
    const Config* config = tree_learner_->config_;
    if (full_data_ == nullptr) {
      full_data_ = tree_learner_->train_data_;
    }
    CEGBCosts costs = CEGBCosts::Resolve(*config, full_data_->feature_names());
    const bool groups_changed = costs.group != costs_.group;
    costs_ = std::move(costs);
    num_features_ = full_data_->num_features();
    const int mode = config->cegb_tradeoff_scale == "gain" ? 1 : config->cegb_tradeoff_scale == "first_gain" ? 2 : 0;
    if (mode != scale_mode_ || mode != 2) {
      scale_ = 1.0;
      scale_fixed_ = false;
    }
    scale_mode_ = mode;
    scale_by_root_gain_ = mode != 0;
    inner_group_.assign(num_features_, 0);
    for (int f = 0; f < num_features_; ++f) {
      inner_group_[f] = costs_.group[full_data_->RealFeatureIndex(f)];
    }
    const size_t cache_size = static_cast<size_t>(config->num_leaves) * num_features_;
    if (splits_per_leaf_.size() != cache_size) {
      splits_per_leaf_.assign(cache_size, SplitInfo());
      pending_refund_.assign(cache_size, 0.0);
      refund_.assign(cache_size, 0.0);
    }
    if (groups_changed || is_group_used_.size() != static_cast<size_t>(costs_.num_groups)) {
      is_group_used_.assign(costs_.num_groups, false);
      paid_.clear();
      models_dirty_ = true;
    }
    const bool lazy = !costs_.lazy.empty();
    if (lazy && paid_.empty()) {
      AllocatePaidBits();
      models_dirty_ = true;  // rows may already have paid for groups of existing trees
    } else if (!lazy) {
      paid_.clear();
      paid_.shrink_to_fit();
    }
    // active lazy groups (positive cost) as a bit mask per word; zero-cost groups are not
    // tracked while trees grow, so a change of the active set rebuilds the state
    std::vector<uint64_t> previous_active = std::move(active_);
    active_.assign(words_per_row_, 0);
    if (lazy) {
      for (int g = 0; g < costs_.num_groups; ++g) {
        if (costs_.group_lazy[g] > 0.0) active_[g >> 6] |= uint64_t(1) << (g & 63);
      }
      if (previous_active != active_) models_dirty_ = true;
      unpaid_.assign(static_cast<size_t>(config->num_leaves) * costs_.num_groups, 0);
    } else {
      unpaid_.clear();
    }
    InitDistributed(*config);
    if (config->cegb_budget > 0.0 && !lazy) {
      Log::Fatal("cegb_budget=%g needs lazy feature costs (cegb_penalty_feature_lazy or the lazy column of "
                 "cegb_cost_file): it caps the mean per-row cost of the features rows pay for",
                 config->cegb_budget);
    }
    if (config->cegb_budget > 0.0) CheckBudgetArithmetic();
    CheckPenaltyArithmetic(*config);
  }

  /*!
   * \brief The costs trained with, one value per feature, as model-file parameter lines: lazy and
   *        coupled costs (a grouped feature carries its group's cost, so the lines train the same
   *        model positionally), split costs, and the group ids when a group has several members.
   */
  std::string CostLines() const {
    const int n = static_cast<int>(costs_.group.size());
    auto per_feature = [&](const std::vector<double>& per_group) {
      std::vector<double> out(n);
      for (int f = 0; f < n; ++f) out[f] = per_group[costs_.group[f]];
      return out;
    };
    std::stringstream ss;
    if (!costs_.lazy.empty()) {
      ss << "[cegb_penalty_feature_lazy: " << Common::Join(per_feature(costs_.group_lazy), ",") << "]\n";
    }
    if (!costs_.coupled.empty()) {
      ss << "[cegb_penalty_feature_coupled: " << Common::Join(per_feature(costs_.group_coupled), ",") << "]\n";
    }
    if (!costs_.split.empty()) ss << "[cegb_penalty_feature_split: " << Common::Join(costs_.split, ",") << "]\n";
    bool grouped = false;
    for (const auto& members : costs_.group_members) grouped = grouped || members.size() > 1;
    if (grouped) {
      std::vector<int> ids(n);
      for (int f = 0; f < n; ++f) ids[f] = costs_.group_members[costs_.group[f]].size() > 1 ? costs_.group[f] : -1;
      ss << "[cegb_feature_group: " << Common::Join(ids, ",") << "]\n";
    }
    return ss.str();
  }

  /*!
   * \brief Every penalty term (cegb_tradeoff x a cost x the rows it is charged for) must be a
   *        finite double: a product that overflows would turn "a huge penalty" into inf - inf = NaN
   *        gains (an unpaid count of 0, a coupled refund). Refused naming the cost parameter.
   */
  void CheckPenaltyArithmetic(const Config& config) const {
    const double rows = static_cast<double>(full_data_->num_data()) * std::max(1, Network::num_machines());
    auto largest = [](const std::vector<double>& costs) {
      double m = 0.0;
      for (double c : costs) m = std::max(m, c);
      return m;
    };
    struct Term {
      const char* name;
      double cost;
      double count;
      const char* per;
    };
    const Term terms[] = {
        {"cegb_penalty_feature_lazy", largest(costs_.group_lazy), rows, " x the training rows"},
        {"cegb_penalty_feature_coupled", largest(costs_.group_coupled), 1.0, ""},
        {"cegb_penalty_split + cegb_penalty_feature_split", config.cegb_penalty_split + largest(costs_.split), rows,
         " x the training rows"}};
    for (const Term& term : terms) {
      if (term.cost > 0.0 && !std::isfinite(config.cegb_tradeoff * term.cost * term.count)) {
        Log::Fatal("%s: cegb_tradeoff (%g) x the largest cost (%g)%s (%.0f) overflows a double; divide the costs by "
                   "a common factor (cegb_budget with them) or lower cegb_tradeoff", term.name, config.cegb_tradeoff,
                   term.cost, term.per, term.count);
      }
    }
  }

  /*! \brief Voting learner: the local vote runs between SetLocalPass(true) and SetLocalPass(false). */
  void SetLocalPass(bool local) { local_pass_ = local; }

  /*! \brief The full training data changed (not a bagging subset). */
  void ResetTrainingData(const Dataset* full_data) {
    full_data_ = full_data;
    bag_indices_ = nullptr;
    paid_.clear();
    is_group_used_.clear();
    costs_ = CEGBCosts();
    Init();
    models_dirty_ = true;
  }

  /*! \brief Bagging in subset mode: data partition indices are positions in `used_indices`. */
  void SetBagging(const data_size_t* subset_used_indices) { bag_indices_ = subset_used_indices; }

  /*!
   * \brief Make the state reflect exactly the trees of the model (coupled: groups used by any
   *        tree are paid; lazy: every training row is marked for the groups on its paths).
   *        Cheap when nothing changed since the last call.
   */
  void SyncWithModels(const std::vector<std::unique_ptr<Tree>>& models) {
    bool same = !models_dirty_ && models.size() == accounted_.size();
    for (size_t i = 0; same && i < models.size(); ++i) {
      same = models[i].get() == accounted_[i];
    }
    if (same) return;
    std::fill(is_group_used_.begin(), is_group_used_.end(), false);
    std::fill(paid_.begin(), paid_.end(), 0);
    std::fill(paid_rows_.begin(), paid_rows_.end(), 0);
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
    if (!paid_.empty() && !cfg().cegb_lazy_reference_scan) {
      CountUnpaid(0, UnpaidOf(0));
    }
    if (rows_partitioned_) SyncGlobalCounts(0, -1);
    if (Budgeted()) {
      const data_size_t in_bag = tree_learner_->data_partition_->leaf_count(0);
      row_share_ = 1.0 / static_cast<double>(in_bag > 0 ? in_bag : std::max<data_size_t>(1, num_rows_));
      UpdateSpent();
    }
  }

  /*! \brief True with cegb_tradeoff_scale=gain: call SetRootGain before a tree's root split search. */
  bool ScalesByRootGain() const { return scale_by_root_gain_ && !scale_fixed_; }

  /*!
   * \brief cegb_tradeoff_scale=gain / first_gain: set the scale from BestRootGain's value, the best
   *        unpenalized root gain per unit of lazy cost (<= 0: no split, no penalty).
   */
  void SetRootGain(double best_gain_per_cost) {
    const double n = static_cast<double>(std::max<data_size_t>(1, full_data_->num_data()));
    scale_ = best_gain_per_cost > 0.0 && std::isfinite(best_gain_per_cost) ? best_gain_per_cost / n : 0.0;
    scale_fixed_ = scale_mode_ == 2;  // first_gain: kept for every later tree
  }

  /*!
   * \brief max_f G_f / lazy[g(f)] over the root-usable features with a positive lazy cost, where
   *        G_f is the best unpenalized gain of a root split on f (LightGBM's threshold search on the
   *        root's histograms, before any CEGB penalty; numerical and categorical alike). Without
   *        a feature of positive lazy cost: max_f G_f.
   */
  double BestRootGain(const std::vector<int8_t>& is_feature_used, const std::vector<int8_t>& node_used,
                      double parent_output) const {
    const SerialTreeLearner* tl = tree_learner_;
    const LeafSplits* leaf = tl->smaller_leaf_splits_.get();
    double best = kMinScore;
    double best_per_cost = kMinScore;
    for (int f = 0; f < num_features_; ++f) {
      if (!is_feature_used[f] || !node_used[f]) continue;
      tl->train_data_->FixHistogram(f, leaf->sum_gradients(), leaf->sum_hessians(),
                                    tl->smaller_leaf_histogram_array_[f].RawData());
      SplitInfo split;
      tl->smaller_leaf_histogram_array_[f].FindBestThreshold(
          leaf->sum_gradients(), leaf->sum_hessians(), leaf->num_data_in_leaf(),
          tl->constraints_->GetFeatureConstraint(leaf->leaf_index(), f), parent_output, &split);
      best = std::max(best, split.gain);
      const double lazy = costs_.group_lazy.empty() ? 0.0 : costs_.group_lazy[inner_group_[f]];
      if (lazy > 0.0) best_per_cost = std::max(best_per_cost, split.gain / lazy);
    }
    return best_per_cost > kMinScore ? best_per_cost : best;
  }

  /*! \brief Penalty subtracted from the gain of a split of `leaf_index` on `feature_index`. */
  double DeltaGain(int feature_index, int real_fidx, int leaf_index, int num_data_in_leaf) {
    const Config& config = cfg();
    // scale_ is 1.0 unless cegb_tradeoff_scale=gain (exactly today's arithmetic then)
    const double tradeoff = scale_by_root_gain_ ? config.cegb_tradeoff * scale_ : config.cegb_tradeoff;
    double split_cost = config.cegb_penalty_split;
    if (!costs_.split.empty()) split_cost += costs_.split[real_fidx];
    // rows partitioned: the exact global row count (distributed learners pass an estimate from
    // the hessians for non-constant hessians)
    const bool global = rows_partitioned_ && !local_pass_;
    const data_size_t n = global ? global_count_[leaf_index] : num_data_in_leaf;
    double delta = tradeoff * split_cost * n;
    const int g = inner_group_[feature_index];
    double coupled = 0.0;
    if (!costs_.coupled.empty() && !is_group_used_[g]) {
      coupled = tradeoff * costs_.group_coupled[g];
      // the voting learner's local vote compares local gains, about 1/M of the global ones
      delta += local_pass_ ? coupled / Network::num_machines() : coupled;
    }
    if (!paid_.empty() && costs_.group_lazy[g] > 0.0) {
      const data_size_t unpaid = global ? unpaid_global_[static_cast<size_t>(leaf_index) * costs_.num_groups + g]
                                        : UnpaidCount(g, leaf_index);
      delta += tradeoff * costs_.group_lazy[g] * unpaid;
      if (Budgeted() && OverBudget(g, unpaid)) delta = std::numeric_limits<double>::infinity();
    }
    if (!local_pass_) pending_refund_[Slot(leaf_index, feature_index)] = coupled;
    return delta;
  }

  /*!
   * \brief Remember the final (penalized, filtered) best split of `leaf_index` on
   *        `feature_index`, for a later coupled refund. `gain_factor` is the factor applied to
   *        the gain after DeltaGain (LightGBM's monotone penalty), so the refund is scaled alike.
   */
  void RecordSplit(int feature_index, int leaf_index, const SplitInfo& split, double gain_factor,
                   bool passes_filters) {
    if (local_pass_) return;  // local-scale candidates of the voting learner's local vote
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
    const int inner_feature_index = full_data_->InnerFeatureIndex(best_split_info->feature);
    const int g = inner_group_[inner_feature_index];
    // The split leaf becomes two new leaves: its cached splits are stale.
    InvalidateLeaf(best_leaf);
    InvalidateLeaf(tree->num_leaves());
    if (cfg().cegb_independent_branches) {
      return;  // GreedyMiser: what this tree uses becomes free only once the tree is finished
    }
    auto& best = *best_split_per_leaf;
    if (!costs_.coupled.empty() && !is_group_used_[g]) {
      is_group_used_[g] = true;
      for (int member : costs_.group_members[g]) {
        const int f = full_data_->InnerFeatureIndex(member);
        if (f < 0) continue;
        for (int i = 0; i < tree->num_leaves(); ++i) {
          if (i == best_leaf) continue;
          const size_t slot = Slot(i, f);
          SplitInfo* split = &splits_per_leaf_[slot];
          if (split->gain <= kMinScore || best[i].gain <= kMinScore) continue;
          split->gain += refund_[slot];
          refund_[slot] = 0.0;
          if (*split > best[i]) {
            best[i] = *split;
          }
        }
      }
      // only the owner of a feature cached its candidates: take the best over the machines
      if (splits_partitioned_) SyncRefundedBestSplits(tree->num_leaves(), &best);
    }
    // Nothing to mark when the group costs nothing or every row of the leaf has paid it (the
    // incremental counts know; the reference scan always marks).
    const bool counted = !cfg().cegb_lazy_reference_scan;
    const bool active = !paid_.empty() && ((active_[g >> 6] >> (g & 63)) & 1);
    if (!paid_.empty() && !(counted && (!active || UnpaidOf(best_leaf)[g] == 0))) {
      data_size_t cnt = 0;
      const data_size_t* idx = tree_learner_->data_partition_->GetIndexOnLeaf(best_leaf, &cnt);
      data_size_t fresh = 0;
      #pragma omp parallel for num_threads(OMP_NUM_THREADS()) schedule(static, 4096) if (cnt >= 16384) reduction(+:fresh)
      for (data_size_t j = 0; j < cnt; ++j) {
        fresh += SetPaid(g, GlobalRow(idx[j]));
      }
      paid_rows_[g] += fresh;
      if (!unpaid_.empty()) UnpaidOf(best_leaf)[g] = 0;
      if (Budgeted() && fresh > 0) {
        // in-bag purchases stand for all rows of their region (the out-of-bag ones pay after
        // the tree; BeforeTrain recounts exactly)
        spent_ += costs_.group_lazy[g] * (static_cast<double>(fresh) * row_share_);
        EnforceBudget(tree->num_leaves(), best_leaf, &best);
      }
    }
  }

  /*!
   * \brief cegb_budget: whether a forced split (forcedsplits_filename) of `leaf` on the inner feature
   *        `inner_feature` would buy over the budget. Forced splits skip the penalized split search,
   *        so the learner asks before applying one; the first refusal of a Booster is a warning.
   */
  bool ForcedSplitOverBudget(int leaf, int inner_feature) {
    if (!Budgeted() || !CachedSplitOverBudget(leaf, inner_feature)) return false;
    if (!forced_budget_warned_) {
      forced_budget_warned_ = true;
      Log::Warning("A forced split on feature %d (forcedsplits_filename) would take the mean per-row lazy cost "
                   "over cegb_budget=%g: it is not applied, nor the forced splits below it (said once)",
                   full_data_->RealFeatureIndex(inner_feature), cfg().cegb_budget);
    }
    return true;
  }

  /*! \brief Called right after `left_leaf` (the split leaf's id) was split into it and `right_leaf`. */
  void AfterSplit(int left_leaf, int right_leaf) {
    if (rows_partitioned_ && !paid_.empty() && cfg().cegb_lazy_reference_scan) {
      ScanUnpaid(left_leaf, UnpaidOf(left_leaf));
      ScanUnpaid(right_leaf, UnpaidOf(right_leaf));
    }
    AfterSplitLocal(left_leaf, right_leaf);
    if (rows_partitioned_) SyncGlobalCounts(left_leaf, right_leaf);
  }

 private:
  // ---- cegb_budget ------------------------------------------------------------------------

  inline bool Budgeted() const { return cfg().cegb_budget > 0.0 && !paid_.empty(); }

  /*!
   * \brief The budget's sums (spent_ plus one purchase, each term a lazy cost times a share of the
   *        rows <= 1) stay below twice the sum of the lazy costs: refuse costs whose sum overflows.
   */
  void CheckBudgetArithmetic() const {
    double total = 0.0;
    double largest = 0.0;
    for (double c : costs_.group_lazy) {
      total += c;
      largest = std::max(largest, c);
    }
    if (!std::isfinite(2.0 * total)) {
      Log::Fatal("cegb_penalty_feature_lazy: with cegb_budget=%g the lazy costs must sum to at most %g, got a "
                 "sum that overflows a double (largest cost %g); divide the costs and cegb_budget by a common "
                 "factor", cfg().cegb_budget, std::numeric_limits<double>::max() / 2, largest);
    }
  }

  /*! \brief spent_ = sum over groups of lazy cost x share of the training rows that have paid it (exact). */
  void UpdateSpent() {
    const double n = static_cast<double>(std::max<data_size_t>(1, num_rows_));
    double spent = 0.0;
    for (int g = 0; g < costs_.num_groups; ++g) {
      if (costs_.group_lazy[g] > 0.0) spent += costs_.group_lazy[g] * (static_cast<double>(paid_rows_[g]) / n);
    }
    spent_ = spent;
  }

  /*!
   * \brief Whether `unpaid` (in-bag) rows of a leaf buying group g would take the mean per-row
   *        cost over cegb_budget: spent + c_g * unpaid / in-bag > budget (with a relative
   *        tolerance of 1e-12 for the rounding of the sums). Per-row units: no product overflows.
   */
  inline bool OverBudget(int g, data_size_t unpaid) const {
    if (unpaid <= 0) return false;
    const double budget = cfg().cegb_budget;
    const double added = costs_.group_lazy[g] * (static_cast<double>(unpaid) * row_share_);
    return spent_ + added > budget + budget * 1e-12;
  }

  /*!
   * \brief After a purchase: a leaf whose cached best split now buys over the budget falls back
   *        to its best cached split that does not (or to no split). The unpaid counts of the other
   *        leaves are unchanged by the purchase (their rows did not pay), only spent_ grew.
   */
  void EnforceBudget(int num_leaves, int best_leaf, std::vector<SplitInfo>* best_split_per_leaf) {
    auto& best = *best_split_per_leaf;
    for (int i = 0; i < num_leaves; ++i) {
      if (i == best_leaf || best[i].gain <= kMinScore || best[i].feature < 0) continue;
      if (!CachedSplitOverBudget(i, full_data_->InnerFeatureIndex(best[i].feature))) continue;
      SplitInfo fallback;
      for (int f = 0; f < num_features_; ++f) {
        const SplitInfo& split = splits_per_leaf_[Slot(i, f)];
        if (split.gain <= kMinScore || CachedSplitOverBudget(i, f)) continue;
        if (split > fallback) fallback = split;
      }
      best[i] = fallback;
    }
  }

  inline bool CachedSplitOverBudget(int leaf, int inner_feature) {
    if (inner_feature < 0) return false;
    const int g = inner_group_[inner_feature];
    if (costs_.group_lazy[g] <= 0.0) return false;
    return OverBudget(g, UnpaidCount(g, leaf));
  }

  void AfterSplitLocal(int left_leaf, int right_leaf) {
    if (paid_.empty() || cfg().cegb_lazy_reference_scan) return;
    const DataPartition* partition = tree_learner_->data_partition_.get();
    const bool left_smaller = partition->leaf_count(left_leaf) < partition->leaf_count(right_leaf);
    const int smaller = left_smaller ? left_leaf : right_leaf;
    const int larger = left_smaller ? right_leaf : left_leaf;
    // parent counts live in the left (= parent) slot until overwritten
    std::vector<data_size_t> parent(UnpaidOf(left_leaf), UnpaidOf(left_leaf) + costs_.num_groups);
    CountUnpaid(smaller, UnpaidOf(smaller));
    data_size_t* big = UnpaidOf(larger);
    const data_size_t* small = UnpaidOf(smaller);
    for (int g = 0; g < costs_.num_groups; ++g) big[g] = parent[g] - small[g];
  }

 public:
  /*!
   * \brief Called with every finished tree: every training row pays for its path. In-bag rows
   *        were marked while the tree grew (except in GreedyMiser mode, where they are marked
   *        now, from their leaves); out-of-bag rows are routed through the tree.
   */
  void AfterTrain(const Tree* tree) {
    MarkCoupled(*tree);
    if (!paid_.empty()) {
      const DataPartition* partition = tree_learner_->data_partition_.get();
      std::vector<int8_t> in_bag;
      data_size_t bag_count = 0;
      for (int leaf = 0; leaf < tree->num_leaves(); ++leaf) bag_count += partition->leaf_count(leaf);
      const bool all_in_bag = bag_count == num_rows_;
      if (cfg().cegb_independent_branches) {
        MarkInBagFromLeaves(*tree);
      }
      if (!all_in_bag) {
        in_bag.assign(num_rows_, 0);
        for (int leaf = 0; leaf < tree->num_leaves(); ++leaf) {
          data_size_t cnt = 0;
          const data_size_t* idx = partition->GetIndexOnLeaf(leaf, &cnt);
          for (data_size_t j = 0; j < cnt; ++j) in_bag[GlobalRow(idx[j])] = 1;
        }
        RouteRows(*tree, &in_bag);
      }
    }
    accounted_.push_back(tree);
  }

 private:
  inline const Config& cfg() const { return *tree_learner_->config_; }

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

  inline data_size_t GlobalRow(data_size_t partition_index) const {
    return bag_indices_ == nullptr ? partition_index : bag_indices_[partition_index];
  }

  // Paid bits: row-major, `words_per_row_` 64-bit words per row, bit g of a row's words = the
  // row has paid group g. Threads that own disjoint rows never share a word.
  void AllocatePaidBits() {
    num_rows_ = full_data_->num_data();
    words_per_row_ = (static_cast<size_t>(costs_.num_groups) + 63) / 64;
    paid_.assign(static_cast<size_t>(num_rows_) * words_per_row_, 0);
    paid_rows_.assign(costs_.num_groups, 0);
  }
  inline bool IsPaid(int group, data_size_t row) const {
    return (paid_[static_cast<size_t>(row) * words_per_row_ + (group >> 6)] >> (group & 63)) & 1;
  }
  /*! \brief Set the bit; true if it was not set (callers add that to paid_rows_). */
  inline bool SetPaid(int group, data_size_t row) {
    uint64_t& word = paid_[static_cast<size_t>(row) * words_per_row_ + (group >> 6)];
    const uint64_t bit = uint64_t(1) << (group & 63);
    const bool fresh = !(word & bit);
    word |= bit;
    return fresh;
  }

  inline data_size_t* UnpaidOf(int leaf) { return unpaid_.data() + static_cast<size_t>(leaf) * costs_.num_groups; }

  data_size_t UnpaidCount(int group, int leaf) {
    if (!cfg().cegb_lazy_reference_scan) return UnpaidOf(leaf)[group];
    // reference: scan every row of the leaf
    data_size_t cnt = 0;
    const data_size_t* idx = tree_learner_->data_partition_->GetIndexOnLeaf(leaf, &cnt);
    data_size_t unpaid = 0;
    for (data_size_t j = 0; j < cnt; ++j) {
      unpaid += !IsPaid(group, GlobalRow(idx[j]));
    }
    return unpaid;
  }

  /*!
   * \brief out[g] = rows of `leaf` that have not paid active group g. A group no row has paid
   *        yet counts every row of the leaf, a group every row has paid counts none; only the
   *        partially paid groups are counted row by row.
   */
  void CountUnpaid(int leaf, data_size_t* out) {
    const int num_groups = costs_.num_groups;
    data_size_t cnt = 0;
    const data_size_t* idx = tree_learner_->data_partition_->GetIndexOnLeaf(leaf, &cnt);
    std::vector<uint64_t> partial(words_per_row_, 0);
    bool any_partial = false;
    for (int g = 0; g < num_groups; ++g) {
      const bool active = (active_[g >> 6] >> (g & 63)) & 1;
      if (!active || paid_rows_[g] == num_rows_) {
        out[g] = 0;
      } else if (paid_rows_[g] == 0) {
        out[g] = cnt;
      } else {
        out[g] = 0;
        partial[g >> 6] |= uint64_t(1) << (g & 63);
        any_partial = true;
      }
    }
    if (!any_partial) return;
    const int nthreads = cnt >= 16384 ? OMP_NUM_THREADS() : 1;
    std::vector<data_size_t> local(static_cast<size_t>(nthreads) * num_groups, 0);
    #pragma omp parallel for num_threads(nthreads) schedule(static)
    for (int t = 0; t < nthreads; ++t) {
      data_size_t* mine = local.data() + static_cast<size_t>(t) * num_groups;
      const data_size_t begin = static_cast<data_size_t>(static_cast<int64_t>(cnt) * t / nthreads);
      const data_size_t end = static_cast<data_size_t>(static_cast<int64_t>(cnt) * (t + 1) / nthreads);
      for (size_t w = 0; w < words_per_row_; ++w) {
        if (partial[w] != 0) CountWord(idx, begin, end, w, partial[w], mine + (w << 6));
      }
    }
    for (int t = 0; t < nthreads; ++t) {
      for (int g = 0; g < num_groups; ++g) out[g] += local[static_cast<size_t>(t) * num_groups + g];
    }
  }

  /*!
   * \brief out[b] += rows idx[begin..end) whose paid word `w` lacks bit b of `mask` (b < 64).
   *
   * Bit-sliced counters (a vertical adder): plane k holds bit k of every group's count, so a
   * row adds its 64 unpaid bits in a few word operations instead of one memory increment per
   * bit; the planes are read out every 255 rows. The counts are the same integers.
   */
  void CountWord(const data_size_t* idx, data_size_t begin, data_size_t end, size_t w, uint64_t mask,
                 data_size_t* out) const {
    constexpr int kPlanes = 8;  // counts up to 255 before a read-out
    uint64_t plane[kPlanes] = {0};
    int pending = 0;
    auto read_out = [&]() {
      for (uint64_t m = mask; m; m &= m - 1) {
        const int b = __builtin_ctzll(m);
        data_size_t c = 0;
        for (int k = 0; k < kPlanes; ++k) c |= static_cast<data_size_t>((plane[k] >> b) & 1) << k;
        out[b] += c;
      }
      for (int k = 0; k < kPlanes; ++k) plane[k] = 0;
      pending = 0;
    };
    for (data_size_t j = begin; j < end; ++j) {
      uint64_t carry = ~paid_[static_cast<size_t>(GlobalRow(idx[j])) * words_per_row_ + w] & mask;
      for (int k = 0; k < kPlanes; ++k) {  // no early exit: unrolled, without branches
        const uint64_t next = plane[k] & carry;
        plane[k] ^= carry;
        carry = next;
      }
      if (++pending == (1 << kPlanes) - 1) read_out();
    }
    if (pending > 0) read_out();
  }

  // ---- distributed training -------------------------------------------------------------

  void InitDistributed(const Config& config) {
    const bool distributed = Network::num_machines() > 1 && config.tree_learner != std::string("serial");
    if (distributed && scale_by_root_gain_) {
      // the root gain is searched over one machine's features and rows: ranks would disagree
      Log::Fatal("cegb_tradeoff_scale=%s is not supported with a distributed tree_learner (%s); use "
                 "cegb_tradeoff_scale=none", config.cegb_tradeoff_scale.c_str(), config.tree_learner.c_str());
    }
    rows_partitioned_ = distributed && config.is_data_based_parallel;
    splits_partitioned_ = distributed;
    if (rows_partitioned_) {
      global_count_.assign(config.num_leaves, 0);
      unpaid_global_.assign(paid_.empty() ? 0 : static_cast<size_t>(config.num_leaves) * costs_.num_groups, 0);
    } else {
      global_count_.clear();
      unpaid_global_.clear();
    }
  }

  /*! \brief Reference scan of `leaf`'s local rows: out[g] = rows that have not paid active group g. */
  void ScanUnpaid(int leaf, data_size_t* out) {
    for (int g = 0; g < costs_.num_groups; ++g) {
      const bool active = (active_[g >> 6] >> (g & 63)) & 1;
      out[g] = active ? UnpaidCount(g, leaf) : 0;
    }
  }

  /*!
   * \brief Rows partitioned over machines: sum the local row counts (and unpaid counts) of
   *        `leaf_a` and `leaf_b` (-1: none) over the machines. Called by every rank at the same
   *        points (BeforeTrain, every split), whatever its local rows.
   */
  void SyncGlobalCounts(int leaf_a, int leaf_b) {
    const bool reference = cfg().cegb_lazy_reference_scan;
    if (leaf_b < 0 && !paid_.empty() && reference) ScanUnpaid(leaf_a, UnpaidOf(leaf_a));
    const int groups = paid_.empty() ? 0 : costs_.num_groups;
    const int leaves[2] = {leaf_a, leaf_b};
    std::vector<data_size_t> local;
    local.reserve(2 * (1 + groups));
    for (int leaf : leaves) {
      if (leaf < 0) continue;
      local.push_back(tree_learner_->data_partition_->leaf_count(leaf));
      for (int g = 0; g < groups; ++g) local.push_back(UnpaidOf(leaf)[g]);
    }
    std::vector<data_size_t> global = Network::GlobalSum(&local);
    size_t k = 0;
    for (int leaf : leaves) {
      if (leaf < 0) continue;
      global_count_[leaf] = global[k++];
      for (int g = 0; g < groups; ++g) unpaid_global_[static_cast<size_t>(leaf) * groups + g] = global[k++];
    }
  }

  /*!
   * \brief After a coupled refund: every leaf's best split becomes the best over the machines
   *        (SplitInfo's order is total: gain, then the lower feature index, so this equals the
   *        serial learner's sequential max). Non-owners cached nothing and contribute unchanged
   *        best splits, identical on every rank before the refund.
   */
  void SyncRefundedBestSplits(int num_leaves, std::vector<SplitInfo>* best) {
    const int size = SplitInfo::Size(cfg().max_cat_threshold);
    std::vector<char> input(static_cast<size_t>(size) * num_leaves);
    std::vector<char> output(input.size());
    for (int i = 0; i < num_leaves; ++i) (*best)[i].CopyTo(input.data() + static_cast<size_t>(i) * size);
    Network::Allreduce(input.data(), static_cast<comm_size_t>(input.size()), size, output.data(),
                       [](const char* src, char* dst, int type_size, comm_size_t len) {
      comm_size_t used_size = 0;
      LightSplitInfo p1, p2;
      while (used_size < len) {
        p1.CopyFrom(src);
        p2.CopyFrom(dst);
        if (p1 > p2) std::memcpy(dst, src, type_size);
        src += type_size;
        dst += type_size;
        used_size += type_size;
      }
    });
    for (int i = 0; i < num_leaves; ++i) (*best)[i].CopyFrom(output.data() + static_cast<size_t>(i) * size);
  }

  /*! \brief Account for one tree of the model: coupled flags, and lazy bits for every row. */
  void MarkTree(const Tree& tree) {
    MarkCoupled(tree);
    if (!paid_.empty()) RouteRows(tree, nullptr);
  }

  void MarkCoupled(const Tree& tree) {
    for (int node = 0; node < tree.num_leaves() - 1; ++node) {
      const int real = tree.split_feature(node);
      if (real >= 0 && real < static_cast<int>(costs_.group.size()) && !is_group_used_.empty()) {
        is_group_used_[costs_.group[real]] = true;
      }
    }
  }

  /*! \brief GreedyMiser mode: in-bag rows pay for the groups on their leaf's path. */
  void MarkInBagFromLeaves(const Tree& tree) {
    const DataPartition* partition = tree_learner_->data_partition_.get();
    const std::vector<std::vector<int>> paths = LeafPaths(tree);
    std::vector<data_size_t> fresh(costs_.num_groups, 0);
    for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
      std::vector<int> groups;
      for (int node : paths[leaf]) {
        const int f = full_data_->InnerFeatureIndex(tree.split_feature(node));
        if (f >= 0) groups.push_back(inner_group_[f]);
      }
      data_size_t cnt = 0;
      const data_size_t* idx = partition->GetIndexOnLeaf(leaf, &cnt);
      for (int g : groups) {
        for (data_size_t j = 0; j < cnt; ++j) fresh[g] += SetPaid(g, GlobalRow(idx[j]));
      }
    }
    for (int g = 0; g < costs_.num_groups; ++g) paid_rows_[g] += fresh[g];
  }

  /*!
   * \brief Route training rows (all, or those with skip[row] == 0) through `tree` by their bins
   *        (BinRouter) and mark the groups on their paths.
   */
  void RouteRows(const Tree& tree, const std::vector<int8_t>* skip) {
    if (tree.num_leaves() <= 1) return;
    // per leaf: the groups its path tests, once each
    const std::vector<std::vector<int>> paths = LeafPaths(tree);
    std::vector<std::vector<int>> leaf_groups(tree.num_leaves());
    for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
      for (int node : paths[leaf]) {
        const int f = full_data_->InnerFeatureIndex(tree.split_feature(node));
        if (f < 0) continue;
        std::vector<int>& groups = leaf_groups[leaf];
        if (std::find(groups.begin(), groups.end(), inner_group_[f]) == groups.end()) groups.push_back(inner_group_[f]);
      }
    }
    const BinRouter router(tree, *full_data_);
    std::vector<data_size_t> fresh(static_cast<size_t>(BinRouter::NumBlocks(num_rows_)) * costs_.num_groups, 0);
    router.ForEachRow(
        num_rows_, [skip](data_size_t row) { return skip != nullptr && (*skip)[row] != 0; },
        [&](int block, data_size_t row, int leaf) {
          data_size_t* my_fresh = fresh.data() + static_cast<size_t>(block) * costs_.num_groups;
          for (int g : leaf_groups[leaf]) my_fresh[g] += SetPaid(g, row);
        });
    for (size_t i = 0; i < fresh.size(); ++i) paid_rows_[static_cast<int>(i % costs_.num_groups)] += fresh[i];
  }

  const SerialTreeLearner* tree_learner_;
  const Dataset* full_data_ = nullptr;
  const data_size_t* bag_indices_ = nullptr;
  CEGBCosts costs_;
  std::vector<int> inner_group_;
  int num_features_ = 0;
  data_size_t num_rows_ = 0;
  size_t words_per_row_ = 0;
  std::vector<SplitInfo> splits_per_leaf_;
  std::vector<double> pending_refund_;
  std::vector<double> refund_;
  std::vector<bool> is_group_used_;
  std::vector<uint64_t> paid_;
  std::vector<data_size_t> paid_rows_;  // per group: training rows that have paid it
  std::vector<uint64_t> active_;
  std::vector<data_size_t> unpaid_;
  std::vector<const Tree*> accounted_;
  bool models_dirty_ = true;
  bool scale_by_root_gain_ = false;
  int scale_mode_ = 0;            // cegb_tradeoff_scale: 0 none, 1 gain (every tree), 2 first_gain
  bool scale_fixed_ = false;      // first_gain: the scale of the first tree is set
  double scale_ = 1.0;            // cegb_tradeoff_scale=gain: this tree's max_f G_f / (N * lazy cost of f)
  // cegb_budget
  double spent_ = 0.0;            // sum_g lazy[g] * (share of the training rows that have paid g)
  double row_share_ = 1.0;        // 1 / in-bag rows of the tree being grown (the training rows without bagging)
  bool forced_budget_warned_ = false;
  // distributed training
  bool rows_partitioned_ = false;    // data / voting parallel: rows split over the machines
  bool splits_partitioned_ = false;  // any distributed learner: features' splits found by owners
  bool local_pass_ = false;          // the voting learner's local vote is running
  std::vector<data_size_t> global_count_;   // per leaf: rows on all machines
  std::vector<data_size_t> unpaid_global_;  // per leaf x group: unpaid rows on all machines
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_TREELEARNER_CEGB_COST_EFFICIENT_GRADIENT_BOOSTING_HPP_
