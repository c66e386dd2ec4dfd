/*!
 * lightgbm-cegb: the lines of a model text's `parameters:` section.
 *
 * GBDT::GetLoadedParam (called by the Python package on every Booster(model_str=...) and
 * Booster(model_file=...)) splits each line at ':' and reads the second piece. A line that gives
 * fewer than two pieces ("[abc]", "abc:") made it read past the end of the pieces (a segmentation
 * fault or garbage). LightGBM writes every line as "[key: value]"; the loader refuses a line that
 * GetLoadedParam cannot split into a key and a value.
 */
#ifndef LIGHTGBM_SRC_BOOSTING_MODEL_TEXT_PARAMETERS_HPP_
#define LIGHTGBM_SRC_BOOSTING_MODEL_TEXT_PARAMETERS_HPP_

#include <LightGBM/utils/common.h>
#include <LightGBM/utils/log.h>

#include <string>

namespace LightGBM {

/*!
 * \brief Log::Fatal unless every line of `section` (the lines of the parameters section, each ended
 *        by '\n') splits at ':' into at least two pieces.
 */
inline void CheckModelTextParameterLines(const std::string& section) {
  for (const auto& line : Common::Split(section.c_str(), '\n')) {
    if (Common::Split(line.c_str(), ":").size() < 2) {
      Log::Fatal("Model text: parameters section line '%s' is not a '[key: value]' line",
                 line.substr(0, 64).c_str());
    }
  }
}

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_BOOSTING_MODEL_TEXT_PARAMETERS_HPP_
