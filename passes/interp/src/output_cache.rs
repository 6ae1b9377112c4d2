//! The semantic check's outputs kept on disk between runs: a sweep that
//! checks sixty passes one at a time on the same module runs that module
//! on the same seeded inputs sixty times; with an [`OutputCache`] the
//! first run stores its outputs and the others read them.
//!
//! An entry's key says exactly what was run: the binary's version (the
//! caller's string), the entry function, the seeds, the limits that can
//! change a result, and the module's printed text (with its metadata and
//! types), by two independent 64-bit hashes and its length. The entry's
//! file is named by a hash of the key and holds the key in full, so a
//! colliding or stale file is recognised; the outputs carry a checksum,
//! so a truncated or corrupt file is too. Either is recomputed and
//! rewritten, never trusted. Only outputs that are all tensors (or tuples
//! of them) are stored; a run that fails, or returns a closure, an ADT or
//! a reference, is simply run again next time.

use crate::npy::{read_npy, write_npy};
use crate::value::Value;
use crate::{Limits, RuntimeError};
use relay_ir::printer::{print_module, PrintOptions};
use relay_ir::IRModule;
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The outputs of a module on each seed's input.
pub(crate) type Outputs = Vec<Result<Value, RuntimeError>>;

/// The first line of every entry (the format's version).
const MAGIC: &str = "relay semantic-check outputs 1";

/// A directory of stored outputs.
#[derive(Debug, Clone)]
pub struct OutputCache {
    dir: PathBuf,
    version: String,
}

/// What the run of a module was, as the text an entry must match.
pub(crate) struct Key {
    text: String,
}

/// The answer of [`OutputCache::load`].
pub(crate) enum Lookup {
    Hit(Outputs),
    /// No entry for the key.
    Miss,
    /// An entry that cannot be used (another key under the same name,
    /// truncated, corrupt): why.
    Unusable(String),
}

impl OutputCache {
    /// A cache in `dir` (created when first written to) for outputs
    /// computed by the build `version` (say, the binary's version and
    /// commit): entries of another version never match.
    pub fn new(dir: impl Into<PathBuf>, version: impl Into<String>) -> OutputCache {
        OutputCache {
            dir: dir.into(),
            version: version.into(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of running `entry` of `module` on the inputs of `seeds`,
    /// drawn in `domains` (the parameters given a domain,
    /// [`crate::input_domains::describe`]; empty when none, and then not in
    /// the key, so entries of modules without such parameters keep theirs).
    pub(crate) fn key(
        &self,
        module: &IRModule,
        entry: &str,
        seeds: &[u64],
        domains: &str,
        limits: &Limits,
    ) -> Key {
        let options = PrintOptions {
            show_meta_data: true,
            show_types: true,
            ..PrintOptions::default()
        };
        let module_text = print_module(module, &options);
        let mut sip = std::collections::hash_map::DefaultHasher::new();
        sip.write(module_text.as_bytes());
        let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
        Key {
            text: format!(
                "version {}\nentry {entry}\nseeds {}\n{}max_elements {}\nmax_depth {}\n\
                 module fnv1a {:016x} sip {:016x} length {}\n",
                self.version.replace('\n', " "),
                seeds.join(","),
                if domains.is_empty() {
                    String::new()
                } else {
                    format!("domains {}\n", domains.replace('\n', " "))
                },
                limits.max_elements,
                limits.max_depth,
                fnv1a(module_text.as_bytes()),
                sip.finish(),
                module_text.len(),
            ),
        }
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir
            .join(format!("{:016x}.outputs", fnv1a(key.text.as_bytes())))
    }

    /// The stored outputs of `key`.
    pub(crate) fn load(&self, key: &Key) -> Lookup {
        let path = self.path(key);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Unusable(format!("{}: {e}", path.display())),
        };
        match parse_entry(&bytes, key) {
            Ok(outputs) => Lookup::Hit(outputs),
            Err(why) => Lookup::Unusable(format!("{}: {why}", path.display())),
        }
    }

    /// Stores `outputs` under `key`; `Ok(false)` when they are not storable
    /// (a failed run, a value that is not tensors).
    pub(crate) fn store(&self, key: &Key, outputs: &Outputs) -> Result<bool, String> {
        let Some(payload) = encode_outputs(outputs) else {
            return Ok(false);
        };
        let mut bytes = format!(
            "{MAGIC}\n{}payload {} {:016x}\n",
            key.text,
            payload.len(),
            fnv1a(&payload)
        )
        .into_bytes();
        bytes.extend_from_slice(&payload);
        let path = self.path(key);
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        // Written beside and renamed, so a reader (another process of the
        // sweep) never sees half an entry.
        let partial = path.with_extension(format!("partial-{}", std::process::id()));
        std::fs::write(&partial, &bytes)
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                format!("cannot write {}: {e}", path.display())
            })?;
        Ok(true)
    }
}

/// The outputs of an entry's bytes, if its key is `key` and it is whole.
fn parse_entry(bytes: &[u8], key: &Key) -> Result<Outputs, String> {
    let header_len = MAGIC.len() + 1 + key.text.len();
    let header = bytes.get(..header_len).ok_or("shorter than its header")?;
    if header != format!("{MAGIC}\n{}", key.text).as_bytes() {
        return Err("written for another module, input or version".into());
    }
    let rest = &bytes[header_len..];
    let line_end = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no payload line")?;
    let line = std::str::from_utf8(&rest[..line_end]).map_err(|_| "a payload line not UTF-8")?;
    let payload = &rest[line_end + 1..];
    let mut fields = line.split(' ');
    let (Some("payload"), Some(length), Some(checksum), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(format!("a malformed payload line `{line}`"));
    };
    if length.parse::<usize>().ok() != Some(payload.len()) {
        return Err(format!(
            "{} bytes of outputs where the entry says {length}",
            payload.len()
        ));
    }
    if format!("{:016x}", fnv1a(payload)) != checksum {
        return Err("the outputs do not match their checksum".into());
    }
    let mut reader = Reader { bytes: payload };
    let count = reader.u64()?;
    let outputs = (0..count)
        .map(|_| decode_value(&mut reader).map(Ok))
        .collect::<Result<Outputs, String>>()?;
    if !reader.bytes.is_empty() {
        return Err("bytes after the last output".into());
    }
    Ok(outputs)
}

/// The bytes of `outputs`, when every one is a value made of tensors.
fn encode_outputs(outputs: &Outputs) -> Option<Vec<u8>> {
    let mut out = (outputs.len() as u64).to_le_bytes().to_vec();
    for output in outputs {
        encode_value(output.as_ref().ok()?, &mut out)?;
    }
    Some(out)
}

/// A tensor as `T`, its `.npy` length and bytes; a tuple as `U`, its
/// length and fields.
fn encode_value(value: &Value, out: &mut Vec<u8>) -> Option<()> {
    match value {
        Value::Tensor(tensor) => {
            let npy = write_npy(tensor).ok()?;
            out.push(b'T');
            out.extend_from_slice(&(npy.len() as u64).to_le_bytes());
            out.extend_from_slice(&npy);
        }
        Value::Tuple(fields) => {
            out.push(b'U');
            out.extend_from_slice(&(fields.len() as u64).to_le_bytes());
            for field in fields.iter() {
                encode_value(field, out)?;
            }
        }
        _ => return None,
    }
    Some(())
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err("the outputs end early".into());
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, String> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("eight bytes")))
    }

    fn len(&mut self) -> Result<usize, String> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.bytes.len())
            .ok_or_else(|| format!("a length {n} beyond the outputs"))
    }
}

fn decode_value(reader: &mut Reader<'_>) -> Result<Value, String> {
    match reader.take(1)?[0] {
        b'T' => {
            let n = reader.len()?;
            Ok(Value::Tensor(Arc::new(read_npy(reader.take(n)?)?)))
        }
        b'U' => {
            // Every field takes at least nine bytes, so a corrupt count
            // fails on the length check rather than allocating.
            let n = reader.len()?;
            let fields = (0..n)
                .map(|_| decode_value(reader))
                .collect::<Result<Vec<Value>, String>>()?;
            Ok(Value::Tuple(fields.into()))
        }
        tag => Err(format!("an unknown value tag {tag:#04x}")),
    }
}

/// 64-bit FNV-1a: the entry's file name, and one of the module's hashes
/// (the other is the standard library's SipHash, an unrelated function).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckMode, CheckOptions, SemanticCheck};
    use crate::test_util::module;
    use relay_pass_manager::{LogSink, PassInfo, PassInstrument};
    use std::sync::Mutex;

    const BEFORE: &str = "#[version = \"0.0.5\"]\n\
        def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3), float16]) {\n\
          (add(%x, 1f), multiply(%y, %y))\n\
        }\n";
    const AFTER: &str = "#[version = \"0.0.5\"]\n\
        def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3), float16]) {\n\
          (add(%x, 2f), multiply(%y, %y))\n\
        }\n";

    /// A fresh directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("relay-output-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// What a check of the pass `Change` (BEFORE → AFTER) says, and
    /// its statistics and log, with the cache in `dir` if any.
    fn check(dir: Option<&Path>) -> (String, crate::check::CheckStats, Vec<String>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink_log = log.clone();
        let sink: LogSink = Arc::new(move |text: &str| sink_log.lock().unwrap().push(text.into()));
        let check = SemanticCheck::new(CheckOptions {
            mode: CheckMode::End,
            inputs: 2,
            log: Some(sink),
            output_cache: dir.map(|dir| OutputCache::new(dir, "test build")),
            ..CheckOptions::default()
        });
        let info = PassInfo::new("Change", 0, &[]);
        check.run_before_pass(&module(BEFORE), &info).unwrap();
        let _ = check.run_after_pass(&module(AFTER), &info);
        let report = check.report().expect("the pass changes the result");
        let stats = check.stats();
        let text = format!("{report}\n{}", stats.render());
        let log = log.lock().unwrap().clone();
        (text, stats, log)
    }

    #[test]
    fn the_second_check_reads_every_output_and_reports_the_same() {
        let dir = scratch("reuse");
        let (plain, stats, _) = check(None);
        assert_eq!((stats.modules_run, stats.cache_hits), (2, 0));
        let (first, stats, _) = check(Some(&dir));
        assert_eq!((stats.modules_run, stats.cache_hits), (2, 0));
        let (second, stats, log) = check(Some(&dir));
        assert_eq!(
            (stats.modules_run, stats.cache_hits),
            (0, 2),
            "nothing is run again"
        );
        assert!(log.is_empty(), "{log:?}");
        assert_eq!(first, plain);
        assert_eq!(second, plain);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_or_foreign_entry_is_computed_again_and_rewritten() {
        let dir = scratch("damaged");
        let (plain, _, _) = check(Some(&dir));
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        assert_eq!(entries.len(), 2, "{entries:?}");
        // One cut short, one with a byte of its outputs changed.
        let bytes = std::fs::read(&entries[0]).unwrap();
        std::fs::write(&entries[0], &bytes[..bytes.len() - 5]).unwrap();
        let mut bytes = std::fs::read(&entries[1]).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&entries[1], &bytes).unwrap();
        let (again, stats, log) = check(Some(&dir));
        assert_eq!((stats.modules_run, stats.cache_hits), (2, 0));
        assert_eq!(again, plain);
        assert_eq!(log.len(), 2, "{log:?}");
        assert!(
            log.iter().any(|l| l.contains("bytes of outputs where")),
            "{log:?}"
        );
        assert!(log.iter().any(|l| l.contains("checksum")), "{log:?}");
        // Rewritten whole: the next check reads both.
        let (_, stats, _) = check(Some(&dir));
        assert_eq!((stats.modules_run, stats.cache_hits), (0, 2));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn another_version_module_or_seed_is_another_key() {
        let cache = OutputCache::new("unused", "build 1");
        let limits = Limits::default();
        let (before, after) = (module(BEFORE), module(AFTER));
        let key = |cache: &OutputCache, m: &IRModule, seeds: &[u64]| {
            cache.key(m, "main", seeds, "", &limits).text
        };
        let base = key(&cache, &before, &[0, 1]);
        assert_eq!(base, key(&cache, &module(BEFORE), &[0, 1]));
        assert_ne!(base, key(&cache, &after, &[0, 1]));
        assert_ne!(base, key(&cache, &before, &[1, 2]));
        let in_domains = cache
            .key(&before, "main", &[0, 1], "%x positive", &limits)
            .text;
        assert_ne!(base, in_domains);
        assert_ne!(
            base,
            key(&OutputCache::new("unused", "build 2"), &before, &[0, 1])
        );
        // An entry stored under one key is refused for another that
        // shares its file (as a hash collision would).
        let mut outputs = Vec::new();
        let mut payload = 1u64.to_le_bytes().to_vec();
        encode_value(
            &crate::run(
                &before,
                "main",
                crate::random_arguments(before.function("main").unwrap(), 0, limits.clone())
                    .unwrap(),
                limits.clone(),
            )
            .unwrap(),
            &mut payload,
        )
        .unwrap();
        let entry = format!(
            "{MAGIC}\n{base}payload {} {:016x}\n",
            payload.len(),
            fnv1a(&payload)
        );
        let mut bytes = entry.into_bytes();
        bytes.extend_from_slice(&payload);
        let other = Key {
            text: key(&cache, &after, &[0, 1]),
        };
        assert!(parse_entry(&bytes, &other).is_err());
        outputs.extend(parse_entry(&bytes, &Key { text: base }).expect("its own key reads back"));
        assert_eq!(outputs.len(), 1);
    }
}
