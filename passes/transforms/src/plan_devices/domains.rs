//! Device domains and their unification (TVM's `DeviceDomains`,
//! `src/relay/transforms/device_domains.{h,cc}`):
//!
//! ```text
//! D ::= <virtual device>      -- first-order, possibly unconstrained
//!     | fn(D, …, D): D        -- higher-order, for expressions of function type
//! ```
//!
//! Domains live in an arena with union-find equivalences; every
//! expression (by node, globals by name) and every call's callee has one.

use super::config::CompilationConfig;
use super::virtual_device::VirtualDevice;
use relay_ir::fxhash::FxMap;
use relay_ir::{Call, Expr, ExprKind, IRModule, Type, TypeKind};
use std::collections::HashMap;

/// A domain in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DomainId(u32);

#[derive(Debug, Clone)]
enum Domain {
    First(VirtualDevice),
    /// Parameters then result.
    Higher(Vec<DomainId>),
}

/// What an expression's domain is keyed by: a node, or a global's name
/// (every `@f` is the same global, as in TVM).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ExprKey {
    Node(usize),
    Global(String),
}

fn key(expr: &Expr) -> ExprKey {
    match expr.kind() {
        ExprKind::GlobalVar(g) => ExprKey::Global(g.name().to_string()),
        _ => ExprKey::Node(expr.addr()),
    }
}

/// A failure TVM reports by aborting (`LOG(FATAL)`/`ICHECK`), as text.
pub type Fatal = String;

pub struct DeviceDomains<'c> {
    pub config: &'c CompilationConfig,
    domains: Vec<Domain>,
    parent: Vec<Option<DomainId>>,
    fully_constrained: HashMap<VirtualDevice, DomainId>,
    expr_domains: FxMap<ExprKey, DomainId>,
    callee_domains: FxMap<usize, DomainId>,
    host: DomainId,
    /// The types of the module's global functions.
    global_types: HashMap<String, Type>,
}

impl<'c> DeviceDomains<'c> {
    pub fn new(config: &'c CompilationConfig, module: &IRModule) -> DeviceDomains<'c> {
        let global_types = module
            .functions()
            .filter_map(|(name, f)| Some((name.to_string(), f.expr().checked_type()?.clone())))
            .collect();
        let mut d = DeviceDomains {
            config,
            domains: Vec::new(),
            parent: Vec::new(),
            fully_constrained: HashMap::new(),
            expr_domains: FxMap::default(),
            callee_domains: FxMap::default(),
            host: DomainId(0),
            global_types,
        };
        d.host = d.first_order(config.host.clone());
        d
    }

    fn push(&mut self, domain: Domain) -> DomainId {
        let id = DomainId(self.domains.len() as u32);
        self.domains.push(domain);
        self.parent.push(None);
        id
    }

    /// TVM's `MakeFirstOrderDomain` (fully constrained devices share one).
    pub fn first_order(&mut self, vd: VirtualDevice) -> DomainId {
        if vd.is_fully_constrained() {
            if let Some(&d) = self.fully_constrained.get(&vd) {
                return d;
            }
            let d = self.push(Domain::First(vd.clone()));
            self.fully_constrained.insert(vd, d);
            return d;
        }
        self.push(Domain::First(vd))
    }

    pub fn higher_order(&mut self, args_and_result: Vec<DomainId>) -> DomainId {
        self.push(Domain::Higher(args_and_result))
    }

    /// TVM's `MakeDomain`: function types get a higher-order domain whose
    /// result (innermost) is `vd`, parameters unconstrained.
    fn make(&mut self, ty: Option<&Type>, vd: VirtualDevice) -> DomainId {
        match ty.map(Type::kind) {
            Some(TypeKind::Func(f)) => {
                let mut parts: Vec<DomainId> = f
                    .params
                    .iter()
                    .map(|p| self.make(Some(p), VirtualDevice::unconstrained()))
                    .collect();
                parts.push(self.make(Some(&f.ret), vd));
                self.higher_order(parts)
            }
            _ => self.first_order(vd),
        }
    }

    /// A fresh unconstrained domain of the shape of `ty`.
    pub fn free(&mut self, ty: Option<&Type>) -> DomainId {
        self.make(ty, VirtualDevice::unconstrained())
    }

    /// TVM's `ForVirtualDevice`: canonicalises `vd` first.
    pub fn for_virtual_device(
        &mut self,
        ty: Option<&Type>,
        vd: &VirtualDevice,
    ) -> Result<DomainId, Fatal> {
        let vd = self.config.canonical(vd)?;
        if vd.is_fully_unconstrained() {
            return Err("a virtual device constraint is fully unconstrained".to_string());
        }
        Ok(self.make(ty, vd))
    }

    pub fn lookup(&mut self, d: DomainId) -> DomainId {
        let mut root = d;
        while let Some(p) = self.parent[root.0 as usize] {
            root = p;
        }
        let mut cur = d;
        while let Some(p) = self.parent[cur.0 as usize] {
            self.parent[cur.0 as usize] = Some(root);
            cur = p;
        }
        root
    }

    fn parts(&self, d: DomainId) -> Option<&[DomainId]> {
        match &self.domains[d.0 as usize] {
            Domain::Higher(p) => Some(p),
            Domain::First(_) => None,
        }
    }

    pub fn is_higher_order(&self, d: DomainId) -> bool {
        self.parts(d).is_some()
    }

    /// The number of parameters of a higher-order domain (0 for first-order).
    pub fn arity(&self, d: DomainId) -> usize {
        self.parts(d).map_or(0, |p| p.len() - 1)
    }

    pub fn param(&mut self, d: DomainId, i: usize) -> DomainId {
        let d = self.lookup(d);
        let p = self.parts(d).expect("a higher-order domain")[i];
        self.lookup(p)
    }

    pub fn result(&mut self, d: DomainId) -> DomainId {
        let d = self.lookup(d);
        let p = *self
            .parts(d)
            .expect("a higher-order domain")
            .last()
            .unwrap();
        self.lookup(p)
    }

    fn join(&mut self, lhs: DomainId, rhs: DomainId) -> Result<Option<DomainId>, Fatal> {
        if lhs == rhs {
            return Ok(Some(lhs));
        }
        match (
            self.domains[lhs.0 as usize].clone(),
            self.domains[rhs.0 as usize].clone(),
        ) {
            (Domain::First(l), Domain::First(r)) => {
                if r.is_fully_unconstrained() {
                    return Ok(Some(lhs));
                }
                if l.is_fully_unconstrained() {
                    return Ok(Some(rhs));
                }
                match VirtualDevice::join(&l, &r) {
                    None => Ok(None),
                    Some(j) => {
                        let j = self.config.canonical(&j)?;
                        Ok(Some(self.first_order(j)))
                    }
                }
            }
            (Domain::Higher(l), Domain::Higher(r)) if l.len() == r.len() => {
                let mut parts = Vec::with_capacity(l.len());
                for (a, b) in l.into_iter().zip(r) {
                    match self.unify(a, b)? {
                        Some(j) => parts.push(j),
                        None => return Ok(None),
                    }
                }
                Ok(Some(self.higher_order(parts)))
            }
            _ => Err(format!(
                "Device domains:\n{}\nand\n{}\ndo not have the same kind and can't be unified.",
                self.describe(lhs),
                self.describe(rhs)
            )),
        }
    }

    /// TVM's `UnifyOrNull`.
    pub fn unify(&mut self, lhs: DomainId, rhs: DomainId) -> Result<Option<DomainId>, Fatal> {
        let lhs = self.lookup(lhs);
        let rhs = self.lookup(rhs);
        let Some(joined) = self.join(lhs, rhs)? else {
            return Ok(None);
        };
        if lhs != joined {
            self.parent[lhs.0 as usize] = Some(joined);
        }
        if rhs != joined {
            self.parent[rhs.0 as usize] = Some(joined);
        }
        Ok(Some(joined))
    }

    /// TVM's `UnifyCollapsedOrFalse`: a higher-order `rhs` has every
    /// parameter and its result unified with the first-order `lhs`.
    pub fn unify_collapsed(&mut self, lhs: DomainId, rhs: DomainId) -> Result<bool, Fatal> {
        if !self.is_higher_order(rhs) {
            return Ok(self.unify(lhs, rhs)?.is_some());
        }
        let rhs = self.lookup(rhs);
        let parts = self.parts(rhs).expect("higher-order").to_vec();
        for p in parts {
            if self.unify(p, lhs)?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The domain of `expr`, created unconstrained on first request.
    pub fn domain_for(&mut self, expr: &Expr) -> DomainId {
        let k = key(expr);
        if let Some(&d) = self.expr_domains.get(&k) {
            return self.lookup(d);
        }
        let ty = match (&k, expr.checked_type()) {
            (_, Some(t)) => Some(t.clone()),
            (ExprKey::Global(name), None) => self.global_types.get(name).cloned(),
            _ => None,
        };
        let d = self.free(ty.as_ref());
        self.expr_domains.insert(k, d);
        d
    }

    pub fn contains(&self, expr: &Expr) -> bool {
        self.expr_domains.contains_key(&key(expr))
    }

    /// TVM's `DomainForCallee`: the domain a call's callee must have.
    pub fn domain_for_callee(&mut self, call_expr: &Expr, call: &Call) -> Result<DomainId, Fatal> {
        if let Some(&d) = self.callee_domains.get(&call_expr.addr()) {
            return Ok(self.lookup(d));
        }
        let arity_error = |n: usize| {
            format!(
                "`{}` expects {n} arguments, found {}",
                call.callee.as_op().map_or("", |o| o.name.as_str()),
                call.args.len()
            )
        };
        let arg_type = |i: usize| call.args.get(i).and_then(|a| a.checked_type().cloned());
        let call_type = call_expr.checked_type().cloned();
        let parts: Vec<DomainId> = match call.callee.kind() {
            ExprKind::Op(op) => match op.name.as_str() {
                "on_device" => {
                    let props = super::OnDeviceProps::read(call, self.config)?;
                    let body_ty = arg_type(0);
                    let constrained = |d: &mut Self, on: bool| {
                        if on {
                            d.for_virtual_device(body_ty.as_ref(), &props.virtual_device)
                        } else {
                            Ok(d.free(body_ty.as_ref()))
                        }
                    };
                    vec![
                        constrained(self, props.constrain_body)?,
                        constrained(self, props.constrain_result)?,
                    ]
                }
                "device_copy" => {
                    let (src, dst) = super::device_copy_devices(call, self.config)?;
                    let body_ty = arg_type(0);
                    vec![
                        self.for_virtual_device(body_ty.as_ref(), &src)?,
                        self.for_virtual_device(body_ty.as_ref(), &dst)?,
                    ]
                }
                "memory.alloc_storage" => {
                    if call.args.len() != 2 {
                        return Err(arity_error(2));
                    }
                    let io = super::virtual_device::DeviceIo::new(self.config);
                    let vd = io.read(call.attrs.as_ref().and_then(|a| a.get("virtual_device")))?;
                    let result = self.for_virtual_device(call_type.as_ref(), &vd)?;
                    vec![self.host, self.host, result]
                }
                "memory.alloc_tensor" => {
                    if call.args.len() != 3 {
                        return Err(arity_error(3));
                    }
                    let free = self.free(call_type.as_ref());
                    vec![free, self.host, self.host, free]
                }
                "vm.shape_of" => {
                    if call.args.len() != 1 {
                        return Err(arity_error(1));
                    }
                    vec![self.free(arg_type(0).as_ref()), self.host]
                }
                "vm.invoke_tvm_op" => {
                    if call.args.len() != 3 {
                        return Err(arity_error(3));
                    }
                    let free = self.free(call_type.as_ref());
                    vec![self.free(arg_type(0).as_ref()), free, free, free]
                }
                "vm.reshape_tensor" => {
                    if call.args.len() != 2 {
                        return Err(arity_error(2));
                    }
                    let free = self.free(call_type.as_ref());
                    vec![free, self.host, free]
                }
                _ => {
                    // Primitives are device polymorphic: one free domain for
                    // every argument and the result of this call.
                    let free = self.first_order(VirtualDevice::unconstrained());
                    vec![free; call.args.len() + 1]
                }
            },
            ExprKind::Constructor(_) => {
                let (params, ret) = match call.callee.checked_type().map(Type::kind) {
                    Some(TypeKind::Func(f)) => (f.params.clone(), Some(f.ret.clone())),
                    _ => (
                        call.args
                            .iter()
                            .filter_map(|a| a.checked_type().cloned())
                            .collect(),
                        call_type.clone(),
                    ),
                };
                let result = self.free(ret.as_ref());
                let mut parts = Vec::with_capacity(params.len() + 1);
                for p in &params {
                    let param = self.free(Some(p));
                    if !self.unify_collapsed(result, param)? {
                        return Err("constructor argument domains do not collapse".to_string());
                    }
                    parts.push(param);
                }
                parts.push(result);
                parts
            }
            _ => return Ok(self.domain_for(&call.callee)),
        };
        let d = self.higher_order(parts);
        self.callee_domains.insert(call_expr.addr(), d);
        Ok(d)
    }

    pub fn result_domain(&mut self, d: DomainId) -> DomainId {
        let mut d = self.lookup(d);
        while let Some(parts) = self.parts(d) {
            let last = *parts.last().unwrap();
            d = self.lookup(last);
        }
        d
    }

    /// The virtual device of `d`'s (innermost) result.
    pub fn result_device(&mut self, d: DomainId) -> VirtualDevice {
        let r = self.result_domain(d);
        match &self.domains[r.0 as usize] {
            Domain::First(vd) => vd.clone(),
            Domain::Higher(_) => unreachable!("result_domain is first-order"),
        }
    }

    pub fn is_fully_constrained(&mut self, d: DomainId) -> bool {
        let d = self.lookup(d);
        match self.domains[d.0 as usize].clone() {
            Domain::First(vd) => vd.is_fully_constrained(),
            Domain::Higher(parts) => parts.into_iter().all(|p| self.is_fully_constrained(p)),
        }
    }

    /// TVM's `SetDefault`.
    pub fn set_default(&mut self, d: DomainId, default: &VirtualDevice) -> Result<(), Fatal> {
        let d = self.lookup(d);
        match self.domains[d.0 as usize].clone() {
            Domain::First(vd) => {
                let defaulted = VirtualDevice::default_from(&vd, default, self.config);
                let defaulted = self.config.canonical(&defaulted)?;
                let default_domain = self.first_order(defaulted);
                if self.unify(d, default_domain)?.is_none() {
                    return Err(format!(
                        "domain:\n{}\ndefault domain:\n{}",
                        self.describe(d),
                        self.describe(default_domain)
                    ));
                }
                Ok(())
            }
            Domain::Higher(parts) => {
                for p in parts {
                    self.set_default(p, default)?;
                }
                Ok(())
            }
        }
    }

    /// TVM's `SetResultDefaultThenParams`.
    pub fn set_result_default_then_params(
        &mut self,
        d: DomainId,
        default: &VirtualDevice,
    ) -> Result<(), Fatal> {
        if !self.is_higher_order(d) {
            return self.set_default(d, default);
        }
        let r = self.result_domain(d);
        self.set_default(r, default)?;
        let result = self.result_device(d);
        self.set_default(d, &result)
    }

    /// A snapshot of the equivalences, for TVM's `OptionalUnifyExprExact`.
    pub fn snapshot(&self) -> Vec<Option<DomainId>> {
        self.parent.clone()
    }

    pub fn restore(&mut self, snapshot: Vec<Option<DomainId>>) {
        let mut snapshot = snapshot;
        // Domains made since the snapshot stay, unconnected.
        snapshot.resize(self.parent.len(), None);
        self.parent = snapshot;
    }

    /// TVM's `DeviceDomains::ToString` (`?n?` for an unconstrained domain,
    /// numbered by its place in the arena rather than its address).
    pub fn describe(&mut self, d: DomainId) -> String {
        let d = self.lookup(d);
        match self.domains[d.0 as usize].clone() {
            Domain::First(vd) => {
                let mut out = String::new();
                if !vd.is_fully_constrained() {
                    out.push_str(&format!("?{}?", d.0));
                }
                if !vd.is_fully_unconstrained() {
                    out.push_str(&vd.describe(self.config));
                }
                out
            }
            Domain::Higher(parts) => {
                let (result, params) = parts.split_last().expect("a result");
                let params: Vec<String> = params.iter().map(|p| self.describe(*p)).collect();
                format!("fn({}):{}", params.join(","), self.describe(*result))
            }
        }
    }
}
