/*!
 * Copyright (c) 2026 The lightgbm-cegb authors.
 * Licensed under the MIT License (as LightGBM; see the LICENSE file in the root of the patched
 * LightGBM source tree).
 *
 * lightgbm-cegb: resolution of the per-feature CEGB cost specification.
 *
 * Sources, for each per-feature parameter (lazy, coupled, split, group):
 *   1. the positional vector parameter (cegb_penalty_feature_lazy=1,2,...),
 *   2. a named specification "name:value,name:value" given for the same parameter (Python: a
 *      dict or pandas Series; kept by Config::Set in Config::cegb_named_costs),
 *   3. a column of the CSV file named by cegb_cost_file (columns: feature, lazy or cost, coupled,
 *      split, group, group_cost, tree; `feature` is a feature name or a 0-based column index;
 *      the same format as budget_extras.FeatureCosts.from_csv).
 * A parameter given by two sources is an error. Features a named spec or the file leaves out
 * cost 0 (and form their own group). Every value must be finite and >= 0; group ids of the
 * parameters integers in 0..2^31-1 (int32), or -1 for no group; the file's group cells are text
 * labels (empty or -1 for no group). A group's lazy cost is the file's group_cost for it, else
 * the max of its members' lazy costs. The file's tree column (the per-tree evaluation cost) is
 * read and checked; training does not use it (metric=cegb_cost counts it).
 */
#ifndef LIGHTGBM_SRC_TREELEARNER_CEGB_CEGB_COSTS_HPP_
#define LIGHTGBM_SRC_TREELEARNER_CEGB_CEGB_COSTS_HPP_

#include <LightGBM/config.h>
#include <LightGBM/utils/common.h>
#include <LightGBM/utils/log.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace LightGBM {

/*! \brief What cegb_cost_file gives. */
struct CEGBCostFile {
  // lazy, coupled, split: per feature; group: per feature the dense id of its label (in order of
  // first appearance over the features), -1 = no group
  std::map<std::string, std::vector<double>> columns;
  int num_groups = 0;
  std::vector<double> group_cost;  // per dense id: the file's group_cost, -1 = none given
  double tree = 0.0;               // the tree column: evaluation cost per tree (metric=cegb_cost counts it)
};

struct CEGBCosts {
  using CostFile = CEGBCostFile;
  std::vector<double> lazy;      // per real feature; empty = none
  std::vector<double> coupled;   // per real feature; empty = none
  std::vector<double> split;     // per real feature; empty = none
  std::vector<int> group;        // per real feature: dense group id 0..num_groups-1
  int num_groups = 0;
  std::vector<double> group_lazy;     // per group: the file's group_cost, else max of its members' lazy costs
  std::vector<double> group_coupled;  // per group: max of its members' coupled costs
  std::vector<std::vector<int>> group_members;  // real feature ids per group
  double tree = 0.0;  // the cost file's per-tree evaluation cost (training does not use it; metric=cegb_cost does)

  static CEGBCosts Resolve(const Config& config, const std::vector<std::string>& names) {
    const int n = static_cast<int>(names.size());
    std::unordered_map<std::string, int> index;
    for (int i = 0; i < n; ++i) index[names[i]] = i;
    const CostFile file = ReadCostFile(config.cegb_cost_file, names, index);

    CEGBCosts c;
    c.tree = file.tree;
    c.lazy = Pick("cegb_penalty_feature_lazy", config.cegb_penalty_feature_lazy, config, file, "lazy", names, index);
    c.coupled = Pick("cegb_penalty_feature_coupled", config.cegb_penalty_feature_coupled, config, file,
                     "coupled", names, index);
    c.split = Pick("cegb_penalty_feature_split", config.cegb_penalty_feature_split, config, file, "split",
                   names, index);
    std::vector<double> positional_group(config.cegb_feature_group.begin(), config.cegb_feature_group.end());
    std::vector<double> raw_group = Pick("cegb_feature_group", positional_group, config, file, "group", names,
                                         index, /*missing=*/-1.0);
    // dense group ids; features without a group are singletons
    std::map<long long, int> dense;
    c.group.assign(n, -1);
    for (int f = 0; f < n; ++f) {
      if (raw_group.empty() || raw_group[f] < 0) continue;
      const double g = raw_group[f];
      CheckValue("cegb_feature_group", names[f], g, /*is_group=*/true);
      auto it = dense.find(static_cast<long long>(g));
      if (it == dense.end()) it = dense.emplace(static_cast<long long>(g), c.num_groups++).first;
      c.group[f] = it->second;
    }
    for (int f = 0; f < n; ++f) {
      if (c.group[f] < 0) c.group[f] = c.num_groups++;
    }
    c.group_members.assign(c.num_groups, {});
    c.group_lazy.assign(c.num_groups, 0.0);
    c.group_coupled.assign(c.num_groups, 0.0);
    for (int f = 0; f < n; ++f) {
      const int g = c.group[f];
      c.group_members[g].push_back(f);
      if (!c.lazy.empty()) c.group_lazy[g] = std::max(c.group_lazy[g], c.lazy[f]);
      if (!c.coupled.empty()) c.group_coupled[g] = std::max(c.group_coupled[g], c.coupled[f]);
    }
    // the file's group_cost: the group's lazy cost instead of the max of its members'
    // (file groups are dense ids 0..file.num_groups-1 here: first appearance, as above)
    bool any_group_cost = false;
    for (int g = 0; g < file.num_groups; ++g) {
      if (file.group_cost[g] < 0.0) continue;
      c.group_lazy[g] = file.group_cost[g];
      any_group_cost = true;
    }
    if (any_group_cost && c.lazy.empty()) c.lazy.assign(n, 0.0);  // group costs are lazy costs
    return c;
  }

 private:
  static void CheckValue(const char* param, const std::string& feature, double v, bool is_group) {
    if (is_group) {
      // group ids are int32 (Config::cegb_feature_group): 1e19 must not wrap into another group
      if (v == -1.0) return;  // no group
      if (!(v >= 0.0 && v <= static_cast<double>(std::numeric_limits<int32_t>::max())) || v != std::floor(v)) {
        Log::Fatal("%s for feature %s must be an integer group id in 0..%d (or -1 for no group), got %.17g", param,
                   feature.c_str(), std::numeric_limits<int32_t>::max(), v);
      }
      return;
    }
    if (!std::isfinite(v) || v < 0.0) {
      Log::Fatal("%s for feature %s must be a finite number >= 0, got %g", param, feature.c_str(), v);
    }
  }

  static int FeatureIndex(const std::string& key, const std::vector<std::string>& names,
                          const std::unordered_map<std::string, int>& index, const char* where) {
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    // a 0-based column index is accepted too
    if (!key.empty() && key.size() <= 12 && key.find_first_not_of("0123456789") == std::string::npos) {
      const long long i = std::strtoll(key.c_str(), nullptr, 10);
      if (i < static_cast<long long>(names.size())) return static_cast<int>(i);
    }
    std::string known;
    for (size_t i = 0; i < names.size() && i < 12; ++i) known += (i ? ", " : "") + names[i];
    if (names.size() > 12) known += ", ...";
    Log::Fatal("%s: unknown feature '%s' (the training data's features are: %s)", where, key.c_str(),
               known.c_str());
    return -1;
  }

  static std::vector<double> Pick(const char* param, const std::vector<double>& positional, const Config& config,
                                  const CostFile& file, const char* column,
                                  const std::vector<std::string>& names,
                                  const std::unordered_map<std::string, int>& index, double missing = 0.0) {
    const bool is_group = std::string(param) == "cegb_feature_group";
    auto named = config.cegb_named_costs.find(param);
    auto from_file = file.columns.find(column);
    const int sources =
        !positional.empty() + (named != config.cegb_named_costs.end()) + (from_file != file.columns.end());
    if (sources > 1) {
      Log::Fatal("%s is given more than once (positional values, name:value pairs and/or column '%s' of "
                 "cegb_cost_file=%s): give it once", param, column, config.cegb_cost_file.c_str());
    }
    if (!positional.empty()) {
      if (positional.size() != names.size()) {
        Log::Fatal("%s should have one entry per feature: got %d entries for %d features", param,
                   static_cast<int>(positional.size()), static_cast<int>(names.size()));
      }
      for (size_t f = 0; f < positional.size(); ++f) CheckValue(param, names[f], positional[f], is_group);
      return positional;
    }
    if (from_file != file.columns.end()) return from_file->second;
    if (named == config.cegb_named_costs.end()) return {};
    std::vector<double> out(names.size(), missing);
    std::vector<bool> seen(names.size(), false);
    for (const std::string& item : Common::Split(named->second.c_str(), ',')) {
      const std::string entry = Common::Trim(item);
      if (entry.empty()) continue;
      const size_t colon = entry.rfind(':');
      if (colon == std::string::npos) {
        Log::Fatal("%s: expected name:value pairs separated by commas, got '%s'", param, entry.c_str());
      }
      const std::string key = Common::Trim(entry.substr(0, colon));
      const int f = FeatureIndex(key, names, index, param);
      if (seen[f]) Log::Fatal("%s: feature '%s' is given twice", param, key.c_str());
      seen[f] = true;
      double v = 0.0;
      const std::string value = Common::Trim(entry.substr(colon + 1));
      char* end = nullptr;
      v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0') {
        Log::Fatal("%s: value of feature '%s' is not a number: '%s'", param, key.c_str(), value.c_str());
      }
      CheckValue(param, key, v, is_group);
      out[f] = v;
    }
    return out;
  }

  /*! \brief The comma-separated cells of a CSV line, empty cells kept ("a,,b" has 3 cells). */
  static std::vector<std::string> Cells(const std::string& line) {
    std::vector<std::string> cells(1);
    for (char c : line) {
      if (c == ',') {
        cells.emplace_back();
      } else {
        cells.back() += c;
      }
    }
    for (auto& cell : cells) cell = Common::Trim(cell);
    return cells;
  }

  /*!
   * \brief A decimal number: [+-] digits [. digits] [e|E [+-] digits], at least one digit before
   *        the exponent (3, -0.5, .5, 5., 1e-3). Words (nan, inf), hexadecimal and other forms
   *        strtod would read are not numbers (budget_extras.FeatureCosts.from_csv reads the same).
   */
  static bool ParseDecimal(const std::string& s, double* out) {
    size_t i = 0;
    const size_t n = s.size();
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') { ++i; ++digits; }
    if (i < n && s[i] == '.') {
      ++i;
      while (i < n && s[i] >= '0' && s[i] <= '9') { ++i; ++digits; }
    }
    if (digits == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
      size_t exp_digits = 0;
      while (i < n && s[i] >= '0' && s[i] <= '9') { ++i; ++exp_digits; }
      if (exp_digits == 0) return false;
    }
    if (i != n) return false;
    *out = std::strtod(s.c_str(), nullptr);  // C locale: the decimal point is '.'
    return true;
  }

  /*! \brief Whether s is valid UTF-8 (as Python's strict decoder reads it: no overlong forms, no surrogates). */
  static bool IsUtf8(const std::string& s) {
    size_t i = 0;
    const size_t n = s.size();
    while (i < n) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c < 0x80) {
        ++i;
        continue;
      }
      size_t len = 0;
      unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
      if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
      } else if (c == 0xE0) {
        len = 3; lo = 0xA0;
      } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
        len = 3;
      } else if (c == 0xED) {
        len = 3; hi = 0x9F;
      } else if (c == 0xF0) {
        len = 4; lo = 0x90;
      } else if (c >= 0xF1 && c <= 0xF3) {
        len = 4;
      } else if (c == 0xF4) {
        len = 4; hi = 0x8F;
      } else {
        return false;
      }
      if (i + len > n) return false;
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if (c1 < lo || c1 > hi) return false;
      for (size_t k = 2; k < len; ++k) {
        const unsigned char ck = static_cast<unsigned char>(s[i + k]);
        if (ck < 0x80 || ck > 0xBF) return false;
      }
      i += len;
    }
    return true;
  }

  /*!
   * \brief The cost file, one format shared with budget_extras.FeatureCosts.from_csv (docs/cegb.md):
   *        columns feature (required), lazy or its synonym cost, coupled, split, group (a text label;
   *        empty or -1 = no group), group_cost (the group's acquisition cost), tree (one value: the
   *        per-tree evaluation cost, which training does not use).
   */
  static CostFile ReadCostFile(const std::string& path, const std::vector<std::string>& names,
                               const std::unordered_map<std::string, int>& index) {
    CostFile file;
    if (path.empty()) return file;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      Log::Fatal("cegb_cost_file: '%s' is a directory, expected a CSV file", path.c_str());
    }
    std::ifstream in(path);
    if (!in) Log::Fatal("cegb_cost_file: cannot open '%s'", path.c_str());
    std::string line;
    if (!std::getline(in, line)) Log::Fatal("cegb_cost_file %s is empty", path.c_str());
    if (line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    if (!IsUtf8(line)) Log::Fatal("cegb_cost_file %s line 1 is not UTF-8 text", path.c_str());
    const std::vector<std::string> known = {"feature", "lazy", "coupled", "split", "group", "group_cost", "tree"};
    std::vector<std::string> header = Cells(line);
    std::map<std::string, std::string> given_as;  // column -> the header's spelling
    std::map<std::string, int> col;               // column -> position
    for (size_t j = 0; j < header.size(); ++j) {
      const std::string spelled = header[j];
      if (header[j] == "cost") header[j] = "lazy";
      if (std::find(known.begin(), known.end(), header[j]) == known.end()) {
        Log::Fatal("cegb_cost_file %s: unknown column '%s' (expected feature, lazy or cost, coupled, split, group, "
                   "group_cost, tree)", path.c_str(), spelled.c_str());
      }
      if (given_as.count(header[j])) {
        if (header[j] == "lazy" && given_as[header[j]] != spelled) {
          Log::Fatal("cegb_cost_file %s: column 'lazy' appears twice in the header (as '%s' and '%s'; cost is a "
                     "synonym of lazy)", path.c_str(), given_as[header[j]].c_str(), spelled.c_str());
        }
        Log::Fatal("cegb_cost_file %s: column '%s' appears twice in the header", path.c_str(), spelled.c_str());
      }
      given_as[header[j]] = spelled;
      col[header[j]] = static_cast<int>(j);
    }
    if (!col.count("feature")) Log::Fatal("cegb_cost_file %s: no 'feature' column in the header", path.c_str());
    const int feature_col = col["feature"];
    for (const char* c : {"lazy", "coupled", "split"}) {
      if (col.count(c)) file.columns[c].assign(names.size(), 0.0);
    }
    std::vector<std::string> label(names.size());  // per feature; empty = no group
    std::map<std::string, double> group_cost;       // label -> the group's cost
    bool has_tree = false;
    double tree = 0.0;
    std::vector<bool> seen(names.size(), false);
    int line_no = 1;
    while (std::getline(in, line)) {
      ++line_no;
      if (!IsUtf8(line)) Log::Fatal("cegb_cost_file %s line %d is not UTF-8 text", path.c_str(), line_no);
      if (Common::Trim(line).empty()) continue;
      std::vector<std::string> cells = Cells(line);
      if (cells.size() != header.size()) {
        Log::Fatal("cegb_cost_file %s line %d: %d cells, the header has %d", path.c_str(), line_no,
                   static_cast<int>(cells.size()), static_cast<int>(header.size()));
      }
      const std::string key = cells[feature_col];
      const int f = FeatureIndex(key, names, index, ("cegb_cost_file " + path).c_str());
      if (seen[f]) Log::Fatal("cegb_cost_file %s line %d: feature '%s' is given twice", path.c_str(), line_no,
                              key.c_str());
      seen[f] = true;
      bool has_group_cost = false;
      double this_group_cost = 0.0;
      for (size_t j = 0; j < header.size(); ++j) {
        if (static_cast<int>(j) == feature_col) continue;
        const std::string& cell = cells[j];
        if (header[j] == "group") {
          if (cell != "-1") label[f] = cell;  // an opaque label; empty or -1: no group
          continue;
        }
        if (cell.empty()) continue;  // 0; no group cost; no tree cost
        double v = 0.0;
        if (!ParseDecimal(cell, &v)) {
          Log::Fatal("cegb_cost_file %s line %d: column %s of feature '%s' is not a number: '%s'", path.c_str(),
                     line_no, given_as[header[j]].c_str(), key.c_str(), cell.c_str());
        }
        CheckValue(("cegb_cost_file column " + given_as[header[j]]).c_str(), key, v, /*is_group=*/false);
        if (header[j] == "group_cost") {
          has_group_cost = true;
          this_group_cost = v;
        } else if (header[j] == "tree") {
          if (has_tree && v != tree) {
            Log::Fatal("cegb_cost_file %s: column tree must hold one value (the per-tree evaluation cost), got %g "
                       "and %g", path.c_str(), tree, v);
          }
          has_tree = true;
          tree = v;
        } else {
          file.columns[header[j]][f] = v;
        }
      }
      // a group_cost of a feature in no group is ignored (no group to charge it to)
      if (has_group_cost && !label[f].empty()) {
        auto it = group_cost.find(label[f]);
        if (it != group_cost.end() && it->second != this_group_cost) {
          Log::Fatal("cegb_cost_file %s: group '%s' has several group_cost values, %g and %g: give one",
                     path.c_str(), label[f].c_str(), it->second, this_group_cost);
        }
        group_cost[label[f]] = this_group_cost;
      }
    }
    file.tree = tree;
    if (col.count("group")) {
      // dense group ids in order of first appearance over the features (as positional ids)
      std::map<std::string, int> dense;
      std::vector<double>& group = file.columns["group"];
      group.assign(names.size(), -1.0);
      for (size_t f = 0; f < names.size(); ++f) {
        if (label[f].empty()) continue;
        auto it = dense.find(label[f]);
        if (it == dense.end()) {
          it = dense.emplace(label[f], file.num_groups++).first;
          auto cost = group_cost.find(label[f]);
          file.group_cost.push_back(cost == group_cost.end() ? -1.0 : cost->second);
        }
        group[f] = it->second;
      }
    }
    return file;
  }
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_TREELEARNER_CEGB_CEGB_COSTS_HPP_
