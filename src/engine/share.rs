//! Handing a batch's tasks to the worker threads: all of them start at
//! once, and each takes the next task not yet taken.
//!
//! With `install` and a parallel iterator, one woken worker splits the
//! batch and wakes the next, so on a VM where a wake-up is slow the second
//! worker starts a millisecond late in every batch. `broadcast` wakes every
//! worker at once (a run about 10% faster), and a shared queue keeps the
//! order the caller chose (longest first, in phase 2).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `work(thread, item)` for each of `items` on every thread of `pool`
/// at once, each thread taking the next item not yet taken until none is
/// left (`thread` is the pool's index of the thread, below
/// [`threads`]`(pool)`). `None` is rayon's current pool: the global one,
/// unless the caller runs on a pool's thread. Returns the results in the
/// order of `items`. A panic in `work` reaches the caller, as with rayon's
/// own iterators.
pub fn share_out<T: Send, R: Send>(
    pool: Option<&rayon::ThreadPool>,
    items: Vec<T>,
    work: impl Fn(usize, T) -> R + Sync,
) -> Vec<R> {
    let slots: Vec<Mutex<(Option<T>, Option<R>)>> = items
        .into_iter()
        .map(|item| Mutex::new((Some(item), None)))
        .collect();
    let next = AtomicUsize::new(0);
    let each = |ctx: rayon::BroadcastContext<'_>| {
        while let Some(slot) = slots.get(next.fetch_add(1, Ordering::Relaxed)) {
            // Each slot is taken by one thread only: its lock is never
            // contended, and is not held while the work runs.
            let item = slot.lock().ok().and_then(|mut s| s.0.take());
            if let Some(item) = item {
                let result = work(ctx.index(), item);
                if let Ok(mut s) = slot.lock() {
                    s.1 = Some(result);
                }
            }
        }
    };
    match pool {
        Some(pool) => pool.broadcast(each),
        None => rayon::broadcast(each),
    };
    slots
        .into_iter()
        .filter_map(|slot| slot.into_inner().ok()?.1)
        .collect()
}

/// The number of threads [`share_out`] runs on, for `pool`.
pub fn threads(pool: Option<&rayon::ThreadPool>) -> usize {
    pool.map_or_else(
        rayon::current_num_threads,
        rayon::ThreadPool::current_num_threads,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_out_runs_each_item_once_and_keeps_their_order() {
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let mut items: Vec<u64> = (0..50).collect();
            let ran = AtomicUsize::new(0);
            let got = share_out(Some(&pool), items.iter_mut().collect(), |thread, item| {
                assert!(thread < threads);
                if *item == 0 {
                    // A long first task: the others go to other threads.
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                *item += 100;
                ran.fetch_add(1, Ordering::Relaxed);
                *item * 2
            });
            assert_eq!(ran.load(Ordering::Relaxed), 50);
            assert_eq!(got, (0..50).map(|i| (i + 100) * 2).collect::<Vec<u64>>());
            assert!(items.iter().enumerate().all(|(i, &v)| v == i as u64 + 100));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        assert!(share_out(Some(&pool), Vec::<u8>::new(), |_, x| x).is_empty());
    }
}
