//! Counting pass runs: how many times each pass ran and how many times it
//! was skipped (not enabled, refused by an instrument, or not needed because
//! what it establishes still held). This is how one sees what the
//! module-property cache saves: with it InferType runs fewer times than
//! under `tvm_exact`, where every required InferType runs as in TVM.

use crate::{HookResult, PassInfo, PassInstrument};
use relay_ir::IRModule;
use std::sync::Mutex;

/// How often one pass ran and was skipped.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PassCount {
    pub ran: usize,
    pub skipped: usize,
}

/// Counts runs and skips per pass name, in the order passes were first met.
#[derive(Debug, Default)]
pub struct PassCounts {
    counts: Mutex<Vec<(String, PassCount)>>,
}

impl PassCounts {
    pub fn new() -> PassCounts {
        PassCounts::default()
    }

    fn update(&self, name: &str, change: impl FnOnce(&mut PassCount)) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        match counts.iter_mut().find(|(n, _)| n == name) {
            Some((_, count)) => change(count),
            None => {
                let mut count = PassCount::default();
                change(&mut count);
                counts.push((name.to_string(), count));
            }
        }
    }

    /// The counts of pass `name` (zero when it was never met).
    pub fn get(&self, name: &str) -> PassCount {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(PassCount::default, |(_, c)| *c)
    }

    /// Every pass met, in first-met order.
    pub fn counts(&self) -> Vec<(String, PassCount)> {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A table, one line per pass in first-met order:
    /// `pass  ran  skipped`. Empty when nothing was met.
    pub fn render(&self) -> String {
        let counts = self.counts();
        if counts.is_empty() {
            return String::new();
        }
        let width = counts
            .iter()
            .map(|(n, _)| n.chars().count())
            .chain(["pass".len()])
            .max()
            .unwrap_or(4);
        let mut out = format!("{:<width$}  {:>5}  {:>7}\n", "pass", "ran", "skipped");
        for (name, count) in &counts {
            out.push_str(&format!(
                "{name:<width$}  {:>5}  {:>7}\n",
                count.ran, count.skipped
            ));
        }
        out
    }
}

impl PassInstrument for PassCounts {
    fn name(&self) -> &str {
        "PassCounts"
    }

    /// Counted here rather than after the pass: a pass that fails still ran.
    fn run_before_pass(&self, _module: &IRModule, info: &PassInfo) -> HookResult {
        self.update(&info.name, |c| c.ran += 1);
        Ok(())
    }

    fn pass_skipped(&self, _module: &IRModule, info: &PassInfo, _reason: &str) {
        self.update(&info.name, |c| c.skipped += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_runs_and_skips_in_first_met_order() {
        let counts = PassCounts::new();
        let module = IRModule::default();
        let infer = PassInfo::new("InferType", 0, &[]);
        let fold = PassInfo::new("FoldConstant", 2, &[]);
        counts.pass_skipped(&module, &infer, "cached");
        counts.run_before_pass(&module, &fold).unwrap();
        counts.run_before_pass(&module, &infer).unwrap();
        counts.run_before_pass(&module, &infer).unwrap();
        assert_eq!(counts.get("InferType"), PassCount { ran: 2, skipped: 1 });
        assert_eq!(counts.get("FoldConstant"), PassCount { ran: 1, skipped: 0 });
        assert_eq!(counts.get("Other"), PassCount::default());
        assert_eq!(
            counts.render(),
            "pass            ran  skipped\n\
             InferType         2        1\n\
             FoldConstant      1        0\n"
        );
    }
}
