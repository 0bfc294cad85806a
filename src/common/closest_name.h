// "Did you mean": the known name nearest a mistyped one.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpubench {

// The name of `known` nearest `given`: the same but for case and the separators '-', '_' and '.'
// ("resnet-50", "llama3-8b"); else the one name that begins with it, 3 characters or more
// ("--batch": "--batch-size"); else the fewest single-character edits (an adjacent swap one), at
// most a third of the longer name's length and at most 3. None where nothing is that near or
// two are equally near.
std::optional<std::string> closest_name(const std::string& given,
                                        const std::vector<std::string>& known);

// " did you mean 'NAME'?" for closest_name's answer, or "".
std::string did_you_mean(const std::string& given, const std::vector<std::string>& known);

}  // namespace gpubench
