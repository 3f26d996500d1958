//! The layering check (scripts/check_layers.py, run by .ci/run): no circle
//! between the crate's top-level folders, nor between the modules of any
//! folder below them. First the check itself, on small
//! crates written into a temporary folder; then the real crate.

use std::path::Path;
use std::process::Command;

/// Runs the check on `src`: its exit code and what it printed.
fn check(src: &Path) -> (i32, String) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check_layers.py");
    let out = match Command::new("python3").arg(script).arg(src).output() {
        Ok(out) => out,
        Err(e) => panic!(
            "cannot run python3 ({e}): the layering check needs Python 3 on PATH \
             (.ci/run installs it)"
        ),
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// A crate whose folders depend one way: a → b → c. Returns the temporary
/// folder (kept alive by the caller) and its `src`.
fn clean_crate() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    for (file, text) in [
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        (
            "a/mod.rs",
            "pub mod inner;\nuse crate::b::B;\npub struct X;\n",
        ),
        ("a/inner.rs", "use super::X;\nuse super::super::b::B;\n"),
        ("b.rs", "use crate::c::C;\npub struct B;\n"),
        ("c/mod.rs", "pub mod deep;\npub struct C;\n"),
        ("c/deep/mod.rs", "pub mod leaf;\n"),
        ("c/deep/leaf.rs", "use super::super::C;\n"),
    ] {
        write(&src, file, text);
    }
    (dir, src)
}

fn write(src: &Path, file: &str, text: &str) {
    let path = src.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_clean_crate_passes_and_its_order_is_printed() {
    let (_dir, src) = clean_crate();
    let (code, out) = check(&src);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("order: c b a"), "{out}");
}

#[test]
fn a_back_edge_fails_naming_its_file_line_and_the_circle() {
    let (_dir, src) = clean_crate();
    write(
        &src,
        "c/mod.rs",
        "pub mod deep;\nuse crate::a::X;\npub struct C;\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("c -> a\n"), "{out}");
    assert!(out.contains("c/mod.rs:2: use crate::a::X;"), "{out}");
    assert!(
        out.contains("a -> b\n") && out.contains("a/inner.rs:2: use super::super::b::B;"),
        "{out}"
    );
    assert!(
        out.contains("circle between folders: a -> b -> c -> a"),
        "{out}"
    );
}

#[test]
fn grouped_use_trees_and_inline_paths_are_edges() {
    let (_dir, src) = clean_crate();
    // The line named is the one holding `a`, not the one opening the tree.
    write(
        &src,
        "c/deep/leaf.rs",
        "use crate::{\n    c::C,\n    a::{self, X},\n};\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("leaf.rs:3: a::{self, X},"), "{out}");
    assert!(
        !out.contains("leaf.rs:1:") && !out.contains("leaf.rs:2:"),
        "{out}"
    );

    let (_dir, src) = clean_crate();
    write(
        &src,
        "b.rs",
        "use crate::c::C;\npub fn f() -> u8 {\n    crate :: a::inner::n()\n}\n",
    );
    write(
        &src,
        "c/mod.rs",
        "pub mod deep;\npub fn g() -> crate::b::B { todo!() }\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("b.rs:3: crate :: a::inner::n()"), "{out}");
    assert!(
        out.contains("c/mod.rs:2: pub fn g() -> crate::b::B { todo!() }"),
        "{out}"
    );
}

#[test]
fn super_counts_only_when_it_climbs_to_the_crate_root() {
    // c::deep (a mod.rs two levels down): `super::super` is the root.
    let (_dir, src) = clean_crate();
    write(
        &src,
        "c/deep/mod.rs",
        "pub mod leaf;\nuse super::super::a::X;\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("c/deep/mod.rs:2: use super::super::a::X;"),
        "{out}"
    );

    // One level deeper, or inside an inline module, the same words stay in c.
    let (_dir, src) = clean_crate();
    write(&src, "c/deep/leaf.rs", "use super::super::a::Local;\n");
    write(
        &src,
        "c/deep/mod.rs",
        "pub mod leaf;\n#[cfg(test)]\nmod tests {\n    use super::super::a::Local;\n}\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 0, "{out}");

    // …but from an inline module of a top-level file, one more `super` does.
    write(
        &src,
        "c/mod.rs",
        "pub mod deep;\nmod tests {\n    use super::super::a::X;\n}\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("c/mod.rs:3:"), "{out}");
}

#[test]
fn comments_and_string_literals_are_not_edges() {
    let (_dir, src) = clean_crate();
    let quiet = concat!(
        "pub mod deep;\n",
        "// use crate::a::X;\n",
        "/// see crate::a::X\n",
        "/* crate::a /* nested */ crate::a::X */\n",
        "const S: &str = \"crate::a::X \\\" crate::a\";\n",
        "const R: &str = r#\"use crate::a::X; \"quoted\"\"#;\n",
        "const Q: char = '\"';\n",
        "fn f<'a>(x: &'a str) -> &'a str { x }\n",
    );
    write(&src, "c/mod.rs", quiet);
    let (code, out) = check(&src);
    assert_eq!(code, 0, "{out}");

    // Code after all of those is still read (the `'"'` opens no string that
    // the next `"` would close): only the real line is named.
    write(
        &src,
        "c/mod.rs",
        &format!("{quiet}use crate::a::X;\nconst T: &str = \"\";\n"),
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("c/mod.rs:").count(), 1, "{out}");
    assert!(out.contains("c/mod.rs:9: use crate::a::X;"), "{out}");
}

#[test]
fn a_circle_between_the_files_of_a_sub_folder_is_found() {
    let (_dir, src) = clean_crate();
    write(&src, "c/deep/mod.rs", "pub mod leaf;\npub mod twig;\n");
    write(
        &src,
        "c/deep/twig.rs",
        "pub struct T;\nuse super::leaf::L;\n",
    );
    write(
        &src,
        "c/deep/leaf.rs",
        "pub struct L;\nuse crate::c::deep::twig::T;\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("c/deep/leaf -> c/deep/twig\n"), "{out}");
    assert!(
        out.contains("leaf.rs:2: use crate::c::deep::twig::T;"),
        "{out}"
    );
    assert!(out.contains("twig.rs:2: use super::leaf::L;"), "{out}");
    assert!(
        out.contains("circle inside src/c/deep: leaf -> twig -> leaf"),
        "{out}"
    );

    // The folder's own mod.rs wires its files: its paths are no edges.
    write(&src, "c/deep/twig.rs", "pub struct T;\n");
    write(
        &src,
        "c/deep/mod.rs",
        "pub mod leaf;\npub mod twig;\nuse leaf::L;\nuse self::twig::T;\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_path_through_a_re_export_is_an_edge_to_where_the_item_lives() {
    // `super::T` is `twig::T`, re-exported by the folder's mod.rs.
    let (_dir, src) = clean_crate();
    write(
        &src,
        "c/deep/mod.rs",
        "pub mod leaf;\npub mod twig;\npub use twig::T;\n",
    );
    write(
        &src,
        "c/deep/twig.rs",
        "pub struct T;\nfn f() -> super::leaf::L { todo!() }\n",
    );
    write(&src, "c/deep/leaf.rs", "pub struct L;\nuse super::T;\n");
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("leaf.rs:2: use super::T;"), "{out}");

    // Sub-folders of a folder are nodes too: c/deep/x/ and c/deep/y.rs.
    let (_dir, src) = clean_crate();
    write(&src, "c/deep/mod.rs", "pub mod leaf;\npub mod x;\n");
    write(&src, "c/deep/x/mod.rs", "pub mod inner;\n");
    write(
        &src,
        "c/deep/x/inner.rs",
        "use super::super::leaf::L;\npub struct I;\n",
    );
    write(
        &src,
        "c/deep/leaf.rs",
        "pub struct L;\nuse crate::c::deep::x::inner::I;\n",
    );
    let (code, out) = check(&src);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("circle inside src/c/deep: leaf -> x -> leaf"),
        "{out}"
    );
}

#[test]
fn a_missing_folder_is_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = check(&dir.path().join("nowhere"));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("is not a folder"), "{out}");
}

#[test]
fn the_crate_has_no_circle_between_folders() {
    let (code, out) = check(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")));
    assert_eq!(
        code, 0,
        "a `use` makes a circle between folders of src/:\n{out}"
    );
}

/// `docs/architecture.md` names files: each must exist (a move that
/// forgets the doc fails here).
#[test]
fn the_architecture_doc_names_only_files_that_exist() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md"))
        .expect("docs/architecture.md exists");
    let named: Vec<&str> = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with("src/") || s.starts_with("scripts/"))
        .collect();
    assert!(named.len() > 20, "the doc names the files it walks through");
    let missing: Vec<&&str> = named
        .iter()
        .filter(|p| !root.join(p.trim_end_matches('/')).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "named in docs/architecture.md but missing: {missing:?}"
    );
}

/// Every pane's and overlay's state takes its keys behind the one trait
/// the router speaks (issue 38, point 5): a layer that stops being a
/// `Component` (its keys moved back onto `App`) no longer compiles here.
#[test]
fn every_pane_and_overlay_takes_its_keys_behind_one_trait() {
    use ocview::app::component::Component;
    use ocview::app::{overlays, panes, verbs};
    fn takes_keys<T: Component>() {}
    takes_keys::<overlays::help::HelpState>();
    takes_keys::<overlays::diff_view::DiffViewState>();
    takes_keys::<overlays::jump_list::JumpList>();
    takes_keys::<overlays::theme_picker::ThemePicker>();
    takes_keys::<overlays::bad_record::BadRecord>();
    takes_keys::<overlays::usage::UsageState>();
    takes_keys::<overlays::archive_search::SearchView>();
    takes_keys::<overlays::audit::AuditView>();
    takes_keys::<overlays::confirm::ConfirmAbort>();
    takes_keys::<overlays::search::SessionSearch>();
    takes_keys::<verbs::Pick>();
    takes_keys::<panes::session_list::ListState>();
    takes_keys::<panes::turn_view::layout::TurnState>();
    takes_keys::<panes::prompt_bar::answers::PromptUi>();
    takes_keys::<panes::status_line::seek::SeekInput>();
    takes_keys::<panes::status_line::player::Player>();
}

/// The `App` keeps the store, the panes' and overlays' states, the layer
/// on top and the routing: its public fields stay few (50 before the
/// panes owned their keys).
#[test]
fn the_app_has_few_public_fields() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/app/mod.rs")).unwrap();
    let start = text
        .find("pub struct App {")
        .expect("App is defined in src/app/mod.rs");
    let body = &text[start..start + text[start..].find("\n}\n").unwrap()];
    let public: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("    pub "))
        .filter(|l| !l.starts_with('('))
        .collect();
    assert!(
        public.len() <= 26,
        "{} public fields: {public:#?}",
        public.len()
    );
}
