//! `fslab calibrate`: whether to measure again, and where the card goes
//! (text or JSON, each to stdout or a file checked as results are).

use super::{check_path, OutputFormat, OutputSpec, Outputs, PlanError, Result};
use crate::cli::CalibrateArgs;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct CalibratePlan {
    /// Ignore the cached card (and replace it).
    pub fresh: bool,
    pub outputs: Outputs,
}

impl CalibratePlan {
    pub fn from_args(a: &CalibrateArgs) -> Result<Self> {
        let mut v: Vec<OutputSpec> = Vec::new();
        for s in &a.output {
            let (fmt, path) = match s.split_once(':') {
                Some((f, p)) => (f, Some(p)),
                None => (s.as_str(), None),
            };
            let format = match fmt {
                "text" => OutputFormat::Text,
                "json" => OutputFormat::Json,
                _ => {
                    return Err(PlanError::new(
                        "--output",
                        format!("unknown format '{fmt}' for `fslab calibrate` (known: text, json)"),
                    ))
                }
            };
            let path = match path {
                None | Some("-") => None,
                Some("") => return Err(PlanError::new("--output", format!("'{s}': empty path"))),
                Some(p) => Some(check_path("--output", &PathBuf::from(p))?),
            };
            if path.is_none() && v.iter().any(|o| o.path.is_none()) {
                return Err(PlanError::new(
                    "--output",
                    "only one output can go to stdout; give the others a :PATH",
                ));
            }
            if let Some(p) = &path {
                if v.iter().any(|o| o.path.as_ref() == Some(p)) {
                    return Err(PlanError::new(
                        "--output",
                        format!("'{s}': {} is already the path of another output", p.display()),
                    ));
                }
            }
            v.push(OutputSpec { format, path });
        }
        // as every command: the text stays on the terminal beside files
        if v.iter().all(|o| o.path.is_some()) {
            v.push(OutputSpec {
                format: OutputFormat::Text,
                path: None,
            });
        }
        Ok(CalibratePlan {
            fresh: a.fresh,
            outputs: Outputs(v),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(outputs: &[&str]) -> Result<CalibratePlan> {
        CalibratePlan::from_args(&CalibrateArgs {
            fresh: false,
            output: outputs.iter().map(|s| s.to_string()).collect(),
        })
    }

    #[test]
    fn outputs_are_text_or_json() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.outputs.0.len(), 1);
        assert_eq!(
            (p.outputs.0[0].format, p.outputs.0[0].path.is_none()),
            (OutputFormat::Text, true)
        );
        let p = plan(&["json"]).unwrap();
        assert_eq!(p.outputs.0.len(), 1, "json on stdout replaces the text");
        assert!(plan(&["csv"]).unwrap_err().msg.contains("known: text, json"));
        assert!(plan(&["json", "text"]).unwrap_err().msg.contains("only one output"));
        assert!(plan(&["json:"]).unwrap_err().msg.contains("empty path"));
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("k.json");
        let p = plan(&[&format!("json:{}", f.display())]).unwrap();
        assert_eq!(p.outputs.0.len(), 2);
        assert!(!f.exists(), "checked, not made");
    }
}
