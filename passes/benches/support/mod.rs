//! What the benchmarks share: the median of several timed runs, and
//! running work on a thread with a stack deep enough for real models.

use std::time::Instant;

/// Runs per measurement; the median is reported.
pub const RUNS: usize = 7;

/// The median of `RUNS` timings of `work`, in milliseconds, and its last
/// result.
pub fn median_ms<T>(mut work: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let result = work();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        last = Some(result);
    }
    times.sort_by(f64::total_cmp);
    (times[RUNS / 2], last.expect("RUNS > 0"))
}

/// Runs `work` on a thread with a 512 MB stack (lowering and type-checking
/// real models recurse as deep as they nest).
pub fn on_big_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(work)
        .expect("a thread")
        .join()
        .expect("the work did not panic")
}
