// The scenario parser's shared pieces (scenario.cpp, interp_fields.cpp): a value in brief for
// messages, and the check that an object holds only the fields it may.
#pragma once
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "scenario/scenario.hpp"

namespace attn {

using json = nlohmann::json;

std::string brief(const json& j);
// An error naming `field` when j has a key outside `allowed`; `where` names j in the message.
void check_keys(const json& j, const std::string& where, std::initializer_list<const char*> allowed, const std::string& field);
// The interpretability fields (SCENARIO.md, "Interpretability"): interventions, patching,
// attribution_patching, logit_lens, logit_attribution, checked against the module and the rest
// of the scenario.
void parse_interp(const json& j, const ModuleInfo& info, Scenario& s);
// s.interventions replaced by the JSON list `text` (checked as the scenario's field is).
void parse_interventions(const std::string& text, Scenario& s);
// The readings of one forward (logit_lens, logit_attribution; a JSON object of those keys, checked
// as the scenario's fields) into s, whatever else the scenario does (a session that also generates).
void parse_readings(const std::string& text, const ModuleInfo& info, Scenario& s);

}  // namespace attn
