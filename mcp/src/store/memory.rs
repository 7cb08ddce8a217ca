//! The in-memory store: the server process itself. Its replicas are the
//! servers of this process that share it (one, usually), which live as
//! long as the process: no lease lapses here. Expiry is checked when an
//! entry is read or room is needed (no sweep).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{JsonObject, TaskPayload};
use rmcp::task_manager::current_timestamp;
use serde_json::Value;

use super::{
    Backend, BoxFuture, Created, Mailboxes, Message, SessionRecord, StateRecord, StoreResult,
    TaskRecord, TaskSeed,
};

/// The store of one process.
#[derive(Default)]
pub(crate) struct Memory {
    tasks: Mutex<HashMap<String, Entry>>,
    mailboxes: Mutex<HashMap<String, Weak<Mailboxes>>>,
}

/// One task.
struct Entry {
    owner: Option<String>,
    runner: String,
    record: TaskRecord,
    /// When it is forgotten.
    until: Instant,
}

impl Entry {
    fn new(seed: &TaskSeed) -> Self {
        Entry {
            owner: seed.owner.clone(),
            runner: seed.runner.clone(),
            record: TaskRecord {
                task: seed.task.clone(),
                requests: BTreeMap::new(),
                ended: None,
            },
            until: Instant::now() + seed.running_keep(),
        }
    }

    fn running(&self) -> bool {
        self.record.ended.is_none()
    }
}

impl Memory {
    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn deliver(&self, replica: &str, message: Message) {
        let mailboxes = self
            .mailboxes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(replica)
            .and_then(Weak::upgrade);
        if let Some(mailboxes) = mailboxes {
            mailboxes.dispatch(message);
        }
    }

    /// Runs `f` on the running task of `seed`, made again from the seed if
    /// it was forgotten; `false` when it has ended.
    fn with_running(&self, seed: &TaskSeed, f: impl FnOnce(&mut TaskRecord)) -> bool {
        let mut tasks = self.tasks();
        let entry = tasks
            .entry(seed.id().to_owned())
            .or_insert_with(|| Entry::new(seed));
        if !entry.running() {
            return false;
        }
        f(&mut entry.record);
        entry.record.task.last_updated_at = current_timestamp();
        true
    }
}

/// Task `id`, if `owner` owns it, once the expired tasks are gone.
fn owned<'t>(
    tasks: &'t mut HashMap<String, Entry>,
    id: &str,
    owner: Option<&str>,
) -> Option<&'t mut Entry> {
    prune(tasks, None);
    tasks
        .get_mut(id)
        .filter(|entry| entry.owner.as_deref() == owner)
}

/// Forgets the tasks past their time; with `max`, also the one that
/// ended first while `max` are held. Whether there is room for one more.
fn prune(tasks: &mut HashMap<String, Entry>, max: Option<usize>) -> bool {
    let now = Instant::now();
    tasks.retain(|_, entry| now < entry.until);
    let Some(max) = max else { return true };
    if tasks.len() >= max {
        let oldest = tasks
            .iter()
            .filter(|(_, entry)| !entry.running())
            .map(|(id, entry)| (entry.until, id.clone()))
            .min();
        if let Some((_, id)) = oldest {
            tasks.remove(&id);
        }
    }
    tasks.len() < max
}

fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, StoreResult<T>> {
    Box::pin(std::future::ready(Ok(value)))
}

impl Backend for Memory {
    fn describe(&self) -> String {
        "memory".to_owned()
    }

    fn shared(&self) -> bool {
        false
    }

    fn attach(&self, replica: &str, mailboxes: &Arc<Mailboxes>) {
        self.mailboxes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(replica.to_owned(), Arc::downgrade(mailboxes));
    }

    fn heartbeat<'a>(&'a self, _: &'a str, _: Duration) -> BoxFuture<'a, StoreResult<()>> {
        ready(())
    }

    fn alive<'a>(&'a self, _: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        ready(true)
    }

    fn create_task<'a>(
        &'a self,
        seed: &'a TaskSeed,
        max: usize,
    ) -> BoxFuture<'a, StoreResult<Created>> {
        let mut tasks = self.tasks();
        if !prune(&mut tasks, Some(max)) {
            return ready(Created::Full);
        }
        tasks.insert(seed.id().to_owned(), Entry::new(seed));
        ready(Created::Yes)
    }

    fn task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        _stopped: &'a JsonObject,
    ) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        let mut tasks = self.tasks();
        ready(owned(&mut tasks, id, owner).map(|entry| entry.record.clone()))
    }

    fn update_task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        answers: &'a [(String, Value)],
    ) -> BoxFuture<'a, StoreResult<bool>> {
        let mut delivered = Vec::new();
        let runner;
        {
            let mut tasks = self.tasks();
            let Some(entry) = owned(&mut tasks, id, owner) else {
                return ready(false);
            };
            if entry.running() {
                for (key, value) in answers {
                    if entry.record.requests.remove(key).is_some() {
                        delivered.push(Message::Answer {
                            to: format!("task:{id}"),
                            key: key.clone(),
                            value: value.clone(),
                        });
                    }
                }
                entry.record.task.last_updated_at = current_timestamp();
            }
            runner = entry.runner.clone();
        }
        for message in delivered {
            self.deliver(&runner, message);
        }
        ready(true)
    }

    fn cancel_task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        let runner = {
            let mut tasks = self.tasks();
            let Some(entry) = owned(&mut tasks, id, owner) else {
                return ready(false);
            };
            if !entry.running() {
                return ready(true);
            }
            entry.record.requests.clear();
            entry.record.task.last_updated_at = current_timestamp();
            entry.runner.clone()
        };
        self.deliver(
            &runner,
            Message::Cancel {
                to: format!("task:{id}"),
            },
        );
        ready(true)
    }

    fn task_status<'a>(
        &'a self,
        seed: &'a TaskSeed,
        message: &'a str,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        ready(self.with_running(seed, |record| {
            record.task.status_message = Some(message.to_owned());
        }))
    }

    fn task_ask<'a>(
        &'a self,
        seed: &'a TaskSeed,
        key: &'a str,
        request: &'a Value,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        ready(self.with_running(seed, |record| {
            record.requests.insert(key.to_owned(), request.clone());
        }))
    }

    fn task_unask<'a>(
        &'a self,
        seed: &'a TaskSeed,
        keys: &'a [String],
    ) -> BoxFuture<'a, StoreResult<bool>> {
        ready(self.with_running(seed, |record| {
            for key in keys {
                record.requests.remove(key);
            }
        }))
    }

    fn finish_task<'a>(
        &'a self,
        seed: &'a TaskSeed,
        payload: &'a TaskPayload,
        ttl_ms: u64,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        let mut tasks = self.tasks();
        let entry = tasks
            .entry(seed.id().to_owned())
            .or_insert_with(|| Entry::new(seed));
        if !entry.running() {
            return ready(false);
        }
        let task = &mut entry.record.task;
        task.ttl_ms = Some(ttl_ms);
        task.status = payload.status();
        task.last_updated_at = current_timestamp();
        entry.record.requests.clear();
        entry.record.ended = Some(payload.clone());
        entry.until = Instant::now() + seed.ttl;
        ready(true)
    }

    fn send<'a>(
        &'a self,
        replica: &'a str,
        message: &'a Message,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.deliver(replica, message.clone());
        ready(())
    }

    // A store no other process shares holds no call waiting for input
    // and no session: the server keeps them itself.
    fn park_state<'a>(
        &'a self,
        _: &'a str,
        _: &'a StateRecord,
        _: Duration,
    ) -> BoxFuture<'a, StoreResult<()>> {
        ready(())
    }

    fn take_state<'a>(&'a self, _: &'a str) -> BoxFuture<'a, StoreResult<Option<StateRecord>>> {
        ready(None)
    }

    fn session<'a>(
        &'a self,
        _: &'a str,
        _: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<SessionRecord>>> {
        ready(None)
    }

    fn save_session<'a>(
        &'a self,
        _: &'a str,
        _: Option<&'a Value>,
        _: Option<Option<&'a str>>,
        _: Duration,
    ) -> BoxFuture<'a, StoreResult<()>> {
        ready(())
    }

    fn delete_session<'a>(&'a self, _: &'a str) -> BoxFuture<'a, StoreResult<()>> {
        ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Task, TaskStatus};

    fn seed(id: &str, owner: Option<&str>) -> TaskSeed {
        TaskSeed {
            owner: owner.map(str::to_owned),
            runner: "r".into(),
            task: Task::new(id, TaskStatus::Working, "t", "t"),
            lease: Duration::from_secs(10),
            ttl: Duration::from_secs(60),
        }
    }

    #[tokio::test]
    async fn the_store_is_bounded_and_drops_the_task_that_ended_first() {
        let store = Memory::default();
        let max = 3;
        for i in 0..max {
            assert_eq!(
                store.create_task(&seed(&i.to_string(), None), max).await,
                Ok(Created::Yes)
            );
        }
        assert_eq!(
            store.create_task(&seed("x", None), max).await,
            Ok(Created::Full),
            "all running"
        );
        let payload = TaskPayload::Cancelled;
        assert!(
            store
                .finish_task(&seed("1", None), &payload, 5)
                .await
                .unwrap()
        );
        assert!(
            store
                .finish_task(&seed("2", None), &payload, 5)
                .await
                .unwrap()
        );
        assert!(
            !store
                .finish_task(&seed("2", None), &payload, 5)
                .await
                .unwrap()
        );
        assert_eq!(
            store.create_task(&seed("x", None), max).await,
            Ok(Created::Yes)
        );
        let stopped = JsonObject::new();
        assert!(
            store.task("1", None, &stopped).await.unwrap().is_none(),
            "1 ended first"
        );
        let two = store.task("2", None, &stopped).await.unwrap().unwrap();
        assert_eq!(two.task.status, TaskStatus::Cancelled);
        assert_eq!(two.task.ttl_ms, Some(5));
    }

    #[tokio::test]
    async fn a_task_is_only_its_owners() {
        let store = Memory::default();
        store
            .create_task(&seed("t", Some("alice")), 8)
            .await
            .unwrap();
        let stopped = JsonObject::new();
        assert!(
            store
                .task("t", Some("alice"), &stopped)
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            store
                .task("t", Some("bob"), &stopped)
                .await
                .unwrap()
                .is_none()
        );
        assert!(store.task("t", None, &stopped).await.unwrap().is_none());
        assert!(!store.cancel_task("t", Some("bob")).await.unwrap());
        assert!(!store.update_task("t", None, &[]).await.unwrap());
    }
}
