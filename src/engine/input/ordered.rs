//! An ordered pool of decoder threads: jobs go to the workers in order and
//! their results are taken back in the same order, however the workers
//! finish. The gzip member decoder and the Parquet row-group decoder share
//! it; the caller bounds how many jobs are in flight (its read-ahead).

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

/// A job, and where its result goes.
type Task<J, R> = (J, SyncSender<R>);

/// Worker threads running one function, with the results of the jobs in
/// flight kept in the order the jobs were handed over.
pub(crate) struct OrderedPool<J, R> {
    /// `None` once no worker is left (or none could start).
    jobs: Option<Sender<Task<J, R>>>,
    /// The results to come, oldest first.
    pending: VecDeque<Receiver<R>>,
}

impl<J, R> core::fmt::Debug for OrderedPool<J, R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OrderedPool")
            .field("workers", &self.jobs.is_some())
            .field("in_flight", &self.pending.len())
            .finish()
    }
}

impl<J: Send + 'static, R: Send + 'static> OrderedPool<J, R> {
    /// Starts up to `threads` workers named `{name}-{i}` that run `work`
    /// on each job. Workers that cannot start are left out; with none,
    /// [`has_workers`](Self::has_workers) is false and the caller does the
    /// work on its own thread. The workers end when the pool is dropped.
    pub(crate) fn start(
        name: &str,
        threads: usize,
        work: impl Fn(J) -> R + Send + Sync + 'static,
    ) -> Self {
        let (tx, rx) = mpsc::channel::<Task<J, R>>();
        let rx = Arc::new(Mutex::new(rx));
        let work = Arc::new(work);
        let mut started = 0;
        for t in 0..threads.max(1) {
            let (rx, work) = (Arc::clone(&rx), Arc::clone(&work));
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{t}"))
                .spawn(move || loop {
                    let task = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((job, reply)) = task else { return };
                    // The caller may have stopped waiting for it.
                    let _ = reply.send(work(job));
                });
            started += usize::from(spawned.is_ok());
        }
        Self {
            jobs: (started > 0).then_some(tx),
            pending: VecDeque::new(),
        }
    }

    /// True while the pool has workers to take jobs.
    pub(crate) fn has_workers(&self) -> bool {
        self.jobs.is_some()
    }

    /// Jobs handed over whose results have not been taken.
    pub(crate) fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Hands `job` to the workers; gives it back when no worker is left.
    ///
    /// # Errors
    /// The job itself, for the caller to do.
    pub(crate) fn submit(&mut self, job: J) -> Result<(), J> {
        let Some(jobs) = &self.jobs else {
            return Err(job);
        };
        let (reply, rx) = mpsc::sync_channel(1);
        match jobs.send((job, reply)) {
            Ok(()) => {
                self.pending.push_back(rx);
                Ok(())
            }
            Err(mpsc::SendError((job, _))) => {
                self.jobs = None;
                Err(job)
            }
        }
    }

    /// The result of the oldest job in flight, waiting for it; `None` when
    /// nothing is in flight or its worker was lost (a panic in `work`).
    pub(crate) fn next(&mut self) -> Option<R> {
        self.pending.pop_front()?.recv().ok()
    }

    /// Forgets the jobs in flight: their results are dropped as they come.
    pub(crate) fn forget(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_pool_gives_results_in_job_order() {
        // Later jobs finish first; their results still come in order.
        let mut pool = OrderedPool::start("test", 3, |n: u64| {
            std::thread::sleep(std::time::Duration::from_millis(10 * (5 - n % 5)));
            n * 2
        });
        assert!(pool.has_workers());
        for n in 0..10 {
            pool.submit(n).unwrap();
        }
        assert_eq!(pool.in_flight(), 10);
        let got: Vec<u64> = std::iter::from_fn(|| pool.next()).collect();
        assert_eq!(got, (0..10).map(|n| n * 2).collect::<Vec<_>>());
        assert_eq!(pool.next(), None);
    }

    #[test]
    fn ordered_pool_forgets_jobs_in_flight() {
        let mut pool = OrderedPool::start("test", 2, |n: u32| n + 1);
        for n in 0..4 {
            pool.submit(n).unwrap();
        }
        pool.forget();
        assert_eq!(pool.in_flight(), 0);
        pool.submit(7).unwrap();
        assert_eq!(pool.next(), Some(8));
    }
}
