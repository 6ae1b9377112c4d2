//! A stack of scopes with constant-time lookup, TVM's `ScopeStack` without
//! its linear walk over scopes (a chain of thousands of `let`s pushes
//! thousands of scopes).
//!
//! As in TVM, whose scopes are `std::unordered_map`s filled with `insert`, a
//! name added twice to the same scope keeps its first binding.

/// A hash map with the crate's fast hasher: the lowering's tables of names.
pub(super) type FastHashMap<K, V> = relay_ir::fxhash::FxMap<K, V>;

/// Scopes mapping names to bindings of type `T`.
#[derive(Debug)]
pub(super) struct Scopes<T> {
    /// The index in `stacks` of each name ever bound.
    names: FastHashMap<Box<str>, u32>,
    /// Each name's bindings, innermost last, with the depth of their scope.
    stacks: Vec<Vec<(u32, T)>>,
    /// The names added (their index), in order, with their scope depth (to
    /// undo on pop).
    log: Vec<(u32, u32)>,
    /// The current depth; 0 is the outermost scope.
    depth: u32,
}

impl<T: Clone> Scopes<T> {
    pub(super) fn new() -> Scopes<T> {
        Scopes {
            names: FastHashMap::default(),
            stacks: Vec::new(),
            log: Vec::new(),
            depth: 0,
        }
    }

    /// Opens a scope.
    pub(super) fn push(&mut self) {
        self.depth += 1;
    }

    /// Closes the innermost scope, forgetting its bindings.
    pub(super) fn pop(&mut self) {
        while let Some(&(depth, index)) = self.log.last() {
            if depth < self.depth {
                break;
            }
            self.log.pop();
            if let Some(stack) = self.stacks.get_mut(index as usize) {
                stack.pop();
            }
        }
        self.depth = self.depth.saturating_sub(1);
    }

    /// Binds `name` in the innermost scope. If that scope binds `name`
    /// already, nothing changes and the existing binding is returned.
    pub(super) fn add(&mut self, name: &str, value: T) -> Result<(), T> {
        let depth = self.depth;
        // Most names are bound again and again (`%x` in every function):
        // allocate the key only for a name never seen.
        let index = match self.names.get(name) {
            Some(&index) => index,
            None => {
                let index = self.stacks.len() as u32;
                self.stacks.push(Vec::new());
                self.names.insert(name.into(), index);
                index
            }
        };
        let Some(stack) = self.stacks.get_mut(index as usize) else {
            return Ok(());
        };
        if let Some((d, existing)) = stack.last() {
            if *d == depth {
                return Err(existing.clone());
            }
        }
        stack.push((depth, value));
        self.log.push((depth, index));
        Ok(())
    }

    /// The innermost binding of `name`.
    pub(super) fn lookup(&self, name: &str) -> Option<&T> {
        let index = *self.names.get(name)?;
        self.stacks
            .get(index as usize)
            .and_then(|stack| stack.last())
            .map(|(_, value)| value)
    }

    /// The names that have a binding in some open scope.
    pub(super) fn visible_names(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .filter(|(_, &index)| {
                self.stacks
                    .get(index as usize)
                    .is_some_and(|s| !s.is_empty())
            })
            .map(|(name, _)| &**name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_first_and_first_binding_wins() {
        let mut s: Scopes<i32> = Scopes::new();
        s.push();
        assert_eq!(s.add("x", 1), Ok(()));
        assert_eq!(s.add("x", 2), Err(1));
        assert_eq!(s.lookup("x"), Some(&1));
        s.push();
        assert_eq!(s.add("x", 3), Ok(()));
        assert_eq!(s.lookup("x"), Some(&3));
        s.pop();
        assert_eq!(s.lookup("x"), Some(&1));
        s.pop();
        assert_eq!(s.lookup("x"), None);
        assert_eq!(s.visible_names().count(), 0);
    }
}
