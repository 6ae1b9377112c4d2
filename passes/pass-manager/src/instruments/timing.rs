//! Pass timing: a tree of nested pass runs with total and self times,
//! rendered as TVM's `PassTimingInstrument.render()` does, or as JSON.
//! Passes that were skipped are listed too (`InferType: skipped (…)`):
//! TVM cannot see skips, but a report that leaves out a pass the user named
//! reads as if it had not been asked for.

use crate::{HookResult, PassInfo, PassInstrument};
use relay_ir::IRModule;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
struct Profile {
    name: String,
    start: Instant,
    duration: Duration,
    children: Vec<Profile>,
    /// Why the pass did not run, when it was skipped.
    skipped: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    roots: Vec<Profile>,
    /// Indices into the open profiles, outermost first.
    open: Vec<usize>,
}

impl State {
    fn children_of_current(&mut self) -> &mut Vec<Profile> {
        let mut list = &mut self.roots;
        for &i in &self.open {
            list = &mut list[i].children;
        }
        list
    }
}

/// Records how long every pass run takes, nested.
#[derive(Debug, Default)]
pub struct PassTiming {
    state: Mutex<State>,
    /// Kept after the context exits (TVM clears on exit; we render after).
    finished: Mutex<Vec<Profile>>,
}

impl PassTiming {
    pub fn new() -> PassTiming {
        PassTiming::default()
    }

    /// TVM's rendering: one line per pass, indented with tabs by depth,
    /// `name: total_us [self_us] (percent of total; percent of parent)`.
    /// Empty when nothing was recorded.
    pub fn render(&self) -> String {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        let roots: &[Profile] = if state.roots.is_empty() {
            &finished
        } else {
            &state.roots
        };
        if roots.is_empty() {
            return String::new();
        }
        let total: f64 = roots.iter().map(|p| micros(p.duration)).sum();
        let mut out = String::new();
        let mut stack: Vec<(usize, f64, &Profile)> =
            roots.iter().rev().map(|p| (0, total, p)).collect();
        while let Some((depth, parent, profile)) = stack.pop() {
            out.push_str(&"\t".repeat(depth));
            if let Some(reason) = &profile.skipped {
                out.push_str(&format!("{}: {reason}\n", profile.name));
                continue;
            }
            let duration = micros(profile.duration);
            let mut self_time = duration;
            for child in profile.children.iter().rev() {
                self_time -= micros(child.duration);
                stack.push((depth + 1, duration, child));
            }
            let pct = |whole: f64| {
                if whole > 0.0 {
                    duration / whole * 100.0
                } else {
                    0.0
                }
            };
            out.push_str(&format!(
                "{}: {:.0}us [{:.0}us] ({:.2}%; {:.2}%)\n",
                profile.name,
                duration,
                self_time,
                pct(total),
                pct(parent)
            ));
        }
        out
    }

    /// The same report as JSON: an array of `{"pass", "total_us",
    /// "self_us", "children"}` objects, and `{"pass", "skipped": reason}`
    /// for passes that did not run.
    pub fn render_json(&self) -> serde_json::Value {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        let roots: &[Profile] = if state.roots.is_empty() {
            &finished
        } else {
            &state.roots
        };
        serde_json::Value::Array(roots.iter().map(profile_json).collect())
    }
}

/// One profile as JSON. Recursion follows the nesting of passes, which
/// pipelines bound (`MAX_PIPELINE_DEPTH`).
fn profile_json(profile: &Profile) -> serde_json::Value {
    if let Some(reason) = &profile.skipped {
        let reason = reason.strip_prefix("skipped: ").unwrap_or(reason);
        return serde_json::json!({ "pass": profile.name, "skipped": reason });
    }
    let total = micros(profile.duration);
    let children: f64 = profile.children.iter().map(|c| micros(c.duration)).sum();
    serde_json::json!({
        "pass": profile.name,
        "total_us": total,
        "self_us": total - children,
        "children": profile.children.iter().map(profile_json).collect::<Vec<_>>(),
    })
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

impl PassInstrument for PassTiming {
    fn name(&self) -> &str {
        "PassTimingInstrument"
    }

    fn enter_pass_ctx(&self) -> HookResult {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = State::default();
        Ok(())
    }

    fn exit_pass_ctx(&self) -> HookResult {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *self.finished.lock().unwrap_or_else(|e| e.into_inner()) = std::mem::take(&mut state.roots);
        state.open.clear();
        Ok(())
    }

    fn run_before_pass(&self, _module: &IRModule, info: &PassInfo) -> HookResult {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let list = state.children_of_current();
        list.push(Profile {
            name: info.name.clone(),
            start: Instant::now(),
            duration: Duration::ZERO,
            children: Vec::new(),
            skipped: None,
        });
        let index = list.len() - 1;
        state.open.push(index);
        Ok(())
    }

    fn run_after_pass(&self, _module: &IRModule, _info: &PassInfo) -> HookResult {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(index) = state.open.pop() else {
            return Err("mismatched enter/exit for pass profiling".into());
        };
        let list = state.children_of_current();
        let profile = &mut list[index];
        profile.duration = profile.start.elapsed();
        Ok(())
    }

    fn pass_skipped(&self, _module: &IRModule, info: &PassInfo, reason: &str) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.children_of_current().push(Profile {
            name: info.name.clone(),
            start: Instant::now(),
            duration: Duration::ZERO,
            children: Vec::new(),
            skipped: Some(reason.to_string()),
        });
    }
}
