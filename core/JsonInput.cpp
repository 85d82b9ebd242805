//===- JsonInput.cpp - Parsing JSON that comes from outside ---------------===//

#include "core/JsonInput.h"

namespace fp8 {

Expected<nlohmann::json> parseJsonInput(std::string_view text,
                                        const std::string &what) {
  // Brackets outside strings; an escaped quote does not end a string.
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return errorf("expected ", what, " to nest arrays and objects at most ",
                      kMaxJsonDepth, " deep, found deeper nesting at byte ", i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded())
    return errorf(what, " is not valid JSON");
  return j;
}

} // namespace fp8
