//! Exhaustiveness of complete `match` expressions: TVM's `UnmatchedCases`
//! (`src/relay/analysis/match_exhaustion.cc`).
//!
//! Candidates start as `_`; a candidate that no clause matches is a missing
//! case; one that a clause matches only partly is expanded with the
//! constructors that clause uses, and each expansion is checked again.

use relay_ir::{Clause, IRModule, Pattern};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatchResult {
    Match,
    Clash,
    Unspecified,
}

/// How many candidates are examined at most; patterns whose expansion is
/// larger than this are not checked (TVM would take exponential time).
const MAX_CANDIDATES: usize = 100_000;

/// The cases no clause handles, or `Err` with a message when the patterns
/// name a type the module does not define.
pub(crate) fn unmatched_cases(
    clauses: &[Clause],
    module: Option<&IRModule>,
) -> Result<Vec<Pattern>, String> {
    let mut candidates = vec![Pattern::Wildcard];
    let mut failures = Vec::new();
    let mut examined = 0usize;
    while let Some(cand) = candidates.pop() {
        examined += 1;
        if examined > MAX_CANDIDATES {
            break;
        }
        let mut failure = true;
        for clause in clauses {
            match check(&clause.pattern, &cand) {
                MatchResult::Clash => continue,
                MatchResult::Match => {}
                MatchResult::Unspecified => {
                    candidates.extend(expand(&clause.pattern, &cand, module)?);
                }
            }
            failure = false;
            break;
        }
        if failure {
            failures.push(cand);
        }
    }
    Ok(failures)
}

fn check(pat: &Pattern, cand: &Pattern) -> MatchResult {
    match pat {
        Pattern::Wildcard | Pattern::Var(_) => MatchResult::Match,
        Pattern::Constructor(ctor, fields) => {
            let Pattern::Constructor(cctor, cfields) = cand else {
                return MatchResult::Unspecified;
            };
            if ctor != cctor {
                return MatchResult::Clash;
            }
            check_all(fields, cfields)
        }
        Pattern::Tuple(fields) => {
            let Pattern::Tuple(cfields) = cand else {
                return MatchResult::Unspecified;
            };
            check_all(fields, cfields)
        }
    }
}

fn check_all(fields: &[Pattern], cfields: &[Pattern]) -> MatchResult {
    if fields.len() != cfields.len() {
        return MatchResult::Clash;
    }
    let mut unspecified = false;
    for (p, c) in fields.iter().zip(cfields) {
        match check(p, c) {
            MatchResult::Clash => return MatchResult::Clash,
            MatchResult::Unspecified => unspecified = true,
            MatchResult::Match => {}
        }
    }
    if unspecified {
        MatchResult::Unspecified
    } else {
        MatchResult::Match
    }
}

/// Every expansion of the wildcards of `cand` one level deeper, guided by
/// the clause pattern `pat`.
fn expand(
    pat: &Pattern,
    cand: &Pattern,
    module: Option<&IRModule>,
) -> Result<Vec<Pattern>, String> {
    match pat {
        Pattern::Constructor(ctor, fields) => match cand {
            Pattern::Wildcard | Pattern::Var(_) => {
                let name = ctor.data().belong_to.name();
                let data = module
                    .and_then(|m| m.type_definition(name))
                    .ok_or_else(|| {
                        format!(
                            "the type `{name}` of constructor `{}` is not defined",
                            ctor.name()
                        )
                    })?;
                Ok(data
                    .constructors
                    .iter()
                    .map(|c| {
                        Pattern::Constructor(
                            c.clone(),
                            vec![Pattern::Wildcard; c.data().inputs.len()],
                        )
                    })
                    .collect())
            }
            Pattern::Constructor(cctor, cfields) => {
                let mut by_field = Vec::with_capacity(cfields.len());
                for (i, cf) in cfields.iter().enumerate() {
                    match fields.get(i) {
                        Some(p) => by_field.push(expand(p, cf, module)?),
                        None => by_field.push(vec![cf.clone()]),
                    }
                }
                Ok(cartesian(&by_field)
                    .into_iter()
                    .map(|fs| Pattern::Constructor(cctor.clone(), fs))
                    .collect())
            }
            Pattern::Tuple(_) => Ok(vec![cand.clone()]),
        },
        Pattern::Tuple(fields) => match cand {
            Pattern::Wildcard | Pattern::Var(_) => {
                Ok(vec![Pattern::Tuple(vec![Pattern::Wildcard; fields.len()])])
            }
            Pattern::Tuple(cfields) => {
                let mut by_field = Vec::with_capacity(cfields.len());
                for (i, cf) in cfields.iter().enumerate() {
                    match fields.get(i) {
                        Some(p) => by_field.push(expand(p, cf, module)?),
                        None => by_field.push(vec![cf.clone()]),
                    }
                }
                Ok(cartesian(&by_field)
                    .into_iter()
                    .map(Pattern::Tuple)
                    .collect())
            }
            Pattern::Constructor(..) => Ok(vec![cand.clone()]),
        },
        Pattern::Wildcard | Pattern::Var(_) => Ok(vec![cand.clone()]),
    }
}

/// TVM's `CartesianProduct`, in its order (the last field varies slowest).
fn cartesian(fields: &[Vec<Pattern>]) -> Vec<Vec<Pattern>> {
    let mut out: Vec<Vec<Pattern>> = vec![Vec::new()];
    for values in fields {
        let mut next = Vec::with_capacity(out.len() * values.len().max(1));
        for v in values {
            for prefix in &out {
                let mut c = prefix.clone();
                c.push(v.clone());
                next.push(c);
                if next.len() > MAX_CANDIDATES {
                    return next;
                }
            }
        }
        out = next;
    }
    out
}
