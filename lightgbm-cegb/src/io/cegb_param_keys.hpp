/*!
 * lightgbm-cegb: an unknown cegb_* parameter key is an error.
 *
 * Upstream LightGBM only warns about an unknown parameter ("Unknown parameter: x", shown only when
 * verbose), so a misspelled CEGB key (cegb_penalty_feature_lazzy) trains a plain model in silence.
 * A key starting with "cegb" (any case) that is neither a parameter nor an alias is refused, naming
 * the key and the nearest known cegb_* parameter (edit distance).
 */
#ifndef LIGHTGBM_SRC_IO_CEGB_PARAM_KEYS_HPP_
#define LIGHTGBM_SRC_IO_CEGB_PARAM_KEYS_HPP_

#include <LightGBM/config.h>
#include <LightGBM/utils/log.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

namespace LightGBM {
namespace cegb_keys {

/*! \brief Levenshtein distance (insertions, deletions, substitutions) between two short keys. */
inline size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

inline bool LooksLikeCEGBKey(const std::string& key) {
  if (key.size() < 4) return false;
  std::string head = key.substr(0, 4);
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
  return head == "cegb";
}

/*! \brief The known cegb_* parameter nearest to `key` (ties: the alphabetically first). */
inline std::string NearestCEGBParameter(const std::string& key) {
  std::vector<std::string> names;
  for (const auto& name : Config::parameter_set()) {
    if (name.compare(0, 5, "cegb_") == 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::string nearest;
  size_t best = static_cast<size_t>(-1);
  for (const auto& name : names) {
    const size_t d = EditDistance(key, name);
    if (d < best) {
      best = d;
      nearest = name;
    }
  }
  return nearest;
}

/*!
 * \brief Log::Fatal for the first (alphabetically) key of `params` that looks like a CEGB
 *        parameter but is none: a misspelled CEGB parameter would otherwise be ignored.
 */
inline void RefuseUnknownCEGBKeys(const std::unordered_map<std::string, std::string>& params) {
  std::vector<std::string> unknown;
  for (const auto& param : params) {
    const std::string& key = param.first;
    if (!LooksLikeCEGBKey(key)) continue;
    if (Config::parameter_set().count(key) || Config::alias_table().count(key)) continue;
    unknown.push_back(key);
  }
  if (unknown.empty()) return;
  std::sort(unknown.begin(), unknown.end());
  Log::Fatal("Unknown parameter %s: not a CEGB parameter (did you mean %s?). lightgbm-cegb refuses unknown "
             "cegb_* keys, which would otherwise be ignored and train without them",
             unknown[0].c_str(), NearestCEGBParameter(unknown[0]).c_str());
}

}  // namespace cegb_keys
}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_IO_CEGB_PARAM_KEYS_HPP_
