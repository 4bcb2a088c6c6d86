//! The validity verdict a result carries (`results.json`, schema 5): green, amber or red and
//! the reasons, each a rule's id, its colour and a sentence with the numbers. The rules live
//! in `report::validity`, which computes the verdict from the document (so a bundle of an
//! older spindle gets one when it is read); `report::bundle` writes it into every phase
//! result of the document it saves.

use serde::{Deserialize, Serialize};

/// A colour of the verdict, worst last (so `max` is the verdict).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Colour {
    Green,
    Amber,
    Red,
}

impl Colour {
    pub fn word(self) -> &'static str {
        match self {
            Colour::Green => "green",
            Colour::Amber => "amber",
            Colour::Red => "red",
        }
    }
}

/// One reason a result is not green.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// The rule's id (`link_ceiling`, `page_cache`, …; the table in `report::validity`).
    pub rule: String,
    pub colour: Colour,
    /// A sentence with the numbers.
    pub text: String,
}

/// `{"verdict": "green" | "amber" | "red", "reasons": [...]}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Validity {
    pub verdict: Colour,
    pub reasons: Vec<Reason>,
}

impl Validity {
    /// The verdict of these reasons: the worst colour among them, green when there is none.
    pub fn of(reasons: Vec<Reason>) -> Self {
        let verdict = reasons
            .iter()
            .map(|r| r.colour)
            .max()
            .unwrap_or(Colour::Green);
        Validity { verdict, reasons }
    }

    /// `validity: amber — page_cache (red): …; steady_state (amber): …`, one line for
    /// summary.txt and `report show`.
    pub fn line(&self) -> String {
        if self.reasons.is_empty() {
            return format!(
                "validity: {} (every rule judged and passed)",
                self.verdict.word()
            );
        }
        let why: Vec<String> = self
            .reasons
            .iter()
            .map(|r| format!("{} ({}): {}", r.rule, r.colour.word(), r.text))
            .collect();
        format!("validity: {} — {}", self.verdict.word(), why.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_is_the_worst_reason_and_round_trips() {
        let r = |rule: &str, colour| Reason {
            rule: rule.into(),
            colour,
            text: "why.".into(),
        };
        assert_eq!(Validity::of(vec![]).verdict, Colour::Green);
        let v = Validity::of(vec![r("a", Colour::Amber), r("b", Colour::Red)]);
        assert_eq!(v.verdict, Colour::Red);
        let j = serde_json::to_value(&v).unwrap();
        assert_eq!(j["verdict"], "red");
        assert_eq!(j["reasons"][1]["colour"], "red");
        assert_eq!(serde_json::from_value::<Validity>(j).unwrap(), v);
        assert_eq!(v.line(), "validity: red — a (amber): why. b (red): why.");
    }
}
