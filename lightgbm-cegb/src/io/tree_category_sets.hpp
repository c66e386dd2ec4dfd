/*!
 * lightgbm-cegb: the category sets of a tree read from a model text.
 *
 * Tree::Tree reads `cat_boundaries` (num_cat + 1 offsets into `cat_threshold`) and `cat_threshold`
 * (the bitset words of every category set) with CommonC::StringToArrayFast, which reads missing
 * entries as 0 and wraps a number beyond 32 bits. Upstream then allocates as many words as the last
 * (possibly wrapped) boundary says, gigabytes for a boundary near 2**31, and prediction reads
 * outside `cat_threshold` when the lists are shorter than their boundaries. The loader refuses such
 * a tree before reading either list: `cat_boundaries` has num_cat + 1 integers, starts at 0, does not
 * decrease, and its last value is the number of `cat_threshold` entries.
 */
#ifndef LIGHTGBM_SRC_IO_TREE_CATEGORY_SETS_HPP_
#define LIGHTGBM_SRC_IO_TREE_CATEGORY_SETS_HPP_

#include <LightGBM/utils/log.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

namespace LightGBM {

/*! \brief The number of words of `value` separated by spaces, as Common::Split(value, ' ') counts them. */
inline size_t CountModelTextWords(const std::string& value) {
  size_t n = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != ' ' && (i == 0 || value[i - 1] == ' ')) ++n;
  }
  return n;
}

/*!
 * \brief Log::Fatal unless `boundaries` (a tree's cat_boundaries) and `threshold` (its cat_threshold)
 *        describe `num_cat` category sets: num_cat + 1 integers, the first 0, none smaller than the one
 *        before, the last equal to the number of cat_threshold words.
 */
inline void CheckModelTextCategorySets(const std::string& boundaries, const std::string& threshold, int num_cat) {
  std::vector<long long> bounds;  // NOLINT(runtime/int)
  size_t i = 0;
  while (i < boundaries.size()) {
    if (boundaries[i] == ' ') { ++i; continue; }
    size_t j = boundaries.find(' ', i);
    if (j == std::string::npos) j = boundaries.size();
    const std::string word = boundaries.substr(i, j - i);
    char* stop = nullptr;
    errno = 0;
    const long long v = std::strtoll(word.c_str(), &stop, 10);  // NOLINT(runtime/int)
    if (word.empty() || *stop != '\0' || errno == ERANGE || v < 0 || v > INT_MAX ||
        !(word[0] == '-' || (word[0] >= '0' && word[0] <= '9'))) {
      Log::Fatal("Tree model string format error: 'cat_boundaries' must hold integers 0..%d, got '%s'",
                 INT_MAX, word.substr(0, 40).c_str());
    }
    bounds.push_back(v);
    i = j;
  }
  if (bounds.size() != static_cast<size_t>(num_cat) + 1) {
    Log::Fatal("Tree model string format error: 'cat_boundaries' must have %d values (num_cat + 1), got %zu",
               num_cat + 1, bounds.size());
  }
  for (size_t k = 0; k < bounds.size(); ++k) {
    if ((k == 0 && bounds[k] != 0) || (k > 0 && bounds[k] < bounds[k - 1])) {
      Log::Fatal("Tree model string format error: 'cat_boundaries' must start at 0 and not decrease, "
                 "got %lld at position %zu", bounds[k], k);
    }
  }
  const size_t words = CountModelTextWords(threshold);
  if (words != static_cast<size_t>(bounds.back())) {
    Log::Fatal("Tree model string format error: 'cat_threshold' must have %lld values (the last "
               "cat_boundaries value), got %zu", bounds.back(), words);
  }
}

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_IO_TREE_CATEGORY_SETS_HPP_
