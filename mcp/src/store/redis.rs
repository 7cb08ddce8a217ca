//! The Redis store (cargo feature `redis`): the `redis` crate's
//! connection manager (one multiplexed connection, re-established by
//! itself after Redis went away) for every operation, and a second
//! connection per replica blocked on its inbox (`BLPOP`). Every change
//! that must be atomic (making room for a task, failing a task whose
//! replica's lease lapsed, taking an answer out and sending it) is one
//! Lua script. Every key starts with [`PREFIX`] and expires.
//!
//! Keys:
//!
//! | key | type | what | expires |
//! |---|---|---|---|
//! | `toolprism:task:<id>` | hash | a task: `owner`, `runner`, `lease`, `ttl`, `created`, `task` (JSON), `status`, `message`, `updated`, `ttlms`, `payload` (JSON), `orphan`, `req:<key>` (JSON) | running: twice its ttl and four leases; ended: its ttl after it ended |
//! | `toolprism:tasks`, `toolprism:ended` | sorted sets | every task, and the ended ones, by when they expire (the bound on tasks) | members past their score are dropped when a task is made |
//! | `toolprism:replica:<id>` | string | a replica's lease | the lease |
//! | `toolprism:inbox:<id>` | list | messages to a replica (JSON) | two minutes after the last one |
//! | `toolprism:state:<requestState>` | string | a call waiting for input (JSON) | twice the client timeout |
//! | `toolprism:session:<id>` | hash | a legacy session: `state` (JSON), `owner` | the session idle timeout |

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisError, Script};
use rmcp::model::{JsonObject, Task, TaskPayload, TaskStatus};
use rmcp::task_manager::current_timestamp;
use serde_json::Value;

use super::{
    Backend, BoxFuture, Created, Mailboxes, Message, SessionRecord, StateRecord, StoreError,
    StoreResult, TaskRecord, TaskSeed, millis,
};

/// The start of every key.
pub(crate) const PREFIX: &str = "toolprism:";

/// How long an inbox wait blocks before it looks again.
const BLOCK: Duration = Duration::from_secs(1);

/// The Redis store.
pub(crate) struct Redis {
    client: Client,
    connection: ConnectionManager,
    name: String,
}

/// What every script shares: Redis's clock, and the task made again from
/// the runner's seed (ARGV 1-8) when the store lost it.
const PRELUDE: &str = r"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function seed(now)
  if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'runner', ARGV[2], 'lease', ARGV[3],
      'ttl', ARGV[4], 'task', ARGV[5], 'status', 'working', 'updated', ARGV[6], 'created', now)
    redis.call('PEXPIRE', KEYS[1], ARGV[7])
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[7]), ARGV[8])
    return true
  end
  return false
end
local function drop_requests(key)
  for _, field in ipairs(redis.call('HKEYS', key)) do
    if string.sub(field, 1, 4) == 'req:' then redis.call('HDEL', key, field) end
  end
end
local function working(key)
  return redis.call('HGET', key, 'status') == 'working'
end
";

/// KEYS: task, tasks, ended. ARGV: seed, max.
const CREATE: &str = r"
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[9]) then
  local oldest = redis.call('ZRANGE', KEYS[3], 0, 0)
  if #oldest == 0 then return 0 end
  redis.call('DEL', ARGV[10] .. oldest[1])
  redis.call('ZREM', KEYS[2], oldest[1])
  redis.call('ZREM', KEYS[3], oldest[1])
end
redis.call('DEL', KEYS[1])
seed(now)
return 1
";

/// KEYS: task, tasks, ended. ARGV: owner, stopped (error JSON), updated,
/// replica key prefix, id.
const GET: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return false end
if working(KEYS[1]) then
  local runner = redis.call('HGET', KEYS[1], 'runner')
  if redis.call('EXISTS', ARGV[4] .. runner) == 1 then
    redis.call('HDEL', KEYS[1], 'orphan')
  else
    local now = now_ms()
    local orphan = redis.call('HGET', KEYS[1], 'orphan')
    local lease = tonumber(redis.call('HGET', KEYS[1], 'lease'))
    if not orphan then
      redis.call('HSET', KEYS[1], 'orphan', now)
    elseif now - tonumber(orphan) >= lease then
      local ttl = tonumber(redis.call('HGET', KEYS[1], 'ttl'))
      local created = tonumber(redis.call('HGET', KEYS[1], 'created')) or now
      drop_requests(KEYS[1])
      redis.call('HSET', KEYS[1], 'status', 'failed', 'payload', ARGV[2], 'updated', ARGV[3],
        'ttlms', now - created + ttl)
      redis.call('HDEL', KEYS[1], 'orphan')
      redis.call('PEXPIRE', KEYS[1], ttl)
      redis.call('ZADD', KEYS[2], now + ttl, ARGV[5])
      redis.call('ZADD', KEYS[3], now + ttl, ARGV[5])
    end
  end
end
return redis.call('HGETALL', KEYS[1])
";

/// KEYS: task. ARGV: owner, updated, inbox prefix, id, inbox ttl, then
/// key and answer (JSON) pairs.
const UPDATE: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
if not working(KEYS[1]) then return 1 end
local inbox = ARGV[3] .. redis.call('HGET', KEYS[1], 'runner')
local to = cjson.encode('task:' .. ARGV[4])
local sent = 0
for i = 6, #ARGV, 2 do
  local field = 'req:' .. ARGV[i]
  if redis.call('HEXISTS', KEYS[1], field) == 1 then
    redis.call('HDEL', KEYS[1], field)
    redis.call('RPUSH', inbox, '{"kind":"answer","to":' .. to .. ',"key":' ..
      cjson.encode(ARGV[i]) .. ',"value":' .. ARGV[i + 1] .. '}')
    sent = sent + 1
  end
end
if sent > 0 then redis.call('PEXPIRE', inbox, ARGV[5]) end
redis.call('HSET', KEYS[1], 'updated', ARGV[2])
return 1
"#;

/// KEYS: task. ARGV: owner, updated, inbox prefix, id, inbox ttl.
const CANCEL: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
if not working(KEYS[1]) then return 1 end
drop_requests(KEYS[1])
local inbox = ARGV[3] .. redis.call('HGET', KEYS[1], 'runner')
redis.call('RPUSH', inbox, '{"kind":"cancel","to":' .. cjson.encode('task:' .. ARGV[4]) .. '}')
redis.call('PEXPIRE', inbox, ARGV[5])
redis.call('HSET', KEYS[1], 'updated', ARGV[2])
return 1
"#;

/// KEYS: task, tasks. ARGV: seed, message.
const STATUS: &str = r"
seed(now_ms())
if not working(KEYS[1]) then return 0 end
redis.call('HSET', KEYS[1], 'message', ARGV[9], 'updated', ARGV[6])
return 1
";

/// KEYS: task, tasks. ARGV: seed, key, request (JSON).
const ASK: &str = r"
seed(now_ms())
if not working(KEYS[1]) then return 0 end
redis.call('HSET', KEYS[1], 'req:' .. ARGV[9], ARGV[10], 'updated', ARGV[6])
return 1
";

/// KEYS: task, tasks. ARGV: seed, keys.
const UNASK: &str = r"
seed(now_ms())
if not working(KEYS[1]) then return 0 end
for i = 9, #ARGV do redis.call('HDEL', KEYS[1], 'req:' .. ARGV[i]) end
redis.call('HSET', KEYS[1], 'updated', ARGV[6])
return 1
";

/// KEYS: task, tasks, ended. ARGV: seed, status, payload (JSON), ttlMs.
const FINISH: &str = r"
local now = now_ms()
seed(now)
if not working(KEYS[1]) then return 0 end
drop_requests(KEYS[1])
redis.call('HSET', KEYS[1], 'status', ARGV[9], 'payload', ARGV[10], 'ttlms', ARGV[11],
  'updated', ARGV[6])
local ttl = tonumber(ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[8])
redis.call('ZADD', KEYS[3], now + ttl, ARGV[8])
return 1
";

/// The scripts, each with the prelude, made once.
struct Scripts {
    create: Script,
    get: Script,
    update: Script,
    cancel: Script,
    status: Script,
    ask: Script,
    unask: Script,
    finish: Script,
}

fn scripts() -> &'static Scripts {
    static SCRIPTS: std::sync::OnceLock<Scripts> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| {
        let make = |body: &str| Script::new(&format!("{PRELUDE}\n{body}"));
        Scripts {
            create: make(CREATE),
            get: make(GET),
            update: make(UPDATE),
            cancel: make(CANCEL),
            status: make(STATUS),
            ask: make(ASK),
            unask: make(UNASK),
            finish: make(FINISH),
        }
    })
}

fn task_key(id: &str) -> String {
    format!("{PREFIX}task:{id}")
}

fn tasks_key() -> String {
    format!("{PREFIX}tasks")
}

fn ended_key() -> String {
    format!("{PREFIX}ended")
}

fn replica_key(id: &str) -> String {
    format!("{PREFIX}replica:{id}")
}

fn inbox_key(id: &str) -> String {
    format!("{PREFIX}inbox:{id}")
}

/// An owner as a hash field holds it: `-` for none, `=subject` else.
fn owner_field(owner: Option<&str>) -> String {
    match owner {
        None => "-".to_owned(),
        Some(subject) => format!("={subject}"),
    }
}

/// How long an inbox is kept after its last message, in milliseconds:
/// a replica that lives takes its messages within a second.
const INBOX_TTL_MS: u64 = 120_000;

/// The connection settings: fail fast while Redis is away (what needs it
/// gets an error at once, and the next operation tries again), with a
/// response timeout above an inbox wait.
fn config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_number_of_retries(2)
        .set_min_delay(Duration::from_millis(20))
        .set_max_delay(Duration::from_millis(200))
        .set_connection_timeout(Some(Duration::from_secs(1)))
        .set_response_timeout(Some(BLOCK + Duration::from_secs(2)))
}

impl Redis {
    /// Connects to `url` and checks it answers what the store needs.
    pub(crate) async fn connect(url: &str) -> StoreResult<Self> {
        let client = Client::open(url).map_err(|e| {
            StoreError::new(format!(
                "{} is not a Redis URL the store can use ({e}); give redis://HOST:PORT (or redis://HOST:PORT/DB)",
                shown(url)
            ))
        })?;
        let info = client.get_connection_info();
        let name = format!("redis://{}/{}", info.addr(), info.redis_settings().db());
        let unreachable = |e: RedisError| {
            StoreError::new(format!(
                "the store at {name} could not be reached: {e}; start Redis there, or give the address of a running one"
            ))
        };
        let connection = ConnectionManager::new_with_config(client.clone(), config())
            .await
            .map_err(unreachable)?;
        let mut probe = connection.clone();
        let _: () = redis::cmd("PING")
            .query_async(&mut probe)
            .await
            .map_err(unreachable)?;
        // GETDEL (Redis 6.2) takes a call waiting for input out once.
        let _: Option<String> = redis::cmd("GETDEL")
            .arg(format!("{PREFIX}probe"))
            .query_async(&mut probe)
            .await
            .map_err(|e| {
                StoreError::new(format!(
                    "the store at {name} does not run GETDEL ({e}): it needs Redis 6.2 or later (or Valkey)"
                ))
            })?;
        Ok(Redis {
            client,
            connection,
            name,
        })
    }

    fn error(&self, e: RedisError) -> StoreError {
        if e.is_io_error()
            || e.is_timeout()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
        {
            StoreError::new(format!(
                "the store at {} is unreachable ({e}); it is tried again with each request",
                self.name
            ))
        } else {
            StoreError::new(format!("the store at {} refused: {e}", self.name))
        }
    }

    fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }

    /// A runner's script on `seed`'s task (ARGV 1-8 the seed), with
    /// `extra` arguments after; `keys` beyond the task and the tasks index.
    async fn on_seed(
        &self,
        script: &Script,
        seed: &TaskSeed,
        with_ended: bool,
        extra: &[&str],
    ) -> StoreResult<bool> {
        let mut invocation = script.key(task_key(seed.id()));
        invocation.key(tasks_key());
        if with_ended {
            invocation.key(ended_key());
        }
        let task = serde_json::to_string(&seed.task).unwrap_or_default();
        invocation
            .arg(owner_field(seed.owner.as_deref()))
            .arg(&seed.runner)
            .arg(millis(seed.lease))
            .arg(millis(seed.ttl))
            .arg(task)
            .arg(current_timestamp())
            .arg(millis(seed.running_keep()))
            .arg(seed.id());
        for arg in extra {
            invocation.arg(*arg);
        }
        let done: i64 = invocation
            .invoke_async(&mut self.connection())
            .await
            .map_err(|e| self.error(e))?;
        Ok(done == 1)
    }
}

/// `url` without its password, for a message.
fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.chars().take(200).collect(),
    }
}

/// A task's hash as read (`HGETALL`), as a record.
fn record(fields: Vec<String>) -> Option<TaskRecord> {
    let mut map = BTreeMap::new();
    let mut requests = BTreeMap::new();
    let mut pairs = fields.into_iter();
    while let (Some(field), Some(value)) = (pairs.next(), pairs.next()) {
        if let Some(key) = field.strip_prefix("req:") {
            if let Ok(request) = serde_json::from_str(&value) {
                requests.insert(key.to_owned(), request);
            }
        } else {
            map.insert(field, value);
        }
    }
    let mut task: Task = serde_json::from_str(map.get("task")?).ok()?;
    if let Some(message) = map.remove("message") {
        task.status_message = Some(message);
    }
    if let Some(updated) = map.remove("updated") {
        task.last_updated_at = updated;
    }
    if let Some(ttl) = map.get("ttlms").and_then(|t| t.parse().ok()) {
        task.ttl_ms = Some(ttl);
    }
    let object = |field: &str| -> JsonObject {
        map.get(field)
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default()
    };
    let ended = match map.get("status").map(String::as_str) {
        Some("completed") => Some(TaskPayload::Completed {
            result: object("payload"),
        }),
        Some("failed") => Some(TaskPayload::Failed {
            error: object("payload"),
        }),
        Some("cancelled") => Some(TaskPayload::Cancelled),
        _ => None,
    };
    task.status = match &ended {
        Some(payload) => payload.status(),
        None => TaskStatus::Working,
    };
    Some(TaskRecord {
        task,
        requests,
        ended,
    })
}

/// The `status` and `payload` fields of an ended task.
fn payload_fields(payload: &TaskPayload) -> (&'static str, String) {
    let text = |object: &JsonObject| serde_json::to_string(object).unwrap_or_default();
    match payload {
        TaskPayload::Completed { result } => ("completed", text(result)),
        TaskPayload::Failed { error } => ("failed", text(error)),
        TaskPayload::Cancelled => ("cancelled", String::new()),
        // A running payload never ends a task.
        _ => ("failed", String::new()),
    }
}

/// Takes `replica`'s messages to `mailboxes` until they are gone, on a
/// connection of its own (a blocked `BLPOP` holds its connection).
async fn serve_inbox(client: Client, name: String, replica: String, mailboxes: Weak<Mailboxes>) {
    let key = inbox_key(&replica);
    let mut connection: Option<ConnectionManager> = None;
    let mut warned = false;
    loop {
        if mailboxes.strong_count() == 0 {
            return;
        }
        if connection.is_none() {
            match ConnectionManager::new_with_config(client.clone(), config()).await {
                Ok(made) => connection = Some(made),
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    continue;
                }
            }
        }
        let Some(conn) = connection.as_mut() else {
            continue;
        };
        let popped: Result<Option<(String, String)>, RedisError> = redis::cmd("BLPOP")
            .arg(&key)
            .arg(BLOCK.as_secs())
            .query_async(conn)
            .await;
        match popped {
            Ok(Some((_, text))) => {
                warned = false;
                let Some(mailboxes) = mailboxes.upgrade() else {
                    return;
                };
                match serde_json::from_str::<Message>(&text) {
                    Ok(message) => mailboxes.dispatch(message),
                    Err(e) => {
                        tracing::warn!(store = %name, "a message in the inbox is not one: {e}")
                    }
                }
            }
            Ok(None) => warned = false,
            Err(e) => {
                if !warned {
                    tracing::warn!(store = %name, "the inbox could not be read: {e}");
                    warned = true;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
}

impl Backend for Redis {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn shared(&self) -> bool {
        true
    }

    fn attach(&self, replica: &str, mailboxes: &Arc<Mailboxes>) {
        tokio::spawn(serve_inbox(
            self.client.clone(),
            self.name.clone(),
            replica.to_owned(),
            Arc::downgrade(mailboxes),
        ));
    }

    fn heartbeat<'a>(
        &'a self,
        replica: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            redis::cmd("SET")
                .arg(replica_key(replica))
                .arg(1)
                .arg("PX")
                .arg(millis(lease).max(1))
                .query_async::<()>(&mut self.connection())
                .await
                .map_err(|e| self.error(e))
        })
    }

    fn alive<'a>(&'a self, replica: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            redis::cmd("EXISTS")
                .arg(replica_key(replica))
                .query_async::<i64>(&mut self.connection())
                .await
                .map(|n| n == 1)
                .map_err(|e| self.error(e))
        })
    }

    fn create_task<'a>(
        &'a self,
        seed: &'a TaskSeed,
        max: usize,
    ) -> BoxFuture<'a, StoreResult<Created>> {
        Box::pin(async move {
            let max = max.to_string();
            let prefix = format!("{PREFIX}task:");
            let made = self
                .on_seed(&scripts().create, seed, true, &[&max, &prefix])
                .await?;
            Ok(if made { Created::Yes } else { Created::Full })
        })
    }

    fn task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        stopped: &'a JsonObject,
    ) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            let fields: Option<Vec<String>> = scripts()
                .get
                .key(task_key(id))
                .key(tasks_key())
                .key(ended_key())
                .arg(owner_field(owner))
                .arg(serde_json::to_string(stopped).unwrap_or_default())
                .arg(current_timestamp())
                .arg(replica_key(""))
                .arg(id)
                .invoke_async(&mut self.connection())
                .await
                .map_err(|e| self.error(e))?;
            Ok(fields.and_then(record))
        })
    }

    fn update_task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        answers: &'a [(String, Value)],
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let mut invocation = scripts().update.key(task_key(id));
            invocation
                .arg(owner_field(owner))
                .arg(current_timestamp())
                .arg(inbox_key(""))
                .arg(id)
                .arg(INBOX_TTL_MS);
            for (key, value) in answers {
                invocation
                    .arg(key)
                    .arg(serde_json::to_string(value).unwrap_or_else(|_| "null".into()));
            }
            let known: i64 = invocation
                .invoke_async(&mut self.connection())
                .await
                .map_err(|e| self.error(e))?;
            Ok(known == 1)
        })
    }

    fn cancel_task<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let known: i64 = scripts()
                .cancel
                .key(task_key(id))
                .arg(owner_field(owner))
                .arg(current_timestamp())
                .arg(inbox_key(""))
                .arg(id)
                .arg(INBOX_TTL_MS)
                .invoke_async(&mut self.connection())
                .await
                .map_err(|e| self.error(e))?;
            Ok(known == 1)
        })
    }

    fn task_status<'a>(
        &'a self,
        seed: &'a TaskSeed,
        message: &'a str,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            self.on_seed(&scripts().status, seed, false, &[message])
                .await
        })
    }

    fn task_ask<'a>(
        &'a self,
        seed: &'a TaskSeed,
        key: &'a str,
        request: &'a Value,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let request = serde_json::to_string(request).unwrap_or_default();
            self.on_seed(&scripts().ask, seed, false, &[key, &request])
                .await
        })
    }

    fn task_unask<'a>(
        &'a self,
        seed: &'a TaskSeed,
        keys: &'a [String],
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            self.on_seed(&scripts().unask, seed, false, &keys).await
        })
    }

    fn finish_task<'a>(
        &'a self,
        seed: &'a TaskSeed,
        payload: &'a TaskPayload,
        ttl_ms: u64,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let (status, payload) = payload_fields(payload);
            let ttl_ms = ttl_ms.to_string();
            self.on_seed(&scripts().finish, seed, true, &[status, &payload, &ttl_ms])
                .await
        })
    }

    fn send<'a>(
        &'a self,
        replica: &'a str,
        message: &'a Message,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let key = inbox_key(replica);
            let text = serde_json::to_string(message).unwrap_or_default();
            redis::pipe()
                .atomic()
                .cmd("RPUSH")
                .arg(&key)
                .arg(text)
                .ignore()
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(INBOX_TTL_MS)
                .ignore()
                .query_async::<()>(&mut self.connection())
                .await
                .map_err(|e| self.error(e))
        })
    }

    fn park_state<'a>(
        &'a self,
        state: &'a str,
        record: &'a StateRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            redis::cmd("SET")
                .arg(format!("{PREFIX}state:{state}"))
                .arg(serde_json::to_string(record).unwrap_or_default())
                .arg("PX")
                .arg(millis(ttl).max(1))
                .query_async::<()>(&mut self.connection())
                .await
                .map_err(|e| self.error(e))
        })
    }

    fn take_state<'a>(&'a self, state: &'a str) -> BoxFuture<'a, StoreResult<Option<StateRecord>>> {
        Box::pin(async move {
            let text: Option<String> = redis::cmd("GETDEL")
                .arg(format!("{PREFIX}state:{state}"))
                .query_async(&mut self.connection())
                .await
                .map_err(|e| self.error(e))?;
            Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
        })
    }

    fn session<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<SessionRecord>>> {
        Box::pin(async move {
            let key = format!("{PREFIX}session:{id}");
            let (fields, _): (Vec<String>, i64) = redis::pipe()
                .cmd("HGETALL")
                .arg(&key)
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(millis(ttl).max(1))
                .query_async(&mut self.connection())
                .await
                .map_err(|e| self.error(e))?;
            if fields.is_empty() {
                return Ok(None);
            }
            let mut record = SessionRecord {
                state: None,
                owner: None,
            };
            let mut pairs = fields.into_iter();
            while let (Some(field), Some(value)) = (pairs.next(), pairs.next()) {
                match field.as_str() {
                    "state" => record.state = serde_json::from_str(&value).ok(),
                    "owner" => record.owner = value.strip_prefix('=').map(str::to_owned),
                    _ => {}
                }
            }
            Ok(Some(record))
        })
    }

    fn save_session<'a>(
        &'a self,
        id: &'a str,
        state: Option<&'a Value>,
        owner: Option<Option<&'a str>>,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let key = format!("{PREFIX}session:{id}");
            let mut pipe = redis::pipe();
            pipe.atomic();
            if let Some(state) = state {
                pipe.cmd("HSET")
                    .arg(&key)
                    .arg("state")
                    .arg(serde_json::to_string(state).unwrap_or_default())
                    .ignore();
            }
            if let Some(owner) = owner {
                pipe.cmd("HSET")
                    .arg(&key)
                    .arg("owner")
                    .arg(owner_field(owner))
                    .ignore();
            }
            pipe.cmd("PEXPIRE")
                .arg(&key)
                .arg(millis(ttl).max(1))
                .ignore();
            pipe.query_async::<()>(&mut self.connection())
                .await
                .map_err(|e| self.error(e))
        })
    }

    fn delete_session<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            redis::cmd("DEL")
                .arg(format!("{PREFIX}session:{id}"))
                .query_async::<()>(&mut self.connection())
                .await
                .map_err(|e| self.error(e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism_testkit::redis::RedisServer;

    /// A `redis-server` on a free loopback port, killed on drop; `None`
    /// (the test skipped, saying so) where Debian's cannot be installed.
    struct Server(RedisServer);

    impl Server {
        fn start() -> Option<Server> {
            match toolprism_testkit::debian_package("redis-server", "/usr/bin/redis-server") {
                Ok(program) => Some(Server(RedisServer::start(&program))),
                Err(e) => {
                    eprintln!("SKIPPED: redis-server could not be installed: {e}");
                    None
                }
            }
        }
    }

    fn seed(id: &str, owner: Option<&str>, runner: &str, lease_ms: u64) -> TaskSeed {
        TaskSeed {
            owner: owner.map(str::to_owned),
            runner: runner.to_owned(),
            task: Task::new(id, TaskStatus::Working, "c", "c"),
            lease: Duration::from_millis(lease_ms),
            ttl: Duration::from_secs(60),
        }
    }

    #[tokio::test]
    async fn the_scripts_bound_tasks_keep_owners_deliver_answers_and_fail_a_lapsed_lease() {
        let Some(server) = Server::start() else {
            return;
        };
        let store = Redis::connect(&format!("redis://127.0.0.1:{}/3", server.0.port()))
            .await
            .unwrap();
        assert_eq!(
            store.describe(),
            format!("redis://127.0.0.1:{}/3", server.0.port())
        );
        let stopped: JsonObject =
            serde_json::from_value(serde_json::json!({"code": -32603, "message": "stopped"}))
                .unwrap();

        // Bounded: with room for two, a third waits for one to end, and
        // then the one that ended makes room.
        store
            .heartbeat("r1", Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(
            store.create_task(&seed("t1", None, "r1", 30_000), 2).await,
            Ok(Created::Yes)
        );
        assert_eq!(
            store
                .create_task(&seed("t2", Some("alice"), "r1", 30_000), 2)
                .await,
            Ok(Created::Yes)
        );
        assert_eq!(
            store.create_task(&seed("t3", None, "r1", 30_000), 2).await,
            Ok(Created::Full)
        );
        let payload = TaskPayload::Completed {
            result: JsonObject::new(),
        };
        assert_eq!(
            store
                .finish_task(&seed("t1", None, "r1", 30_000), &payload, 99)
                .await,
            Ok(true)
        );
        assert_eq!(
            store
                .finish_task(&seed("t1", None, "r1", 30_000), &payload, 99)
                .await,
            Ok(false),
            "once"
        );
        assert_eq!(
            store.create_task(&seed("t3", None, "r1", 30_000), 2).await,
            Ok(Created::Yes)
        );
        assert_eq!(
            store
                .task("t1", None, &stopped)
                .await
                .unwrap()
                .map(|r| r.task.task_id),
            None,
            "t1 made room"
        );

        // An owner's task is the owner's only.
        assert!(store.task("t2", None, &stopped).await.unwrap().is_none());
        assert!(
            store
                .task("t2", Some("bob"), &stopped)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(store.cancel_task("t2", Some("bob")).await, Ok(false));
        let t2 = seed("t2", Some("alice"), "r1", 30_000);

        // An answer to a request asked is taken out once and reaches the
        // runner's inbox; one not asked is ignored.
        let (boxes, _resumes) = Mailboxes::new();
        let mut mailbox = boxes.open("task:t2".into());
        store.attach("r1", &boxes);
        let request =
            serde_json::json!({"method": "elicitation/create", "params": {"message": "ok?"}});
        assert_eq!(
            store.task_ask(&t2, "elicitation-1", &request).await,
            Ok(true)
        );
        let record = store
            .task("t2", Some("alice"), &stopped)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            record.requests.keys().collect::<Vec<_>>(),
            ["elicitation-1"]
        );
        let answers = [
            (
                "elicitation-1".to_owned(),
                serde_json::json!({"action": "accept", "content": {"a": [1, "x\"y"]}}),
            ),
            ("elicitation-9".to_owned(), serde_json::json!({})),
        ];
        assert_eq!(
            store.update_task("t2", Some("alice"), &answers).await,
            Ok(true)
        );
        assert_eq!(
            store.update_task("t2", Some("alice"), &answers).await,
            Ok(true)
        );
        let got = tokio::time::timeout(Duration::from_secs(5), mailbox.recv())
            .await
            .unwrap();
        assert_eq!(
            got,
            Some(Message::Answer {
                to: "task:t2".into(),
                key: "elicitation-1".into(),
                value: answers[0].1.clone(),
            })
        );
        assert!(
            store
                .task("t2", Some("alice"), &stopped)
                .await
                .unwrap()
                .unwrap()
                .requests
                .is_empty()
        );
        assert_eq!(store.cancel_task("t2", Some("alice")).await, Ok(true));
        let got = tokio::time::timeout(Duration::from_secs(5), mailbox.recv())
            .await
            .unwrap();
        assert_eq!(
            got,
            Some(Message::Cancel {
                to: "task:t2".into()
            })
        );

        // A runner whose lease lapsed: the first read notes it, a read a
        // lease later fails the task, saying why; its runner's late end
        // changes nothing.
        store
            .heartbeat("r2", Duration::from_millis(200))
            .await
            .unwrap();
        let t4 = seed("t4", None, "r2", 200);
        assert_eq!(store.create_task(&t4, 10).await, Ok(Created::Yes));
        let working = store.task("t4", None, &stopped).await.unwrap().unwrap();
        assert!(working.ended.is_none());
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            store
                .task("t4", None, &stopped)
                .await
                .unwrap()
                .unwrap()
                .ended
                .is_none(),
            "noted"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
        let failed = store.task("t4", None, &stopped).await.unwrap().unwrap();
        assert_eq!(failed.task.status, TaskStatus::Failed);
        assert_eq!(
            failed.ended,
            Some(TaskPayload::Failed {
                error: stopped.clone()
            })
        );
        assert_eq!(store.finish_task(&t4, &payload, 1).await, Ok(false));
        assert_eq!(
            store.task_status(&t4, "1/2").await,
            Ok(false),
            "the runner is told"
        );

        // A call waiting for input is good for one retry.
        let record = StateRecord {
            runner: "r1".into(),
            owner: None,
            name: "guarded".into(),
            arguments: None,
        };
        store
            .park_state("s1", &record, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(store.take_state("s1").await, Ok(Some(record)));
        assert_eq!(store.take_state("s1").await, Ok(None));

        // Gone: a clear error naming the store.
        drop(server);
        let error = store.task("t2", Some("alice"), &stopped).await.unwrap_err();
        assert!(error.to_string().contains("is unreachable"), "{error}");
    }

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(shown("redis://:hunter2@db:6379/1"), "redis://…@db:6379/1");
        assert_eq!(shown("redis://db:6379"), "redis://db:6379");
    }

    #[test]
    fn a_hash_reads_back_as_its_task() {
        let task = Task::new("t1", TaskStatus::Working, "c", "c");
        let hash = |status: &str, payload: &str| {
            [
                ("owner", "-"),
                ("task", &serde_json::to_string(&task).unwrap()),
                ("status", status),
                ("payload", payload),
                ("message", "1/2: half"),
                ("updated", "u"),
                ("ttlms", "77"),
                (
                    "req:elicitation-1",
                    r#"{"method":"elicitation/create","params":{}}"#,
                ),
            ]
            .iter()
            .flat_map(|(k, v)| [k.to_string(), v.to_string()])
            .collect::<Vec<_>>()
        };
        let running = record(hash("working", "")).unwrap();
        assert_eq!(running.task.status, TaskStatus::Working);
        assert_eq!(running.task.status_message.as_deref(), Some("1/2: half"));
        assert_eq!(running.task.ttl_ms, Some(77));
        assert_eq!(running.requests.len(), 1);
        assert!(running.ended.is_none());
        let done = record(hash("completed", r#"{"content":[]}"#)).unwrap();
        assert_eq!(done.task.status, TaskStatus::Completed);
        assert!(
            matches!(done.ended, Some(TaskPayload::Completed { result }) if result.contains_key("content"))
        );
    }
}
