//! The partial evaluator's values: partially static values ([`PStatic`]),
//! their static parts ([`Static`]), static functions ([`StaticFunc`]) and
//! the fuel that bounds inlining ([`Fuel`]), as in TVM's `partial_eval.cc`.

use relay_ir::metadata::TensorData;
use relay_ir::{dtype::DataType, Constructor, Expr, Function, Var};
use std::rc::Rc;
use std::sync::Arc;

/// A shared partially static value.
pub(super) type PS = Rc<PStatic>;

/// A value known at compile time in part (`stat`) and computed at run time
/// by `dynamic`, an atomic expression.
pub(super) struct PStatic {
    pub stat: Option<Static>,
    pub dynamic: Expr,
    /// When the value was made: fuel decreases along the creation order.
    pub time: u64,
}

/// What is known of a value at compile time.
#[derive(Clone)]
pub(super) enum Static {
    Tensor(Arc<TensorData>),
    Tuple(Vec<PS>),
    Constructor(Constructor, Vec<PS>),
    /// A reference cell of the store.
    Ref(u64),
    Func(Rc<StaticFunc>),
}

/// What calling a static function does.
pub(super) enum StaticFunc {
    /// An operator (its expression): evaluated when every argument is
    /// static.
    Op(Expr),
    /// A primitive (fused) function: always called.
    Primitive(Expr),
    /// An ADT constructor (its expression): builds a static value.
    Constructor(Expr),
    /// A function literal or global function: inlined while fuel lasts.
    Closure(Closure),
}

/// A function with the values of its free variables.
pub(super) struct Closure {
    pub function: Function,
    /// The variable or global the function is bound to (called by that
    /// name when it is not inlined; bound to the function itself inside).
    pub name: Option<Expr>,
    pub captured: Vec<(Var, PS)>,
}

impl PStatic {
    /// TVM's `GetFuel`: the value's creation time and its static value if
    /// it is a positive int32/int64 scalar.
    pub(super) fn fuel(&self) -> Fuel {
        Fuel::Seq(vec![
            Fuel::Time(self.time),
            Fuel::Value(self.static_count()),
        ])
    }

    fn static_count(&self) -> u64 {
        let Some(Static::Tensor(data)) = &self.stat else {
            return 0;
        };
        if !data.shape.is_empty()
            || !(data.dtype == DataType::INT32 || data.dtype == DataType::INT64)
        {
            return 0;
        }
        data.get_i64(0).map_or(0, |v| u64::try_from(v).unwrap_or(0))
    }
}

/// A meet-semilattice with finite descending chains: every inlining of a
/// function must lower its fuel, so inlining terminates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Fuel {
    /// Not called yet.
    Top,
    Seq(Vec<Fuel>),
    Time(u64),
    Value(u64),
}

impl Fuel {
    /// The meet of `self` and `other`, and whether it is below `self`.
    pub(super) fn meet(&self, other: &Fuel) -> (Fuel, bool) {
        let mut progress = false;
        let met = self.meet_into(other, &mut progress);
        (met, progress)
    }

    fn meet_into(&self, other: &Fuel, progress: &mut bool) -> Fuel {
        match (self, other) {
            (Fuel::Top, _) => {
                *progress |= *other != Fuel::Top;
                other.clone()
            }
            (Fuel::Seq(mine), Fuel::Seq(theirs)) if mine.len() == theirs.len() => Fuel::Seq(
                mine.iter()
                    .zip(theirs)
                    .map(|(a, b)| a.meet_into(b, progress))
                    .collect(),
            ),
            (Fuel::Time(a), Fuel::Time(b)) => {
                *progress |= b < a;
                Fuel::Time(*a.min(b))
            }
            (Fuel::Value(a), Fuel::Value(b)) => {
                *progress |= b < a;
                Fuel::Value(*a.min(b))
            }
            // Mismatched shapes (never for one function's arguments): no
            // progress, so the call is not inlined.
            _ => self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Fuel;

    #[test]
    fn top_meets_to_the_other_with_progress() {
        assert_eq!(Fuel::Top.meet(&Fuel::Time(3)), (Fuel::Time(3), true));
        assert_eq!(Fuel::Top.meet(&Fuel::Top), (Fuel::Top, false));
    }

    #[test]
    fn sequences_make_progress_when_any_part_decreases() {
        let old = Fuel::Seq(vec![Fuel::Time(5), Fuel::Value(3)]);
        let same = Fuel::Seq(vec![Fuel::Time(7), Fuel::Value(3)]);
        let lower = Fuel::Seq(vec![Fuel::Time(7), Fuel::Value(2)]);
        assert_eq!(old.meet(&same), (old.clone(), false));
        assert_eq!(
            old.meet(&lower),
            (Fuel::Seq(vec![Fuel::Time(5), Fuel::Value(2)]), true)
        );
    }
}
