//! The analysis thread: one thread builds every analysis (and the indexes
//! a first request needs) and drops the analyses that are no longer
//! current.
//!
//! Why one thread rather than the blocking pool: the allocator (mimalloc)
//! keeps memory freed by a thread other than the one that allocated it in
//! the allocating thread's heap until that thread allocates again. With
//! analyses built on one pool thread and dropped on another, the pages of
//! every old analysis stayed with idle threads, and the server's resident
//! memory for a 10 MB module grew by about 170 MB over 20 edits. On one
//! thread every free is local: the next analysis reuses the pages, and when
//! the queue is empty the thread gives its free pages back to the system.
//! Analyses of different documents thus run one after the other; an
//! obsolete one stops at its next stage. The stages that work on many
//! definitions at once (lowering and inferring a whole module) spread
//! them over rayon's threads; those give their free pages back too when
//! this thread goes idle.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Sender, TryRecvError};
use std::sync::OnceLock;

type Job = Box<dyn FnOnce() + Send>;

/// Lowering and printing recurse on the nesting of the text, as on the
/// runtime's threads.
const STACK_SIZE: usize = 64 << 20;

fn jobs() -> &'static Sender<Job> {
    static JOBS: OnceLock<Sender<Job>> = OnceLock::new();
    JOBS.get_or_init(|| {
        let (sender, receiver) = channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("relay-analysis".to_string())
            .stack_size(STACK_SIZE)
            .spawn(move || loop {
                let job = match receiver.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Empty) => {
                        // Idle: what the last jobs freed goes back now,
                        // here and on the threads that lowered and
                        // inferred functions in parallel (what they
                        // allocated and this thread freed waits in their
                        // heaps until they collect it).
                        relay_allocator::release_free_memory();
                        rayon::spawn_broadcast(|_| relay_allocator::release_free_memory());
                        match receiver.recv() {
                            Ok(job) => job,
                            Err(_) => return,
                        }
                    }
                    Err(TryRecvError::Disconnected) => return,
                };
                // A job reports its own panics; the thread must go on.
                let _ = catch_unwind(AssertUnwindSafe(job));
            });
        if let Err(error) = spawned {
            eprintln!("relay lsp: cannot start the analysis thread: {error}");
        }
        sender
    })
}

/// Runs `job` on the analysis thread; `Err` if it panicked or the thread
/// is gone.
pub async fn run<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let result = catch_unwind(AssertUnwindSafe(job));
        let _ = sender.send(result.map_err(|p| super::analysis::panic_message(&*p)));
    });
    if jobs().send(job).is_err() {
        return Err("the analysis thread is gone".to_string());
    }
    receiver
        .await
        .map_err(|_| "the analysis thread is gone".to_string())?
}

/// Runs `job` on the analysis thread without waiting for it (dropping
/// what it owns there); run here if the thread is gone.
pub fn detach(job: impl FnOnce() + Send + 'static) {
    if let Err(unsent) = jobs().send(Box::new(job)) {
        (unsent.0)();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_run_in_order_on_one_thread_and_a_panic_is_an_error() {
        let first = run(|| std::thread::current().id()).await.unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        detach(move || sender.send(std::thread::current().id()).unwrap());
        assert_eq!(receiver.recv().unwrap(), first);
        let failed = run(|| -> u8 { panic!("boom") }).await;
        assert_eq!(failed, Err("boom".to_string()));
        assert_eq!(run(|| std::thread::current().id()).await, Ok(first));
    }
}
