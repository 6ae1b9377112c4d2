//! Our own generator of large, realistic Relay modules for benchmarks and
//! scale tests: each function is a ResNet-v2 bottleneck network (the body
//! shape of TVM's `resnet152` test model: batch norms, 1×1/3×3/1×1
//! convolutions, projection shortcuts, a dense head), written as TVM prints
//! it (graph bindings `%N`, `/* ty=… */` comments), with its own parameter
//! names. Graph binding numbers are unique in the whole file, as TVM's
//! table of `%N` belongs to the parse. A `@main` refers to every network, so
//! the functions have a dependent.

use std::fmt::Write;

/// Units per stage of ResNet-152 (ResNet-50 is `[3, 4, 6, 3]`).
pub const RESNET152_UNITS: [usize; 4] = [3, 8, 36, 3];

/// A module of `functions` ResNet networks with `units` bottleneck units per
/// stage, plus a `@main` referring to each of them.
pub fn resnet_module(functions: usize, units: [usize; 4]) -> String {
    let mut out = String::from("#[version = \"0.0.5\"]\n");
    let mut next = 0usize;
    for f in 0..functions {
        write_network(&mut out, f, units, &mut next);
    }
    // `@main` refers to every network (a tuple of the functions), so each
    // one has a dependent whose type changes with it.
    out.push_str("def @main() {\n  (");
    for f in 0..functions {
        if f > 0 {
            out.push_str(", ");
        }
        write!(out, "@net{f}").unwrap();
    }
    out.push_str(")\n}\n");
    out
}

/// A module of about `bytes` bytes of ResNet-152 networks.
pub fn resnet_module_of_size(bytes: usize) -> String {
    let one = resnet_module(1, RESNET152_UNITS).len();
    resnet_module(bytes.div_ceil(one).max(1), RESNET152_UNITS)
}

fn tensor(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    if dims.len() == 1 {
        format!("Tensor[({}), float32]", dims[0])
    } else {
        format!("Tensor[({}), float32]", dims.join(", "))
    }
}

/// Builds the parameter list and the body of one network together.
struct Net {
    prefix: String,
    params: Vec<(String, String)>,
    body: String,
    next: usize,
}

impl Net {
    fn param(&mut self, name: &str, shape: &[usize]) -> String {
        let name = format!("{}{name}", self.prefix);
        self.params.push((name.clone(), tensor(shape)));
        format!("%{name}")
    }

    fn bind(&mut self, value: String, ty: String) -> String {
        let n = self.next;
        self.next += 1;
        writeln!(self.body, "  %{n} = {value} /* ty={ty} */;").unwrap();
        format!("%{n}")
    }

    /// `batch_norm` then its first field.
    fn batch_norm(&mut self, x: &str, name: &str, shape: &[usize]) -> String {
        let c = shape[1];
        let g = self.param(&format!("{name}_gamma"), &[c]);
        let b = self.param(&format!("{name}_beta"), &[c]);
        let m = self.param(&format!("{name}_moving_mean"), &[c]);
        let v = self.param(&format!("{name}_moving_var"), &[c]);
        let ty = format!("({}, {}, {})", tensor(shape), tensor(&[c]), tensor(&[c]));
        let t = self.bind(
            format!("nn.batch_norm({x}, {g}, {b}, {m}, {v}, epsilon=2e-05f)"),
            ty,
        );
        self.bind(format!("{t}.0"), tensor(shape))
    }

    fn relu(&mut self, x: &str, shape: &[usize]) -> String {
        self.bind(format!("nn.relu({x})"), tensor(shape))
    }

    /// A square convolution; returns the output and its shape.
    fn conv(
        &mut self,
        x: &str,
        name: &str,
        shape: &[usize],
        channels: usize,
        kernel: usize,
        stride: usize,
    ) -> (String, Vec<usize>) {
        let w = self.param(
            &format!("{name}_weight"),
            &[channels, shape[1], kernel, kernel],
        );
        let pad = kernel / 2;
        let h = (shape[2] + 2 * pad - kernel) / stride + 1;
        let out = vec![shape[0], channels, h, h];
        let strides = if stride == 1 {
            String::new()
        } else {
            format!("strides=[{stride}, {stride}], ")
        };
        let value = format!(
            "nn.conv2d({x}, {w}, {strides}padding=[{pad}, {pad}, {pad}, {pad}], channels={channels}, kernel_size=[{kernel}, {kernel}])"
        );
        let y = self.bind(value, tensor(&out));
        (y, out)
    }
}

fn build_network(f: usize, units: [usize; 4], next: &mut usize) -> Net {
    let mut net = Net {
        prefix: format!("n{f}_"),
        params: Vec::new(),
        body: String::new(),
        next: *next,
    };
    let data = net.param("data", &[1, 3, 224, 224]);
    let mut shape = vec![1, 3, 224, 224];
    let x = net.batch_norm(&data, "bn_data", &shape);
    let (x, s) = net.conv(&x, "conv0", &shape, 64, 7, 2);
    shape = s;
    let x = net.batch_norm(&x, "bn0", &shape);
    let x = net.relu(&x, &shape);
    let pooled = vec![1, 64, 56, 56];
    let mut x = net.bind(
        format!("nn.max_pool2d({x}, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])"),
        tensor(&pooled),
    );
    shape = pooled;
    for (stage, (&count, filters)) in units.iter().zip([256, 512, 1024, 2048]).enumerate() {
        for unit in 0..count {
            let name = format!("stage{}_unit{}", stage + 1, unit + 1);
            let stride = if unit == 0 && stage > 0 { 2 } else { 1 };
            let a = net.batch_norm(&x, &format!("{name}_bn1"), &shape);
            let act1 = net.relu(&a, &shape);
            let (y, s1) = net.conv(&act1, &format!("{name}_conv1"), &shape, filters / 4, 1, 1);
            let y = net.batch_norm(&y, &format!("{name}_bn2"), &s1);
            let y = net.relu(&y, &s1);
            let (y, s2) = net.conv(&y, &format!("{name}_conv2"), &s1, filters / 4, 3, stride);
            let y = net.batch_norm(&y, &format!("{name}_bn3"), &s2);
            let y = net.relu(&y, &s2);
            let (y, s3) = net.conv(&y, &format!("{name}_conv3"), &s2, filters, 1, 1);
            let shortcut = if unit == 0 {
                net.conv(&act1, &format!("{name}_sc"), &shape, filters, 1, stride)
                    .0
            } else {
                x.clone()
            };
            x = net.bind(format!("add({y}, {shortcut})"), tensor(&s3));
            shape = s3;
        }
    }
    let x = net.batch_norm(&x, "bn1", &shape);
    let x = net.relu(&x, &shape);
    let pooled = vec![1, shape[1], 1, 1];
    let x = net.bind(format!("nn.global_avg_pool2d({x})"), tensor(&pooled));
    let flat = vec![1, shape[1]];
    let x = net.bind(format!("nn.batch_flatten({x})"), tensor(&flat));
    let w = net.param("fc1_weight", &[1000, shape[1]]);
    let b = net.param("fc1_bias", &[1000]);
    let x = net.bind(
        format!("nn.dense({x}, {w}, units=1000)"),
        tensor(&[1, 1000]),
    );
    let x = net.bind(
        format!("nn.bias_add({x}, {b}, axis=-1)"),
        tensor(&[1, 1000]),
    );
    writeln!(
        net.body,
        "  nn.softmax({x}) /* ty={} */",
        tensor(&[1, 1000])
    )
    .unwrap();
    *next = net.next;
    net
}

fn write_network(out: &mut String, f: usize, units: [usize; 4], next: &mut usize) {
    let net = build_network(f, units, next);
    write!(out, "def @net{f}(").unwrap();
    for (i, (name, ty)) in net.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write!(out, "%{name}: {ty} /* ty={ty} */").unwrap();
    }
    writeln!(out, ") -> {} {{", tensor(&[1, 1000])).unwrap();
    out.push_str(&net.body);
    out.push_str("}\n\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_network_is_about_the_size_of_resnet152() {
        let text = resnet_module(1, RESNET152_UNITS);
        assert!((120_000..260_000).contains(&text.len()), "{}", text.len());
        assert!(text.contains("def @net0(%n0_data: Tensor[(1, 3, 224, 224), float32]"));
        assert!(text.contains("nn.softmax("));
    }

    #[test]
    fn graph_binding_numbers_are_unique_in_the_file() {
        let text = resnet_module(3, [1, 1, 1, 1]);
        let mut seen = std::collections::HashSet::new();
        for line in text.lines() {
            if let Some(rest) = line.trim_start().strip_prefix('%') {
                if let Some((n, _)) = rest.split_once(" = ") {
                    assert!(seen.insert(n.to_string()), "%{n} bound twice");
                }
            }
        }
        assert!(seen.len() > 30);
    }

    #[test]
    fn a_10_mb_module_has_64_or_more_networks() {
        let text = resnet_module_of_size(10 << 20);
        assert!(text.len() >= 10 << 20);
        assert!(text.matches("def @net").count() >= 64);
    }
}
