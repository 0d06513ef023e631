//! `fslab calibrate`: whether to measure again, and where the card goes
//! (text or JSON, each to stdout or a file checked as results are).

use super::{Outputs, Result};
use crate::cli::CalibrateArgs;

#[derive(Debug, Clone)]
pub struct CalibratePlan {
    /// Ignore the cached card (and replace it).
    pub fresh: bool,
    pub outputs: Outputs,
}

impl CalibratePlan {
    pub fn from_args(a: &CalibrateArgs) -> Result<Self> {
        Ok(CalibratePlan {
            fresh: a.fresh,
            outputs: Outputs::parse(&a.output, false, "calibrate")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::OutputFormat;

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
