//! The deep half of assessing an env: every lexicon with a deep read is read deep, the env's
//! accepted baseline is read from the ledger and subtracted, and what still drifts is folded into
//! the change sets ([`chant_lexicon::observe::deep`]), so a tick and `lifecycle diff` decide on one answer.
//!
//! A baseline document that does not parse is never read as empty: the run reports it with its
//! path ([`DeepAssessment::baseline_error`]) and subtracts nothing. Neither is one chant did not
//! write (the newest commit that changed it is not chant's document write,
//! [`chant_store::ledger::Ledger::document_writer`]) or one that names another env: those are
//! reported and not honoured. What the baseline subtracts is always counted
//! (the symptom's `baselined_count`), so a tick, status and
//! `lifecycle diff` say how many differences they did not count as drift.

use chant_lexicon::observe::deep::baseline::{self, Baseline};
use chant_lexicon::observe::deep::fold::assess_with_deep;
use chant_lexicon::observe::deep::{ComponentDeep, observe_deep};
use chant_lexicon::observe::{ComponentInput, EnvAssessment};
use chant_store::ledger::{self, DocumentReceipt};

use super::{Error, Project};

/// An env's assessment with its deep verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct DeepAssessment {
    /// The assessment, deep drift folded in: what a tick decides on.
    pub assessment: EnvAssessment,
    /// Per component with a deep read, its verdict after the baseline was subtracted.
    pub deep: Vec<ComponentDeep>,
    /// The baseline subtracted (empty when there is none, or it could not be read).
    pub baseline: Baseline,
    /// Where the baseline lives: `chant/lifecycle:<member prefix><env>/observation-baseline.json`.
    pub baseline_path: String,
    /// Why the baseline was ignored for this run, naming its path.
    pub baseline_error: Option<String>,
}

impl Project {
    /// Returns the path of `env`'s baseline document on the ledger branch.
    ///
    /// # Errors
    ///
    /// An env or member name that cannot be part of a ledger path.
    pub fn baseline_path(&self, member: Option<&str>, env: &str) -> Result<String, Error> {
        Ok(ledger::env_document_path(member, env, baseline::FILE)?)
    }

    /// Reads `env`'s accepted baseline: empty when there is none; the inner `Err` (naming the
    /// document's path) when it does not parse.
    ///
    /// # Errors
    ///
    /// Ledger errors.
    pub fn read_baseline(
        &self,
        member: Option<&str>,
        env: &str,
    ) -> Result<Result<Baseline, baseline::BaselineError>, Error> {
        let path = self.baseline_path(member, env)?;
        let Some(bytes) = self.ledger.read_document(&path)? else { return Ok(Ok(Baseline::new(env))) };
        let baseline = match Baseline::parse_for(&bytes, &shown(&path), env) {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        match self.ledger.document_writer(&path)? {
            Some(writer) if !writer.by_chant => Ok(Err(baseline::BaselineError::Foreign {
                path: shown(&path),
                env: env.to_owned(),
                commit: writer.commit.to_string(),
                author: format!("{} <{}>", writer.author.name, writer.author.email),
            })),
            _ => Ok(Ok(baseline)),
        }
    }

    /// Writes `env`'s baseline document as its own commit on the ledger branch.
    ///
    /// # Errors
    ///
    /// Ledger errors.
    pub fn write_baseline(
        &self,
        member: Option<&str>,
        env: &str,
        baseline: &Baseline,
        label: &str,
    ) -> Result<DocumentReceipt, Error> {
        let path = self.baseline_path(member, env)?;
        Ok(self.ledger.write_document(&path, baseline.to_document().as_bytes(), label)?)
    }

    /// Observes `env` thin and deep, subtracts its baseline and folds what still drifts into the
    /// change sets.
    ///
    /// # Errors
    ///
    /// As [`Project::assess`].
    pub fn assess_deep(&self, member: Option<&str>, env: &str) -> Result<DeepAssessment, Error> {
        let observed = self.component_inputs(member, env)?;
        let mut deep: Vec<ComponentDeep> =
            observed.iter().filter_map(|(lexicon, input)| observe_deep(lexicon.lexicon(), &input.declared)).collect();
        let inputs: Vec<ComponentInput> = observed.into_iter().map(|(_, input)| input).collect();
        let path = self.baseline_path(member, env)?;
        let (baseline, baseline_error) = if deep.is_empty() {
            (Baseline::new(env), None)
        } else {
            match self.read_baseline(member, env)? {
                Ok(baseline) => (baseline, None),
                Err(e) => (Baseline::new(env), Some(chant_store::error::chain(&e))),
            }
        };
        for component in &mut deep {
            baseline.subtract_component(component);
        }
        let mut assessment = assess_with_deep(env, &inputs, &deep);
        assessment.symptom.baselined_count = Baseline::baselined_count(&deep);
        Ok(DeepAssessment { assessment, deep, baseline, baseline_path: shown(&path), baseline_error })
    }
}

/// Names a ledger path as a person finds it: `chant/lifecycle:<path>`.
fn shown(path: &str) -> String {
    format!("chant/lifecycle:{path}")
}
