/*!
 * lightgbm-cegb: resolution of the per-feature CEGB cost specification.
 *
 * Sources, for each per-feature parameter (lazy, coupled, split, group):
 *   1. the positional vector parameter (cegb_penalty_feature_lazy=1,2,...),
 *   2. a named specification "name:value,name:value" given for the same parameter (Python: a
 *      dict or pandas Series; kept by Config::Set in Config::cegb_named_costs),
 *   3. a column of the CSV file named by cegb_cost_file (columns: feature, lazy, coupled, group,
 *      split; `feature` is a feature name or a 0-based column index).
 * A parameter given by two sources is an error. Features a named spec or the file leaves out
 * cost 0 (and form their own group). Every value must be finite and >= 0; group ids integers in
 * 0..2^31-1 (int32), or -1 for no group.
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

struct CEGBCosts {
  std::vector<double> lazy;      // per real feature; empty = none
  std::vector<double> coupled;   // per real feature; empty = none
  std::vector<double> split;     // per real feature; empty = none
  std::vector<int> group;        // per real feature: dense group id 0..num_groups-1
  int num_groups = 0;
  std::vector<double> group_lazy;     // per group: max of its members' lazy costs
  std::vector<double> group_coupled;  // per group: max of its members' coupled costs
  std::vector<std::vector<int>> group_members;  // real feature ids per group

  static CEGBCosts Resolve(const Config& config, const std::vector<std::string>& names) {
    const int n = static_cast<int>(names.size());
    std::unordered_map<std::string, int> index;
    for (int i = 0; i < n; ++i) index[names[i]] = i;
    std::map<std::string, std::vector<double>> file = ReadCostFile(config.cegb_cost_file, names, index);

    CEGBCosts c;
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
                                  const std::map<std::string, std::vector<double>>& file, const char* column,
                                  const std::vector<std::string>& names,
                                  const std::unordered_map<std::string, int>& index, double missing = 0.0) {
    const bool is_group = std::string(param) == "cegb_feature_group";
    auto named = config.cegb_named_costs.find(param);
    auto from_file = file.find(column);
    const int sources = !positional.empty() + (named != config.cegb_named_costs.end()) + (from_file != file.end());
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
    if (from_file != file.end()) return from_file->second;
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

  static std::map<std::string, std::vector<double>> ReadCostFile(
      const std::string& path, const std::vector<std::string>& names,
      const std::unordered_map<std::string, int>& index) {
    std::map<std::string, std::vector<double>> columns;
    if (path.empty()) return columns;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      Log::Fatal("cegb_cost_file: '%s' is a directory, expected a CSV file", path.c_str());
    }
    std::ifstream in(path);
    if (!in) Log::Fatal("cegb_cost_file: cannot open '%s'", path.c_str());
    std::string line;
    if (!std::getline(in, line)) Log::Fatal("cegb_cost_file %s is empty", path.c_str());
    if (line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    // columns: feature, lazy (or its synonym cost), coupled, group, split; each at most once
    std::vector<std::string> header = Cells(line);
    int feature_col = -1;
    const std::vector<std::string> known = {"lazy", "coupled", "group", "split"};
    std::map<std::string, std::string> given_as;  // column -> the header's spelling
    for (size_t j = 0; j < header.size(); ++j) {
      const std::string spelled = header[j];
      if (header[j] == "cost") header[j] = "lazy";
      if (header[j] == "feature") {
        if (feature_col >= 0) {
          Log::Fatal("cegb_cost_file %s: column 'feature' appears twice in the header", path.c_str());
        }
        feature_col = static_cast<int>(j);
      } else if (std::find(known.begin(), known.end(), header[j]) == known.end()) {
        Log::Fatal("cegb_cost_file %s: unknown column '%s' (expected feature, lazy or cost, coupled, group, split)",
                   path.c_str(), spelled.c_str());
      } else if (given_as.count(header[j])) {
        Log::Fatal("cegb_cost_file %s: column '%s' appears twice in the header (as '%s' and '%s'; cost is a "
                   "synonym of lazy)", path.c_str(), header[j].c_str(), given_as[header[j]].c_str(), spelled.c_str());
      } else {
        given_as[header[j]] = spelled;
        columns[header[j]].assign(names.size(), header[j] == "group" ? -1.0 : 0.0);
      }
    }
    if (feature_col < 0) Log::Fatal("cegb_cost_file %s: no 'feature' column in the header", path.c_str());
    std::vector<bool> seen(names.size(), false);
    int line_no = 1;
    while (std::getline(in, line)) {
      ++line_no;
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
      for (size_t j = 0; j < header.size(); ++j) {
        if (static_cast<int>(j) == feature_col) continue;
        const std::string& cell = cells[j];
        if (cell.empty()) continue;  // 0, or no group
        char* end = nullptr;
        const double v = std::strtod(cell.c_str(), &end);
        if (*end != '\0') {
          Log::Fatal("cegb_cost_file %s line %d: column %s of feature '%s' is not a number: '%s'", path.c_str(),
                     line_no, header[j].c_str(), key.c_str(), cell.c_str());
        }
        CheckValue(("cegb_cost_file column " + header[j]).c_str(), key, v, header[j] == "group");
        columns[header[j]][f] = v;
      }
    }
    return columns;
  }
};

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_TREELEARNER_CEGB_CEGB_COSTS_HPP_
