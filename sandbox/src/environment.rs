//! The environment a confined process starts from: chosen, never the
//! server's whole environment.

use std::ffi::{OsStr, OsString};

use crate::SandboxPolicy;

/// The variables every process gets from the server's environment (when
/// set), in every mode, beside `LC_*` and the names the policy passes.
pub const BASE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TMPDIR", "TZ",
];

/// The environment of a process started under `policy`, picked from
/// `vars` (the server's environment, `std::env::vars_os()`): the
/// [`BASE_ENV`] names, `LC_*`, and the names passed with
/// [`SandboxPolicy::pass_env`], never a withheld one; in the order of
/// `vars`.
///
/// ```
/// use std::ffi::OsString;
/// use toolprism_sandbox::{SandboxPolicy, environment};
/// let vars = [("PATH", "/usr/bin"), ("SOME_API_KEY", "sk-123"), ("LC_ALL", "C"), ("TOKEN", "t")]
///     .map(|(k, v)| (OsString::from(k), OsString::from(v)));
/// let policy = SandboxPolicy::default().pass_env("TOKEN").withhold_env("TOKEN");
/// let names: Vec<_> = environment(&policy, vars).into_iter().map(|(k, _)| k).collect();
/// assert_eq!(names, ["PATH", "LC_ALL"]);
/// ```
pub fn environment(
    policy: &SandboxPolicy,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, _)| passes(policy, name))
        .collect()
}

fn passes(policy: &SandboxPolicy, name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    if policy.withheld_env().iter().any(|w| w == name) {
        return false;
    }
    BASE_ENV.contains(&name)
        || (name.starts_with("LC_") && name.len() > 3)
        || policy.passed_env().iter().any(|p| p == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_chosen_names_pass() {
        let vars = [
            ("HOME", "/root"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("LC_", "odd"),
            ("LC_CTYPE", "C.UTF-8"),
            ("MY_VAR", "1"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let names = |policy: &SandboxPolicy| -> Vec<OsString> {
            environment(policy, vars.clone())
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        assert_eq!(names(&SandboxPolicy::default()), ["HOME", "LC_CTYPE"]);
        assert_eq!(
            names(
                &SandboxPolicy::default()
                    .pass_env("MY_VAR")
                    .withhold_env("HOME")
            ),
            ["LC_CTYPE", "MY_VAR"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_never_passes() {
        use std::os::unix::ffi::OsStringExt;
        let odd = OsString::from_vec(vec![b'P', 0xff]);
        let out = environment(&SandboxPolicy::default(), [(odd, OsString::from("x"))]);
        assert!(out.is_empty());
    }
}
