//! This process as one replica of a server: its id in the [`Store`], the
//! lease it renews there, and its inbox (W16 in `docs/contract.md`).

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::store::{Backend, Mailboxes, Message, Store};

/// The default of [`McpServer::with_lease`](crate::McpServer::with_lease):
/// 10 seconds.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// One server process as the store knows it.
pub(crate) struct Replica {
    /// Its id in the store: random, new at each start.
    pub(crate) id: String,
    pub(crate) store: Store,
    /// How long its tasks outlive its last renewal.
    pub(crate) lease: Duration,
    pub(crate) mailboxes: Arc<Mailboxes>,
    resumes: Mutex<Option<mpsc::UnboundedReceiver<Message>>>,
    started: OnceLock<()>,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica")
            .field("id", &self.id)
            .field("store", &self.store)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Replica {
    pub(crate) fn new(store: Store, lease: Duration) -> Self {
        let (mailboxes, resumes) = Mailboxes::new();
        let id = uuid::Uuid::new_v4().simple().to_string();
        Replica {
            // 48 random bits: a few replicas never meet twice.
            id: id[..12].to_owned(),
            store,
            lease: lease.max(Duration::from_millis(100)),
            mailboxes,
            resumes: Mutex::new(Some(resumes)),
            started: OnceLock::new(),
        }
    }

    pub(crate) fn backend(&self) -> &dyn Backend {
        self.store.backend()
    }

    /// Whether other processes share the store.
    pub(crate) fn shared(&self) -> bool {
        self.store.is_shared()
    }

    /// Attaches the inbox and starts renewing the lease, once; each
    /// [`Message::Resume`] goes to `resume`. Needs a tokio runtime: called
    /// from a request.
    pub(crate) fn start(self: &Arc<Self>, resume: impl Fn(Message) + Send + 'static) {
        self.started.get_or_init(|| {
            self.backend().attach(&self.id, &self.mailboxes);
            if let Some(mut resumes) = self
                .resumes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                tokio::spawn(async move {
                    while let Some(message) = resumes.recv().await {
                        resume(message);
                    }
                });
            }
            if self.shared() {
                tokio::spawn(renew(Arc::downgrade(self)));
            }
        });
    }
}

/// Renews the lease of `replica` three times per lease while it lives:
/// at once, and again as soon as the store is back after it was away.
async fn renew(replica: Weak<Replica>) {
    let mut failing = false;
    loop {
        let Some(replica) = replica.upgrade() else {
            return;
        };
        let lease = replica.lease;
        let renewed = replica.backend().heartbeat(&replica.id, lease).await;
        let pause = match renewed {
            Ok(()) => {
                failing = false;
                lease / 3
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(replica = %replica.id, "the lease could not be renewed: {e}");
                    failing = true;
                }
                // Again soon: the store may be back in a moment.
                (lease / 10).clamp(Duration::from_millis(20), Duration::from_millis(250))
            }
        };
        drop(replica);
        tokio::time::sleep(pause).await;
    }
}
