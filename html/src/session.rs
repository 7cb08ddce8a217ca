//! A session as the page draws it: its calls, the counts the header
//! shows, and where each call goes on the page (nested calls under the
//! call they were made from).

use std::collections::{BTreeMap, HashMap};

use toolprism_core::replay::{ReplayProblem, Replayed, ReplayedEntry};

/// A session as the page draws it: its calls, each with the call it is
/// nested in, and the problems replay found in the log.
///
/// Build it from a whole replayed log with [`Session::new`], or from calls
/// you tie together yourself with [`Session::from_calls`].
#[derive(Debug, Clone)]
pub struct Session<'a> {
    pub(crate) title: String,
    pub(crate) source: Option<String>,
    pub(crate) calls: Vec<SessionCall<'a>>,
    pub(crate) problems: &'a [ReplayProblem],
}

/// One call of a [`Session`]: a replayed entry and, for a nested call, the
/// id of the call it was made from.
#[derive(Debug, Clone, Copy)]
pub struct SessionCall<'a> {
    /// The call with its cards, as replay drew them.
    pub entry: &'a ReplayedEntry,
    /// The `callId` of the call this one was made from, for a nested call.
    pub parent_call_id: Option<&'a str>,
}

/// What a session holds, as counted in the page's header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionCounts {
    /// Every call.
    pub calls: usize,
    /// Calls made from another call.
    pub nested: usize,
    /// Calls whose result is a success.
    pub succeeded: usize,
    /// Failed calls by error code (`"(no code)"` for a failure without one).
    pub errors: BTreeMap<String, usize>,
    /// Calls with no result in the log (the session ended while they ran).
    pub without_result: usize,
    /// Problems replay found in the log (torn or corrupt lines, …).
    pub problems: usize,
}

impl SessionCounts {
    /// Failed calls, all codes together.
    pub fn failed(&self) -> usize {
        self.errors.values().sum()
    }
}

/// The call a replayed entry was made from (a nested call's parent).
fn parent_of(entry: &ReplayedEntry) -> Option<&str> {
    entry.parent_call_id.as_deref()
}

impl<'a> Session<'a> {
    /// A session of every entry and problem of a replayed log, titled
    /// `title` (the page's heading, e.g. the log's file name).
    pub fn new(title: impl Into<String>, replayed: &'a Replayed) -> Self {
        let calls = replayed
            .entries
            .iter()
            .map(|entry| SessionCall {
                entry,
                parent_call_id: parent_of(entry),
            })
            .collect();
        Session::from_calls(title, calls, &replayed.problems)
    }

    /// A session of `calls`, in order, and `problems`.
    pub fn from_calls(
        title: impl Into<String>,
        calls: Vec<SessionCall<'a>>,
        problems: &'a [ReplayProblem],
    ) -> Self {
        Session {
            title: title.into(),
            source: None,
            calls,
            problems,
        }
    }

    /// Says where the session came from (a log's path), under the title.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What the session holds.
    pub fn counts(&self) -> SessionCounts {
        let mut counts = SessionCounts {
            calls: self.calls.len(),
            problems: self.problems.len(),
            ..SessionCounts::default()
        };
        for call in &self.calls {
            if call.parent_call_id.is_some() {
                counts.nested += 1;
            }
            let entry = call.entry;
            if !entry.has_result() {
                counts.without_result += 1;
            } else if entry.is_error {
                let code = entry
                    .error_code
                    .as_ref()
                    .map_or("(no code)", |c| c.as_str());
                *counts.errors.entry(code.to_owned()).or_default() += 1;
            } else {
                counts.succeeded += 1;
            }
        }
        counts
    }
}

/// Where each call goes on the page: page order and depth.
pub(crate) struct Placed {
    /// Index into the session's calls.
    pub(crate) index: usize,
    pub(crate) depth: usize,
    /// The page number of the parent, when it is on the page.
    pub(crate) parent: Option<usize>,
    /// The parent id when no call of the log has it.
    pub(crate) missing_parent: bool,
    /// Whether the call sits in a loop of parents (a corrupt log).
    pub(crate) in_loop: bool,
}

/// Orders calls as a tree: top-level calls in order, each followed by the
/// calls nested in it (in order, at any depth). Iterative, so a chain of
/// 100,000 nested calls does not exhaust the stack; a loop of parents (only
/// a hand-made log can have one) is broken and said.
pub(crate) fn place(calls: &[SessionCall<'_>]) -> Vec<Placed> {
    let mut first_with_id: HashMap<&str, usize> = HashMap::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        first_with_id
            .entry(call.entry.call_id.as_str())
            .or_insert(i);
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); calls.len()];
    let mut roots = Vec::new();
    let mut missing = vec![false; calls.len()];
    for (i, call) in calls.iter().enumerate() {
        match call.parent_call_id.map(|p| first_with_id.get(p)) {
            Some(Some(&p)) if p != i => children[p].push(i),
            Some(Some(_)) | None => roots.push(i),
            Some(None) => {
                missing[i] = true;
                roots.push(i);
            }
        }
    }
    let mut tree = Tree {
        children,
        missing,
        page_no: vec![usize::MAX; calls.len()],
        placed: Vec::with_capacity(calls.len()),
    };
    for &root in &roots {
        tree.visit(root, false);
    }
    // Calls not reached from a top-level call sit in a loop of parents.
    for i in 0..calls.len() {
        if tree.page_no[i] == usize::MAX {
            tree.visit(i, true);
        }
    }
    tree.placed
}

struct Tree {
    children: Vec<Vec<usize>>,
    missing: Vec<bool>,
    /// Each call's place on the page, `usize::MAX` until placed.
    page_no: Vec<usize>,
    placed: Vec<Placed>,
}

impl Tree {
    /// Places `start` and every call under it, depth first, in order.
    fn visit(&mut self, start: usize, in_loop: bool) {
        let mut stack = vec![(start, 0usize, None::<usize>)];
        while let Some((i, depth, parent)) = stack.pop() {
            if self.page_no[i] != usize::MAX {
                continue;
            }
            let me = self.placed.len();
            self.page_no[i] = me;
            self.placed.push(Placed {
                index: i,
                depth,
                parent,
                missing_parent: self.missing[i],
                in_loop,
            });
            for &child in self.children[i].iter().rev() {
                stack.push((child, depth + 1, Some(me)));
            }
        }
    }
}
