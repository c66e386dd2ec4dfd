/*!
 * Copyright (c) 2026 lightgbm-cegb contributors. Licensed under the MIT License.
 *
 * \brief The features some interaction constraint names: the only ones a node may split on.
 *
 * With interaction_constraints, ColSampler::GetByNode allows at a node only features of the
 * constraints that hold every feature on the node's branch (at the root: every constraint), so
 * no node of any tree splits on a feature outside the union of the constraints. LightGBM still
 * builds the histograms of every feature of the tree (is_feature_used_bytree) and finds their
 * best thresholds, only to discard them: with a constraint of k of m features, a training
 * spends about (m - k) / m of its histogram work on features it never splits on. Masking the
 * per-tree features to the union skips that work; the trees are the same (every feature a node
 * may use keeps its histogram, the row order of every sum is unchanged).
 */
#ifndef LIGHTGBM_SRC_TREELEARNER_CONSTRAINED_FEATURES_HPP_
#define LIGHTGBM_SRC_TREELEARNER_CONSTRAINED_FEATURES_HPP_

#include <LightGBM/dataset.h>

#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <vector>

namespace LightGBM {

/*!
 * \brief Per inner feature: 1 if an interaction constraint names it; empty without constraints.
 * \param constraints The constraints as sets of raw (column) feature indices.
 * \param data The training Dataset (raw to inner feature indices; unnamed or trivial features: 0).
 */
inline std::vector<int8_t> ConstrainedFeatureMask(const std::vector<std::unordered_set<int>>& constraints,
                                                  const Dataset* data) {
  std::vector<int8_t> mask;
  if (constraints.empty() || data == nullptr) return mask;
  mask.assign(static_cast<size_t>(data->num_features()), 0);
  for (const auto& constraint : constraints) {
    for (int feature : constraint) {
      if (feature < 0 || feature >= data->num_total_features()) continue;
      const int inner = data->InnerFeatureIndex(feature);
      if (inner >= 0) mask[static_cast<size_t>(inner)] = 1;
    }
  }
  return mask;
}

/*! \brief Clear the features of `is_feature_used` that `mask` (ConstrainedFeatureMask) leaves out; none when it is empty. */
inline void KeepConstrainedFeatures(const std::vector<int8_t>& mask, std::vector<int8_t>* is_feature_used) {
  if (mask.empty()) return;
  const size_t n = std::min(mask.size(), is_feature_used->size());
  for (size_t i = 0; i < n; ++i) {
    if (!mask[i]) (*is_feature_used)[i] = 0;
  }
}

}  // namespace LightGBM
#endif  // LIGHTGBM_SRC_TREELEARNER_CONSTRAINED_FEATURES_HPP_
