/*!
 * lightgbm-cegb: every tree's structure as flat arrays (LGBM_BoosterGetTreeArrays).
 *
 * budget_extras measures each cross-validation fold fit from which leaf a row reaches and the
 * features on that leaf's path. Those come from each tree's num_leaves, split_feature,
 * left_child, right_child and leaf_value, which it read from Booster.model_to_string(): on a
 * small table, writing and reading that text cost about half of all the measuring. This copies
 * the same numbers out of the trees: split_feature is the real feature index (as the text
 * writes it) and leaf_value the stored doubles (the text writes them with 17 significant digits,
 * so reading the text back gives the same doubles).
 */
#ifndef LIGHTGBM_SRC_BOOSTING_TREE_ARRAYS_HPP_
#define LIGHTGBM_SRC_BOOSTING_TREE_ARRAYS_HPP_

#include <LightGBM/boosting.h>
#include <LightGBM/objective_function.h>
#include <LightGBM/tree.h>
#include <LightGBM/utils/log.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace LightGBM {

/*! \brief The arrays LGBM_BoosterGetTreeArrays copies: buffer lengths in, sizes out. */
struct TreeArrays {
  /*! \brief Flag bit: some tree is a linear tree (its leaves' outputs are not leaf_value alone). */
  static constexpr int kLinear = 1;
  /*! \brief Flag bit: the model averages its trees (a random forest) instead of summing them. */
  static constexpr int kAverageOutput = 2;

  int64_t tree_len = 0;       // length of num_leaves
  int64_t node_len = 0;       // length of split_feature, left_child, right_child
  int64_t leaf_len = 0;       // length of leaf_value
  int64_t objective_len = 0;  // length of objective (bytes, with the terminating NUL)
  int64_t* out_num_trees = nullptr;
  int64_t* out_num_nodes = nullptr;
  int64_t* out_num_leaves = nullptr;
  int64_t* out_objective_len = nullptr;
  int* out_flags = nullptr;
  int32_t* num_leaves = nullptr;
  int32_t* split_feature = nullptr;
  int32_t* left_child = nullptr;
  int32_t* right_child = nullptr;
  double* leaf_value = nullptr;
  char* objective = nullptr;
};

/*!
 * \brief Write the sizes and flags of `models` into `out`; with buffers, copy the arrays too.
 *
 * All six buffers null: only the sizes and flags are written. Otherwise every buffer must be
 * given and long enough, else Log::Fatal before anything is copied.
 */
inline void CopyTreeArrays(const std::vector<std::unique_ptr<Tree>>& models, bool average_output,
                           const ObjectiveFunction* objective, TreeArrays* out) {
  if (out->out_num_trees == nullptr || out->out_num_nodes == nullptr || out->out_num_leaves == nullptr ||
      out->out_objective_len == nullptr || out->out_flags == nullptr) {
    Log::Fatal("LGBM_BoosterGetTreeArrays: out_num_trees, out_num_nodes, out_num_leaves, out_objective_len "
               "and out_flags must not be null");
  }
  int64_t nodes = 0, leaves = 0;
  int flags = average_output ? TreeArrays::kAverageOutput : 0;
  for (const auto& tree : models) {
    nodes += tree->num_leaves() - 1;
    leaves += tree->num_leaves();
    if (tree->is_linear()) flags |= TreeArrays::kLinear;
  }
  const std::string name = objective == nullptr ? std::string() : objective->ToString();
  const int64_t trees = static_cast<int64_t>(models.size());
  const int64_t name_len = static_cast<int64_t>(name.size()) + 1;
  *out->out_num_trees = trees;
  *out->out_num_nodes = nodes;
  *out->out_num_leaves = leaves;
  *out->out_objective_len = name_len;
  *out->out_flags = flags;
  const bool any = out->num_leaves || out->split_feature || out->left_child || out->right_child ||
                   out->leaf_value || out->objective;
  if (!any) return;  // the sizes only
  if (!(out->num_leaves && out->split_feature && out->left_child && out->right_child && out->leaf_value &&
        out->objective)) {
    Log::Fatal("LGBM_BoosterGetTreeArrays: give all six buffers (num_leaves, split_feature, left_child, "
               "right_child, leaf_value, objective) or none (to read the sizes)");
  }
  if (out->tree_len < trees || out->node_len < nodes || out->leaf_len < leaves || out->objective_len < name_len) {
    Log::Fatal("LGBM_BoosterGetTreeArrays: buffers too short: need tree_len >= %lld, node_len >= %lld, "
               "leaf_len >= %lld, objective_len >= %lld; got %lld, %lld, %lld, %lld",
               static_cast<long long>(trees), static_cast<long long>(nodes), static_cast<long long>(leaves),
               static_cast<long long>(name_len), static_cast<long long>(out->tree_len),
               static_cast<long long>(out->node_len), static_cast<long long>(out->leaf_len),
               static_cast<long long>(out->objective_len));
  }
  int64_t node = 0, leaf = 0;
  for (int64_t t = 0; t < trees; ++t) {
    const Tree& tree = *models[t];
    const int n = tree.num_leaves();
    out->num_leaves[t] = n;
    for (int i = 0; i < n - 1; ++i, ++node) {
      out->split_feature[node] = tree.split_feature(i);
      out->left_child[node] = tree.left_child(i);
      out->right_child[node] = tree.right_child(i);
    }
    for (int i = 0; i < n; ++i, ++leaf) out->leaf_value[leaf] = tree.LeafOutput(i);
  }
  std::memcpy(out->objective, name.c_str(), static_cast<size_t>(name_len));
}

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_BOOSTING_TREE_ARRAYS_HPP_
