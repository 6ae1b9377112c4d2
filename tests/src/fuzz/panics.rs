//! Noticing panics that the code under test catches itself: the language
//! server turns a handler's panic into an error answer, an "internal error"
//! diagnostic or only a line on stderr, so a fuzz target cannot see them
//! from the outside. A process-wide panic hook counts every panic, and a
//! [`PanicWatch`] fails when the count moved while it watched.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

static PANICS: AtomicUsize = AtomicUsize::new(0);
/// The last panic: its thread and message.
///
/// Whoever holds the lock must not panic while holding it: the hook takes
/// it for every panic, so a panic under it would wait for itself, and
/// every later panic in the process would wait behind it (the fuzz smoke
/// test once hung that way until CI killed it). Both holders only copy a
/// string they already have.
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// Counts every panic in the process, caught or not, then reports it as
/// the previous hook did.
fn install_panic_counter() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            let thread = std::thread::current();
            let message = format!("thread '{}' {info}", thread.name().unwrap_or("<unnamed>"));
            *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = message;
            previous(info);
        }));
    });
}

/// Watches for panics anywhere in the process from [`PanicWatch::start`]
/// on: the code under test's, caught by it or not, and those of whatever
/// else runs meanwhile (other fuzz targets on other test threads), whose
/// thread the message names.
pub struct PanicWatch {
    before: usize,
}

impl PanicWatch {
    pub fn start() -> PanicWatch {
        install_panic_counter();
        PanicWatch {
            before: PANICS.load(Ordering::SeqCst),
        }
    }

    /// Panics if anything panicked since [`PanicWatch::start`], with the
    /// last panic's thread and message.
    pub fn assert_none(&self, what: &str) {
        let panics = PANICS.load(Ordering::SeqCst) - self.before;
        if panics == 0 {
            return;
        }
        // Copied out first: the panic below goes through the hook, which
        // takes the lock.
        let last = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).clone();
        panic!("{what}: {panics} panic(s) meanwhile (caught or not); the last: {last}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::mpsc::channel;
    use std::time::Duration;

    /// Runs `f` on a thread of its own and gives its result. If it has not
    /// finished within `deadline` (a hang), the whole test process exits
    /// with a failure: a panic could not report it, since a hung hook
    /// blocks every later panic too.
    fn within<T: Send + 'static>(deadline: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (sender, receiver) = channel();
        std::thread::spawn(move || {
            let _ = sender.send(f());
        });
        receiver.recv_timeout(deadline).unwrap_or_else(|_| {
            eprintln!("did not finish within {deadline:?}: a hang");
            std::process::exit(1)
        })
    }

    /// Panics on `threads` threads at once and waits for them.
    fn panic_on_threads(threads: usize, message: &'static str) {
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    panic!("{message}");
                })
            })
            .collect();
        for handle in handles {
            assert!(handle.join().is_err());
        }
    }

    #[test]
    fn a_watch_fails_promptly_with_the_message_when_threads_panic_at_once() {
        let result = within(Duration::from_secs(20), || {
            let watch = PanicWatch::start();
            panic_on_threads(2, "the first target failed");
            // The watch's own failure goes through the hook too, while
            // other threads keep panicking.
            let checked = catch_unwind(AssertUnwindSafe(|| watch.assert_none("the session")));
            panic_on_threads(2, "a later target failed");
            checked.map_err(|payload| payload.downcast_ref::<String>().cloned())
        });
        let message = result
            .expect_err("panics on other threads went unnoticed")
            .expect("a formatted message");
        assert!(
            message.contains("the first target failed"),
            "the message does not name the panic: {message}"
        );
    }

    #[test]
    fn a_watch_passes_when_nothing_panicked() {
        let watch = PanicWatch::start();
        watch.assert_none("nothing");
    }
}
