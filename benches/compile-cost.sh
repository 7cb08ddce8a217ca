#!/usr/bin/env bash
# Build cost (benchmark 5): what a user pays in compile time.
#
# 1. Two generated crates, each with the same 50 tools: one written with
#    #[tool], one written by hand against the `Tool` trait. For each: the
#    cold build of the crate itself (its dependencies already built) and the
#    incremental rebuild after changing one tool's render text, each the
#    median of $RUNS runs with the two forms alternating (target:
#    incremental <= 1.3).
# 2. One-tool crates, each built from an empty target dir, the sides
#    alternating, $FW_RUNS runs each: toolprism (default features) against
#    rmcp (`server`, `macros`), target <= 0.9; toolprism with `mcp` (the
#    tool served over stdio and Streamable HTTP) against rmcp with its
#    transports (`transport-io`, `transport-streamable-http-server`, served
#    on hyper the same two ways), target <= 1.0.
# 3. The newcomer (NEWCOMER=1): a copy of the repository, an empty target
#    dir, `cargo build -p toolprism-examples` (what `cargo run` builds), then
#    `cargo test --workspace --no-run` right after it (what the tests add).
#    With BASE=<commit>, the same for that commit too, the two alternating,
#    and the ratios now / BASE.
#
# Each cold build also leaves cargo's --timings page under $OUT
# (timings-*.html; benches/top-units.py lists the costliest crates of one).
# cpu = user + sys of cargo and every rustc, build script and C compiler it
# ran (less disturbed by other load than the wall time). Everything is
# written under $OUT (default /tmp/toolprism-compile-cost): a snapshot of
# the repository (its tracked and untracked files, so edits made while it
# runs cannot leak in), the generated crates and one target dir per
# measured side. The repo's own target dir is never touched. The registry
# cache must be warm (`cargo fetch` once): downloads are not build cost.
#
# Usage: benches/compile-cost.sh                  # parts 1 and 2, about 25 minutes
#        RUNS=5 FW_RUNS=3 benches/compile-cost.sh
#        SKIP_TOOLS=1 benches/compile-cost.sh      # part 2 only
#        SKIP_TOOLS=1 SKIP_FRAMEWORKS=1 NEWCOMER=1 BASE=cb83659 benches/compile-cost.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-/tmp/toolprism-compile-cost}"
RUNS="${RUNS:-3}"
FW_RUNS="${FW_RUNS:-1}"
TOOLS="${TOOLS:-50}"
WS="$OUT/ws"

log() { printf '%s\n' "$*" >&2; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }

# Runs cargo with target dir $1 and manifest $2, the rest its arguments;
# prints "<wall seconds> <cpu seconds>".
timed_cargo() {
    local target="$1" manifest="$2" times
    shift 2
    times=$( { TIMEFORMAT='%R %U %S'; time CARGO_TARGET_DIR="$target" cargo "$@" --quiet \
        --manifest-path "$manifest" >"$OUT/last-build.log" 2>&1; } 2>&1 ) || {
        log "cargo $* failed:"
        cat "$OUT/last-build.log" >&2
        exit 1
    }
    awk '{printf "%.2f %.2f", $1, $2 + $3}' <<<"$times"
}
timed_build() { timed_cargo "$1" "$WS/Cargo.toml" build -p "$2"; }

# A copy of a tree: the working tree's tracked and untracked files
# (REV empty), or the files of commit REV.
snapshot() { # dest, rev
    rm -rf "$1"
    mkdir -p "$1"
    if [ -z "$2" ]; then
        (cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$1")
    else
        git -C "$ROOT" archive "$2" | tar -x -C "$1"
    fi
}

# ---------------------------------------------------------------------------
# The snapshot workspace
# ---------------------------------------------------------------------------

log "snapshot of $ROOT into $WS"
snapshot "$WS" ""
# The snapshot's own members and the generated crates.
sed -i -e 's/^members = \[/members = ["gen-macro", "gen-hand", "tiny-toolprism", "tiny-rmcp", "tiny-toolprism-mcp", "tiny-rmcp-mcp", /' \
    "$WS/Cargo.toml"
# A user's crate is built with Cargo's default profile: the workspace's own
# profile settings (its last section) are cut off.
sed -i '/^\[profile\./,$d' "$WS/Cargo.toml"

gen_manifest() { # name, extra dependency lines
    cat <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
$2
serde.workspace = true
schemars.workspace = true
EOF
}

# A tool's types and body, shared by both forms. $1 = two-digit index.
tool_types() {
    cat <<EOF
use toolprism::{ContentBlock, ToolError};

/// The arguments of tool $1.
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct Args$1 {
    /// The text.
    pub text: String,
    /// How many times.
    #[serde(default)]
    pub count: u32,
}

/// The value of tool $1.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Value$1 {
    /// The text.
    pub text: String,
    /// Its length.
    pub len: usize,
    /// How many times.
    pub count: u32,
}

/// Tool $1.
pub struct Tool$1;

fn body$1(args: Args$1) -> Result<Value$1, ToolError> {
    Ok(Value$1 { len: args.text.len(), count: args.count, text: args.text })
}
EOF
}

mkdir -p "$WS/gen-macro/src" "$WS/gen-hand/src"
gen_manifest gen-macro "toolprism.workspace = true" >"$WS/gen-macro/Cargo.toml"
gen_manifest gen-hand "toolprism.workspace = true" >"$WS/gen-hand/Cargo.toml"
for form in macro hand; do
    lib="$WS/gen-$form/src/lib.rs"
    echo "//! $TOOLS tools written with $([ $form = macro ] && echo '#[tool]' || echo 'the Tool trait by hand')." >"$lib"
    for i in $(seq -f '%02g' 0 $((TOOLS - 1))); do
        echo "pub mod tool_$i;" >>"$lib"
    done
    {
        echo
        echo "/// A registry holding every tool (so each pipeline is instantiated here)."
        echo "pub fn registry() -> toolprism::Registry {"
        echo "    toolprism::Registry::builder()"
        for i in $(seq -f '%02g' 0 $((TOOLS - 1))); do
            echo "        .tool(tool_$i::Tool$i)"
        done
        echo "        .build()"
        echo "        .expect(\"the tools register\")"
        echo "}"
    } >>"$lib"
done
for i in $(seq -f '%02g' 0 $((TOOLS - 1))); do
    {
        tool_types "$i"
        cat <<EOF

/// Echo the text back, $i.
#[toolprism::tool(name = "tool_$i")]
impl Tool$i {
    async fn execute(&self, args: Args$i) -> Result<Value$i, ToolError> {
        body$i(args)
    }

    fn render(_args: &Args$i, value: &Value$i) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("v1 {} ({} bytes, {} times)", value.text, value.len, value.count))]
    }
}
EOF
    } >"$WS/gen-macro/src/tool_$i.rs"
    {
        tool_types "$i"
        cat <<EOF

impl toolprism::Tool for Tool$i {
    type Args = Args$i;
    type Value = Value$i;
    type Meta = toolprism::NoMeta;
    const INFO: toolprism::ToolInfo = toolprism::ToolInfo::new("tool_$i", "Echo the text back, $i.");

    async fn execute(&self, args: Args$i, _cx: &toolprism::ToolContext<'_>) -> Result<Value$i, ToolError> {
        body$i(args)
    }

    fn render(_args: &Args$i, value: &Value$i) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("v1 {} ({} bytes, {} times)", value.text, value.len, value.count))]
    }
}
EOF
    } >"$WS/gen-hand/src/tool_$i.rs"
done

# The one-tool crates for the framework comparison.
for c in tiny-toolprism tiny-rmcp tiny-toolprism-mcp tiny-rmcp-mcp; do mkdir -p "$WS/$c/src"; done
gen_manifest tiny-toolprism "toolprism.workspace = true" >"$WS/tiny-toolprism/Cargo.toml"
gen_manifest tiny-rmcp 'rmcp = { workspace = true, features = ["server", "macros"] }' >"$WS/tiny-rmcp/Cargo.toml"
gen_manifest tiny-toolprism-mcp 'toolprism = { workspace = true, features = ["mcp"] }
tokio = { workspace = true, features = ["rt-multi-thread"] }' >"$WS/tiny-toolprism-mcp/Cargo.toml"
gen_manifest tiny-rmcp-mcp 'rmcp = { workspace = true, features = ["server", "macros", "transport-io", "transport-streamable-http-server"] }
tokio = { workspace = true, features = ["rt-multi-thread", "net"] }
hyper = { workspace = true, features = ["server", "http1"] }
hyper-util = { workspace = true, features = ["tokio", "service"] }' >"$WS/tiny-rmcp-mcp/Cargo.toml"
toolprism_tool() {
    tool_types 00
    cat <<'EOF'

/// Echo the text back.
#[toolprism::tool(name = "echo")]
impl Tool00 {
    async fn execute(&self, args: Args00) -> Result<Value00, ToolError> {
        body00(args)
    }

    fn render(_args: &Args00, value: &Value00) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} ({})", value.text, value.len))]
    }
}

/// A registry holding the tool.
pub fn registry() -> toolprism::Registry {
    toolprism::Registry::builder().tool(Tool00).build().expect("the tool registers")
}
EOF
}
toolprism_tool >"$WS/tiny-toolprism/src/lib.rs"
{
    toolprism_tool
    cat <<'EOF'

/// Serves the tool over stdio.
pub fn serve_stdio() -> std::io::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(toolprism::mcp::serve_stdio(registry()))
}

/// Serves the tool over Streamable HTTP on `addr`.
pub fn serve_http(addr: &str) -> std::io::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(toolprism::mcp::serve_http(registry(), addr))
}
EOF
} >"$WS/tiny-toolprism-mcp/src/lib.rs"
rmcp_tool() {
    cat <<'EOF'
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{Json, ServerHandler, tool, tool_handler, tool_router};

/// The arguments.
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct Args00 {
    /// The text.
    pub text: String,
    /// How many times.
    #[serde(default)]
    pub count: u32,
}

/// The value.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Value00 {
    /// The text.
    pub text: String,
    /// Its length.
    pub len: usize,
    /// How many times.
    pub count: u32,
}

/// The server.
#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Server {
    /// A server with its tool.
    pub fn new() -> Self {
        Server { tool_router: Self::tool_router() }
    }

    /// Echo the text back.
    #[tool(name = "echo")]
    async fn echo(&self, Parameters(args): Parameters<Args00>) -> Json<Value00> {
        Json(Value00 { len: args.text.len(), count: args.count, text: args.text })
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_handler]
impl ServerHandler for Server {}
EOF
}
rmcp_tool >"$WS/tiny-rmcp/src/lib.rs"
{
    rmcp_tool
    cat <<'EOF'

/// Serves the tool over stdio.
pub fn serve_stdio() -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let running = Server::new().serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}

/// Serves the tool over Streamable HTTP on `addr`.
pub fn serve_http(addr: &str) -> std::io::Result<()> {
    use rmcp::transport::streamable_http_server::{StreamableHttpService, session::local::LocalSessionManager};
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let service = StreamableHttpService::new(
            || Ok(Server::new()),
            std::sync::Arc::new(LocalSessionManager::default()),
            Default::default(),
        );
        let listener = tokio::net::TcpListener::bind(addr).await?;
        loop {
            let (stream, _) = listener.accept().await?;
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
EOF
} >"$WS/tiny-rmcp-mcp/src/lib.rs"

# ---------------------------------------------------------------------------
# 1. 50 tools: #[tool] against the Tool trait by hand
# ---------------------------------------------------------------------------

declare -A WALL CPU
if [ -z "${SKIP_TOOLS:-}" ]; then
for form in macro hand; do
    log "gen-$form: building its dependencies once ($OUT/target-gen-$form)"
    timed_build "$OUT/target-gen-$form" "gen-$form" >/dev/null
    : >"$OUT/cold-$form.txt"
    : >"$OUT/incr-$form.txt"
done
# The two forms alternate, so load from elsewhere falls on both alike.
for run in $(seq "$RUNS"); do
    for form in macro hand; do
        target="$OUT/target-gen-$form"
        CARGO_TARGET_DIR="$target" cargo clean --quiet --manifest-path "$WS/Cargo.toml" -p "gen-$form"
        t=$(timed_build "$target" "gen-$form")
        echo "$t" >>"$OUT/cold-$form.txt"
        log "gen-$form: cold build of the crate, run $run: wall cpu = $t s"
    done
done
for run in $(seq "$RUNS"); do
    for form in macro hand; do
        # A real edit of one tool: its render text changes on every run.
        sed -i -E "s/\"v[0-9]+ /\"v$((run + 1)) /" "$WS/gen-$form/src/tool_07.rs"
        t=$(timed_build "$OUT/target-gen-$form" "gen-$form")
        echo "$t" >>"$OUT/incr-$form.txt"
        log "gen-$form: rebuild after editing tool_07, run $run: wall cpu = $t s"
    done
done
for form in macro hand; do
    for kind in cold incr; do
        WALL[$kind-$form]=$(cut -d' ' -f1 "$OUT/$kind-$form.txt" | median)
        CPU[$kind-$form]=$(cut -d' ' -f2 "$OUT/$kind-$form.txt" | median)
    done
done

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
row() { # label, kind, target
    echo "| $1 | ${WALL[$2-macro]} s | ${WALL[$2-hand]} s | **$(ratio "${WALL[$2-macro]}" "${WALL[$2-hand]}")** | ${CPU[$2-macro]} s | ${CPU[$2-hand]} s | $(ratio "${CPU[$2-macro]}" "${CPU[$2-hand]}") | $3 |"
}
echo
echo "Compile cost of $TOOLS tools, #[tool] against the Tool trait by hand: dev profile, median of $RUNS, the two forms alternating ($machine)."
echo
echo "| build | #[tool] wall | by hand wall | ratio | #[tool] cpu | by hand cpu | cpu ratio | target |"
echo "|---|---|---|---|---|---|---|---|"
row "cold build of the crate (dependencies built)" cold ""
row "incremental rebuild after editing one tool" incr "≤ 1.3"

fi

# ---------------------------------------------------------------------------
# 2. toolprism against rmcp: cold builds from an empty target dir
# ---------------------------------------------------------------------------

if [ -z "${SKIP_FRAMEWORKS:-}" ]; then
    declare -A FWALL FCPU
    crates=(tiny-toolprism tiny-rmcp tiny-toolprism-mcp tiny-rmcp-mcp)
    for crate in "${crates[@]}"; do : >"$OUT/fresh-$crate.txt"; done
    # The sides alternate run by run, so load from elsewhere falls on both alike.
    for run in $(seq "$FW_RUNS"); do
        for crate in "${crates[@]}"; do
            target="$OUT/target-$crate"
            rm -rf "$target"
            t=$(timed_cargo "$target" "$WS/Cargo.toml" build -p "$crate" --timings)
            cp "$target/cargo-timings/cargo-timing.html" "$OUT/timings-$crate-$run.html"
            echo "$t" >>"$OUT/fresh-$crate.txt"
            log "$crate: cold build from an empty target dir, run $run: wall cpu = $t s"
        done
    done
    for crate in "${crates[@]}"; do
        FWALL[$crate]=$(cut -d' ' -f1 "$OUT/fresh-$crate.txt" | median)
        FCPU[$crate]=$(cut -d' ' -f2 "$OUT/fresh-$crate.txt" | median)
        cargo tree --quiet --manifest-path "$WS/Cargo.toml" -p "$crate" -e normal,build --prefix none \
            | sed 's/ (\*)$//' | sort -u >"$OUT/$crate.tree"
    done
    fwrow() { # label, crate
        echo "| $1 | $(wc -l <"$OUT/$2.tree") | $(grep -c '^syn v' "$OUT/$2.tree") | ${FWALL[$2]} s | ${FCPU[$2]} s |"
    }
    echo
    echo "Cold build of a one-tool crate from an empty target dir (dev profile, median of $FW_RUNS, the sides alternating):"
    echo
    echo "| crate | crates | syn versions | wall | cpu |"
    echo "|---|---|---|---|---|"
    fwrow "toolprism (default features)" tiny-toolprism
    fwrow "rmcp 3.11 (\`server\`, \`macros\`)" tiny-rmcp
    fwrow "toolprism (\`mcp\`: stdio and Streamable HTTP)" tiny-toolprism-mcp
    fwrow "rmcp 3.11 (+ \`transport-io\`, \`transport-streamable-http-server\`, hyper)" tiny-rmcp-mcp
    echo
    echo "| ratio | wall | cpu | target (cpu) |"
    echo "|---|---|---|---|"
    echo "| toolprism / rmcp | $(ratio "${FWALL[tiny-toolprism]}" "${FWALL[tiny-rmcp]}") | **$(ratio "${FCPU[tiny-toolprism]}" "${FCPU[tiny-rmcp]}")** | ≤ 0.9 |"
    echo "| toolprism \`mcp\` / rmcp with transports | $(ratio "${FWALL[tiny-toolprism-mcp]}" "${FWALL[tiny-rmcp-mcp]}") | **$(ratio "${FCPU[tiny-toolprism-mcp]}" "${FCPU[tiny-rmcp-mcp]}")** | ≤ 1.0 |"
fi

# ---------------------------------------------------------------------------
# 3. The newcomer: `cargo run`, then `cargo test --workspace`
# ---------------------------------------------------------------------------

if [ -n "${NEWCOMER:-}" ]; then
    sides=(now)
    snapshot "$OUT/newcomer-now" ""
    if [ -n "${BASE:-}" ]; then
        sides+=(base)
        snapshot "$OUT/newcomer-base" "$BASE"
    fi
    declare -A NRUN NTEST
    for side in "${sides[@]}"; do
        repo="$OUT/newcomer-$side"
        target="$OUT/target-newcomer-$side"
        rm -rf "$target"
        NRUN[$side]=$(timed_cargo "$target" "$repo/Cargo.toml" build -p toolprism-examples --timings)
        cp "$target/cargo-timings/cargo-timing.html" "$OUT/timings-newcomer-$side-run.html"
        log "newcomer ($side): cargo run's build: wall cpu = ${NRUN[$side]} s"
        NTEST[$side]=$(timed_cargo "$target" "$repo/Cargo.toml" test --workspace --no-run --timings)
        cp "$target/cargo-timings/cargo-timing.html" "$OUT/timings-newcomer-$side-test.html"
        log "newcomer ($side): cargo test --workspace right after: wall cpu = ${NTEST[$side]} s"
    done
    echo
    echo "The newcomer, from an empty target dir (registry cache warm; one run each):"
    echo
    echo "| tree | \`cargo run\`'s build: wall | cpu | then \`cargo test --workspace --no-run\`: wall | cpu |"
    echo "|---|---|---|---|---|"
    for side in "${sides[@]}"; do
        read -r rw rc <<<"${NRUN[$side]}"
        read -r tw tc <<<"${NTEST[$side]}"
        label=$([ "$side" = now ] && echo "this tree" || echo "\`$BASE\`")
        echo "| $label | $rw s | $rc s | $tw s | $tc s |"
    done
    if [ -n "${BASE:-}" ]; then
        read -r _ rc <<<"${NRUN[now]}"
        read -r _ bc <<<"${NRUN[base]}"
        read -r _ tc <<<"${NTEST[now]}"
        read -r _ btc <<<"${NTEST[base]}"
        echo "| ratio this / base (cpu) | | **$(ratio "$rc" "$bc")** | | **$(ratio "$tc" "$btc")** |"
    fi
fi
