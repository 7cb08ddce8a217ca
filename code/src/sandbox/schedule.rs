//! The admission rule for nested calls: which queued call may start now.
//!
//! Calls start in submission order. Consecutive calls to `concurrent` tools
//! overlap, up to `max_concurrent` at once; a call to a tool that is not
//! `concurrent` waits until every running call has finished and then runs
//! alone, and every call submitted after it waits for it.

use std::collections::VecDeque;

/// A queue of calls not started yet, and what is running.
#[derive(Debug)]
pub(crate) struct Schedule<T> {
    queue: VecDeque<(bool, T)>,
    running: usize,
    exclusive_running: bool,
    max_concurrent: usize,
}

impl<T> Schedule<T> {
    /// An empty schedule; `max_concurrent` below 1 counts as 1.
    pub(crate) fn new(max_concurrent: usize) -> Self {
        Schedule {
            queue: VecDeque::new(),
            running: 0,
            exclusive_running: false,
            max_concurrent: max_concurrent.max(1),
        }
    }

    /// Queues a call; `concurrent` is what the host said of its tool.
    pub(crate) fn push(&mut self, concurrent: bool, call: T) {
        self.queue.push_back((concurrent, call));
    }

    /// The next call that may start now, if any, marked as running. Call it
    /// until it returns `None` after every push and every finish.
    pub(crate) fn next(&mut self) -> Option<(bool, T)> {
        let &(concurrent, _) = self.queue.front()?;
        if !self.admits(concurrent) {
            return None;
        }
        self.mark_running(concurrent);
        self.queue.pop_front()
    }

    /// Whether a call submitted now may start at once, without being
    /// queued: nothing is queued before it and the rule admits it. If so it
    /// is marked as running (the same as [`push`](Self::push) followed by
    /// [`next`](Self::next) returning it, without touching the queue).
    pub(crate) fn admit_now(&mut self, concurrent: bool) -> bool {
        if !self.queue.is_empty() || !self.admits(concurrent) {
            return false;
        }
        self.mark_running(concurrent);
        true
    }

    fn admits(&self, concurrent: bool) -> bool {
        if concurrent {
            !self.exclusive_running && self.running < self.max_concurrent
        } else {
            self.running == 0
        }
    }

    fn mark_running(&mut self, concurrent: bool) {
        self.running += 1;
        self.exclusive_running = !concurrent;
    }

    /// A running call finished.
    pub(crate) fn finished(&mut self) {
        self.running = self.running.saturating_sub(1);
        if self.running == 0 {
            self.exclusive_running = false;
        }
    }

    /// Drops every call not started yet; returns how many were dropped.
    pub(crate) fn clear(&mut self) -> usize {
        let n = self.queue.len();
        self.queue.clear();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Schedule<u32>) -> Vec<u32> {
        std::iter::from_fn(|| s.next().map(|(_, c)| c)).collect()
    }

    #[test]
    fn concurrent_calls_overlap_up_to_the_cap() {
        let mut s = Schedule::new(3);
        for i in 0..5 {
            s.push(true, i);
        }
        assert_eq!(drain(&mut s), [0, 1, 2]);
        s.finished();
        assert_eq!(drain(&mut s), [3]);
        s.finished();
        s.finished();
        assert_eq!(drain(&mut s), [4]);
    }

    #[test]
    fn an_exclusive_call_waits_for_all_and_blocks_later_calls() {
        let mut s = Schedule::new(10);
        s.push(true, 0);
        s.push(true, 1);
        s.push(false, 2);
        s.push(true, 3);
        assert_eq!(drain(&mut s), [0, 1]);
        s.finished();
        assert!(drain(&mut s).is_empty());
        s.finished();
        assert_eq!(drain(&mut s), [2]);
        assert!(drain(&mut s).is_empty());
        s.finished();
        assert_eq!(drain(&mut s), [3]);
    }

    #[test]
    fn a_call_starts_at_once_only_with_nothing_queued_before_it() {
        let mut s = Schedule::new(2);
        assert!(s.admit_now(true));
        assert!(
            !s.admit_now(false),
            "an exclusive call waits for the running one"
        );
        s.push(false, 0);
        s.finished();
        assert!(!s.admit_now(true), "the queued exclusive call goes first");
        assert_eq!(drain(&mut s), [0]);
        assert!(!s.admit_now(true), "the exclusive call runs alone");
        s.finished();
        assert!(s.admit_now(true));
        assert!(s.admit_now(true));
        assert!(!s.admit_now(true), "two at once at most");
    }

    #[test]
    fn zero_concurrency_counts_as_one() {
        let mut s = Schedule::new(0);
        s.push(true, 0);
        s.push(true, 1);
        assert_eq!(drain(&mut s), [0]);
        assert_eq!(s.clear(), 1);
    }
}
