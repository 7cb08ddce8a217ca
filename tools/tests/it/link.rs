//! `Registry::builtin()` in a program that names nothing from
//! toolprism-tools but [`toolprism_tools::link`]: the linker keeps the
//! crate, and with it the tools' registrations. (This test binary is its
//! own program: nothing else links the crate into it.)

#[test]
fn link_is_enough_for_builtin_to_find_the_tools() {
    toolprism_tools::link();
    let registry = toolprism::Registry::builtin().build().unwrap();
    let mut names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    names.sort_unstable();
    let mut expected = Vec::new();
    if cfg!(all(feature = "shell", unix)) {
        expected.push("bash");
    }
    if cfg!(feature = "fs") {
        expected.extend(["edit", "glob", "grep", "read"]);
    }
    if cfg!(feature = "web") {
        expected.push("web_fetch");
    }
    if cfg!(feature = "fs") {
        expected.push("write");
    }
    assert_eq!(names, expected);
}
