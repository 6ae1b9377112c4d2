//! What a PassContext's `opt_level` and target may be, and what a target
//! changes. Only `llvm` has rules here: with it, AlterOpLayout and Legalize
//! use TVM's x86 rules (`llvm -mcpu=…` keeps AlterOpLayout's operators as
//! they are, with a warning, since only the plain x86 schedule is built in);
//! without a target both use TVM's generic rules. No other pass reads the
//! target, so a target we have no rules for is refused rather than ignored.

/// The highest opt_level of any TVM v0.13 pass (FastMath); a context above
/// it would enable nothing more.
pub const MAX_OPT_LEVEL: u32 = 4;

/// The target kinds with rules, and what each changes.
pub const KNOWN_TARGETS: &[(&str, &str)] = &[(
    "llvm",
    "AlterOpLayout and Legalize use TVM's x86 rules; without a target, the generic ones",
)];

/// TVM target kinds we have no rules for, so that refusing one can say so
/// rather than call it unknown.
const TVM_ONLY_TARGETS: &[&str] = &[
    "c", "cuda", "rocm", "opencl", "vulkan", "metal", "webgpu", "hexagon", "nvptx", "ext_dev",
    "hybrid", "stackvm",
];

/// Checks an opt_level given as text or a number.
pub fn check_opt_level(level: i64) -> Result<u32, String> {
    u32::try_from(level)
        .ok()
        .filter(|l| *l <= MAX_OPT_LEVEL)
        .ok_or_else(|| {
            format!(
                "opt_level must be in 0..={MAX_OPT_LEVEL}, not {level} \
                 ({MAX_OPT_LEVEL} is the highest opt_level of any pass)"
            )
        })
}

/// Checks a target string (`llvm`, `llvm -mcpu=skylake-avx512`): its kind
/// must be one we have rules for, and what follows must be `-key=value`
/// options.
pub fn check_target(target: &str) -> Result<(), String> {
    let known = || {
        KNOWN_TARGETS
            .iter()
            .map(|(kind, does)| format!("`{kind}` ({does})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut words = target.split_whitespace();
    let Some(kind) = words.next() else {
        return Err(format!(
            "the target is empty; the known targets are {}",
            known()
        ));
    };
    if !KNOWN_TARGETS.iter().any(|(k, _)| *k == kind) {
        let what = if TVM_ONLY_TARGETS.contains(&kind) {
            format!("target `{kind}` has no rules here (no pass reads it)")
        } else {
            format!("unknown target `{kind}`")
        };
        return Err(format!("{what}; the known targets are {}", known()));
    }
    if let Some(word) = words.find(|w| !w.starts_with('-')) {
        return Err(format!(
            "target options are written `-key=value`, found `{word}`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_levels_from_0_to_4() {
        assert_eq!(check_opt_level(0), Ok(0));
        assert_eq!(check_opt_level(4), Ok(4));
        assert!(check_opt_level(5).unwrap_err().contains("0..=4, not 5"));
        assert!(check_opt_level(-1).is_err());
        assert!(check_opt_level(1 << 40).is_err());
    }

    #[test]
    fn only_llvm_has_rules() {
        assert_eq!(check_target("llvm"), Ok(()));
        assert_eq!(check_target("llvm -mcpu=skylake-avx512"), Ok(()));
        let cuda = check_target("cuda").unwrap_err();
        assert!(
            cuda.starts_with("target `cuda` has no rules here"),
            "{cuda}"
        );
        assert!(
            cuda.contains("`llvm` (AlterOpLayout and Legalize"),
            "{cuda}"
        );
        assert!(check_target("nope")
            .unwrap_err()
            .starts_with("unknown target `nope`"));
        assert!(check_target("")
            .unwrap_err()
            .starts_with("the target is empty"));
        assert!(check_target("llvm mcpu").is_err());
    }
}
