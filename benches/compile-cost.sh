#!/usr/bin/env bash
# Compile cost of #[tool] (benchmark 5 of issue 6).
#
# 1. Two generated crates, each with the same 50 tools: one written with
#    #[tool], one written by hand against the `Tool` trait. For each: the
#    cold build of the crate itself (its dependencies already built) and the
#    incremental rebuild after changing one tool's render text, each the
#    median of $RUNS runs with the two forms alternating. Prints wall and
#    cpu (user + sys) times and the macro/hand ratios (target: incremental
#    wall <= 1.3).
# 2. The cold build, from an empty target dir, of a one-tool crate on
#    toolprism against the same crate on rmcp (features server + macros).
#
# Everything is written under $OUT (default /tmp/toolprism-compile-cost):
# a snapshot of runtime/ and macros/ (so concurrent edits to the repo
# cannot leak into a measurement), the generated crates and one target dir
# per measured side. The repo's own target dir is never touched.
#
# Usage: benches/compile-cost.sh             # RUNS=3 for the median
#        RUNS=5 OUT=/tmp/cc benches/compile-cost.sh
#        SKIP_FRAMEWORKS=1 benches/compile-cost.sh   # part 1 only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-/tmp/toolprism-compile-cost}"
RUNS="${RUNS:-3}"
TOOLS="${TOOLS:-50}"
WS="$OUT/ws"

log() { printf '%s\n' "$*" >&2; }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }

# Builds package $2 with target dir $1; prints "<wall seconds> <cpu seconds>"
# (cpu: user + sys of cargo and every rustc it ran, which other load on a
# shared machine disturbs less than the wall time).
timed_build() {
    local target="$1" pkg="$2" times
    times=$( { TIMEFORMAT='%R %U %S'; time CARGO_TARGET_DIR="$target" cargo build --quiet \
        --manifest-path "$WS/Cargo.toml" -p "$pkg" >"$OUT/last-build.log" 2>&1; } 2>&1 ) || {
        log "cargo build -p $pkg failed:"
        cat "$OUT/last-build.log" >&2
        exit 1
    }
    awk '{printf "%.2f %.2f", $1, $2 + $3}' <<<"$times"
}

# ---------------------------------------------------------------------------
# The snapshot workspace
# ---------------------------------------------------------------------------

log "snapshot of $ROOT/{runtime,macros} into $WS"
rm -rf "$WS"
mkdir -p "$WS"
cp -r "$ROOT/runtime" "$ROOT/macros" "$WS/"
cp "$ROOT/Cargo.lock" "$WS/"
# The root manifest, with only the snapshot's members.
sed -e 's/^members = .*/members = ["runtime", "macros", "gen-macro", "gen-hand", "tiny-toolprism", "tiny-rmcp"]/' \
    -e '/^default-members = /d' \
    "$ROOT/Cargo.toml" >"$WS/Cargo.toml"

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

# The two one-tool crates for the framework comparison.
mkdir -p "$WS/tiny-toolprism/src" "$WS/tiny-rmcp/src"
gen_manifest tiny-toolprism "toolprism.workspace = true" >"$WS/tiny-toolprism/Cargo.toml"
gen_manifest tiny-rmcp "rmcp.workspace = true" >"$WS/tiny-rmcp/Cargo.toml"
{
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
} >"$WS/tiny-toolprism/src/lib.rs"
cat >"$WS/tiny-rmcp/src/lib.rs" <<'EOF'
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

# ---------------------------------------------------------------------------
# 1. 50 tools: #[tool] against the Tool trait by hand
# ---------------------------------------------------------------------------

declare -A WALL CPU
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

# ---------------------------------------------------------------------------
# 2. toolprism against rmcp: cold build from an empty target dir
# ---------------------------------------------------------------------------

if [ -n "${SKIP_FRAMEWORKS:-}" ]; then
    exit 0
fi
declare -A FRESH
for fw in toolprism rmcp; do
    target="$OUT/target-tiny-$fw"
    rm -rf "$target"
    FRESH[$fw]=$(timed_build "$target" "tiny-$fw")
    log "tiny-$fw: cold build from an empty target dir: wall cpu = ${FRESH[$fw]} s"
    CARGO_TARGET_DIR="$target" cargo tree --quiet --manifest-path "$WS/Cargo.toml" -p "tiny-$fw" -e normal,build --prefix none \
        | sed 's/ (\*)$//' | sort -u | wc -l >"$OUT/tiny-$fw.crates"
done
read -r tw tc <<<"${FRESH[toolprism]}"
read -r rw rc <<<"${FRESH[rmcp]}"
echo
echo "Cold build of a one-tool crate from an empty target dir (dev profile, one run each):"
echo
echo "| framework | crates built | wall | cpu |"
echo "|---|---|---|---|"
echo "| toolprism | $(cat "$OUT/tiny-toolprism.crates") | $tw s | $tc s |"
echo "| rmcp 3.11 (server, macros) | $(cat "$OUT/tiny-rmcp.crates") | $rw s | $rc s |"
echo "| ratio toolprism/rmcp | | **$(ratio "$tw" "$rw")** | $(ratio "$tc" "$rc") |"
