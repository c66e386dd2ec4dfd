/*!
 * Copyright (c) 2026 The lightgbm-cegb authors.
 * Licensed under the MIT License (as LightGBM; see the LICENSE file in the root of the patched
 * LightGBM source tree).
 *
 * lightgbm-cegb: route a Dataset's rows through one tree by their bins, block-parallel, and the
 * internal nodes on each leaf's path. Shared by the CEGB learner (the lazy per-row bitsets of its
 * training rows) and metric=cegb_cost (the per-row cost of every dataset the Booster evaluates),
 * so both walk rows the same way.
 *
 * A bin's representative value is its upper bound (BinMapper::BinToValue), NaN for the NaN bin of
 * a numerical feature: exact for thresholds learned on this binning, which are always bin upper
 * bounds. A split on a feature the Dataset does not hold reads 0.0 for every row.
 */
#ifndef LIGHTGBM_SRC_TREELEARNER_CEGB_BIN_ROUTER_HPP_
#define LIGHTGBM_SRC_TREELEARNER_CEGB_BIN_ROUTER_HPP_

#include <LightGBM/bin.h>
#include <LightGBM/dataset.h>
#include <LightGBM/tree.h>
#include <LightGBM/utils/openmp_wrapper.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace LightGBM {

/*!
 * \brief For every leaf of `tree`, the internal nodes on its path, from the leaf's parent up to the root.
 *        Walks the child links: a Tree loaded from a model text keeps no leaf parents.
 */
inline std::vector<std::vector<int>> LeafPaths(const Tree& tree) {
  std::vector<std::vector<int>> paths(tree.num_leaves());
  if (tree.num_leaves() <= 1) return paths;
  std::vector<std::pair<int, std::vector<int>>> todo{{0, {}}};
  while (!todo.empty()) {
    std::pair<int, std::vector<int>> top = std::move(todo.back());
    todo.pop_back();
    top.second.push_back(top.first);
    for (int child : {tree.left_child(top.first), tree.right_child(top.first)}) {
      if (child < 0) {
        paths[~child] = top.second;
      } else {
        todo.emplace_back(child, top.second);
      }
    }
  }
  for (std::vector<int>& path : paths) std::reverse(path.begin(), path.end());
  return paths;
}

/*! \brief Routes a Dataset's rows through one tree by their bins. */
class BinRouter {
 public:
  /*! \brief Precompute, per internal node and bin of its feature, whether a row of that bin goes left. */
  BinRouter(const Tree& tree, const Dataset& data) : tree_(tree), data_(data) {
    const int num_internal = std::max(0, tree.num_leaves() - 1);
    inner_.resize(num_internal);
    first_bin_.resize(num_internal);
    for (int node = 0; node < num_internal; ++node) {
      const int f = data.InnerFeatureIndex(tree.split_feature(node));
      inner_[node] = f;
      first_bin_[node] = goes_left_.size();
      if (f < 0) {  // not in this dataset: every row reads 0
        goes_left_.push_back(tree.NextNode(0.0, node) == tree.left_child(node));
        continue;
      }
      const BinMapper* mapper = data.FeatureBinMapper(f);
      const int num_bin = mapper->num_bin();
      for (int bin = 0; bin < num_bin; ++bin) {
        const bool nan_bin = mapper->missing_type() == MissingType::NaN && bin == num_bin - 1 &&
                             mapper->bin_type() == BinType::NumericalBin;
        const double value = nan_bin ? std::nan("") : mapper->BinToValue(static_cast<uint32_t>(bin));
        goes_left_.push_back(tree.NextNode(value, node) == tree.left_child(node));
      }
    }
  }

  /*! \brief The Dataset's inner index of internal node `node`'s feature (-1: not in the Dataset). */
  int InnerFeature(int node) const { return inner_[node]; }

  /*! \brief Rows per block of ForEachRow over `n` rows. */
  static data_size_t BlockSize(data_size_t n) {
    return std::max<data_size_t>(4096, n / std::max(1, OMP_NUM_THREADS() * 4) + 1);
  }

  /*! \brief Blocks of ForEachRow over `n` rows (the range of its `block` argument). */
  static int NumBlocks(data_size_t n) {
    const data_size_t block = BlockSize(n);
    return static_cast<int>((n + block - 1) / block);
  }

  /*!
   * \brief Call visit(block, row, leaf) for every row in [0, n) for which skip(row) is false.
   *        Blocks of consecutive rows run in parallel (OpenMP), the rows of a block in order;
   *        `block` is in [0, NumBlocks(n)), so a caller can keep per-block sums without locks.
   */
  template <typename Skip, typename Visit>
  void ForEachRow(data_size_t n, const Skip& skip, const Visit& visit) const {
    const int num_internal = static_cast<int>(inner_.size());
    const data_size_t block = BlockSize(n);
    const int num_blocks = NumBlocks(n);
    OMP_INIT_EX();
    #pragma omp parallel for num_threads(OMP_NUM_THREADS()) schedule(dynamic, 1)
    for (int b = 0; b < num_blocks; ++b) {
      OMP_LOOP_EX_BEGIN();
      const data_size_t start = static_cast<data_size_t>(b) * block;
      const data_size_t end = std::min<data_size_t>(n, start + block);
      std::vector<std::unique_ptr<BinIterator>> iters(data_.num_features());
      for (int node = 0; node < num_internal; ++node) {
        const int f = inner_[node];
        if (f >= 0 && iters[f] == nullptr) {
          iters[f].reset(data_.FeatureIterator(f));
          iters[f]->Reset(start);
        }
      }
      for (data_size_t row = start; row < end; ++row) {
        if (skip(row)) continue;
        int node = num_internal > 0 ? 0 : ~0;
        while (node >= 0) {
          const int f = inner_[node];
          const uint32_t bin = f >= 0 ? iters[f]->Get(row) : 0;
          node = goes_left_[first_bin_[node] + bin] ? tree_.left_child(node) : tree_.right_child(node);
        }
        visit(b, row, ~node);
      }
      OMP_LOOP_EX_END();
    }
    OMP_THROW_EX();
  }

 private:
  const Tree& tree_;
  const Dataset& data_;
  std::vector<int> inner_;         // per internal node: its feature's inner index, -1 = not in the Dataset
  std::vector<size_t> first_bin_;  // per internal node: its first entry in goes_left_
  std::vector<uint8_t> goes_left_;
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_TREELEARNER_CEGB_BIN_ROUTER_HPP_
