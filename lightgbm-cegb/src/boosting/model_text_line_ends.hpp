/*!
 * lightgbm-cegb: model texts with Windows line ends.
 *
 * A model file checked out on Windows (git autocrlf) or edited there ends its lines with "\r\n".
 * The header reader skips a '\r' before '\n', but tree_sizes counts the bytes of the "\n" text:
 * upstream then reads the trees at the wrong offsets ("Model format error, expect a tree here.
 * met shrinkage=0.1") or aborts. The loader reads the text with every "\r\n" turned into "\n",
 * which is the text LightGBM wrote (a model text holds no other '\r').
 */
#ifndef LIGHTGBM_SRC_BOOSTING_MODEL_TEXT_LINE_ENDS_HPP_
#define LIGHTGBM_SRC_BOOSTING_MODEL_TEXT_LINE_ENDS_HPP_

#include <cstring>
#include <string>

namespace LightGBM {

/*! \brief The model text `buffer` (`len` bytes) with every "\r\n" line end turned into "\n". */
inline std::string ModelTextWithUnixLineEnds(const char* buffer, size_t len) {
  std::string text;
  text.reserve(len);
  for (size_t i = 0; i < len; ++i) {
    if (buffer[i] == '\r' && i + 1 < len && buffer[i + 1] == '\n') continue;
    text.push_back(buffer[i]);
  }
  return text;
}

}  // namespace LightGBM

#endif  // LIGHTGBM_SRC_BOOSTING_MODEL_TEXT_LINE_ENDS_HPP_
