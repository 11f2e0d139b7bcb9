//! Reading scenario YAML: the file and its turns, and lists of steps (where `stop` and
//! `fail` must come last). Single steps are read in `step_syntax`.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::scenario::{Scenario, ScenarioTurn, Step, StepKind};
use crate::step_syntax::StepDef;

/// A whole scenario file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenarioDef {
    #[serde(deserialize_with = "non_empty_name")]
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(deserialize_with = "non_empty_turns")]
    turns: Vec<TurnDef>,
}

impl ScenarioDef {
    pub(crate) fn into_scenario(self) -> Scenario {
        Scenario {
            name: self.name,
            description: self.description,
            turns: self
                .turns
                .into_iter()
                .map(|turn| ScenarioTurn {
                    when: turn.when,
                    steps: turn.steps.0,
                })
                .collect(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnDef {
    #[serde(default)]
    when: Option<String>,
    steps: StepList,
}

fn non_empty_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let name = String::deserialize(deserializer)?;
    if name.trim().is_empty() {
        return Err(de::Error::custom("a scenario's `name` must not be empty"));
    }
    Ok(name)
}

fn non_empty_turns<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<TurnDef>, D::Error> {
    let turns = Vec::<TurnDef>::deserialize(deserializer)?;
    if turns.is_empty() {
        return Err(de::Error::custom(
            "a scenario needs at least one turn under `turns`",
        ));
    }
    Ok(turns)
}

/// A list of steps; `stop` and `fail` end a turn, so nothing may follow them.
pub(crate) struct StepList(pub Vec<Step>);

impl<'de> Deserialize<'de> for StepList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(StepListVisitor)
    }
}

struct StepListVisitor;

impl<'de> Visitor<'de> for StepListVisitor {
    type Value = StepList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of steps")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StepList, A::Error> {
        let mut steps: Vec<Step> = Vec::new();
        loop {
            if let Some(last) = steps.last()
                && ends_turn(&last.kind)
            {
                // Anything after a turn's end is reported where it is written.
                seq.next_element_seed(NothingAfter(last.kind.name()))?;
                break;
            }
            match seq.next_element::<StepDef>()? {
                Some(StepDef(step)) => steps.push(step),
                None => break,
            }
        }
        Ok(StepList(steps))
    }
}

fn ends_turn(kind: &StepKind) -> bool {
    matches!(kind, StepKind::Fail { .. } | StepKind::Stop { .. })
}

/// Refuses any element: it follows a step that ends the turn.
struct NothingAfter(&'static str);

impl NothingAfter {
    fn error<E: de::Error>(&self) -> E {
        E::custom(format!(
            "this step would never play: the `{}` step before it ends the turn, so it must be the turn's last step",
            self.0
        ))
    }
}

impl<'de> DeserializeSeed<'de> for NothingAfter {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NothingAfter {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no step after the `{}` step", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<(), A::Error> {
        Err(self.error())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<(), A::Error> {
        Err(self.error())
    }

    fn visit_str<E: de::Error>(self, _value: &str) -> Result<(), E> {
        Err(self.error())
    }

    fn visit_bool<E: de::Error>(self, _value: bool) -> Result<(), E> {
        Err(self.error())
    }

    fn visit_i64<E: de::Error>(self, _value: i64) -> Result<(), E> {
        Err(self.error())
    }

    fn visit_u64<E: de::Error>(self, _value: u64) -> Result<(), E> {
        Err(self.error())
    }

    fn visit_f64<E: de::Error>(self, _value: f64) -> Result<(), E> {
        Err(self.error())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(self.error())
    }
}
