//! MCP-60 (tolerant frontmatter: a bad Skill only disables itself), MCP-61 (only ready and
//! enabled plugins), MCP-62 (64 per plugin, 256 total, deterministic), MCP-63 (description
//! normalization, 1,024 UTF-16 units), MCP-64 (all conflicting Skills renamed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fixtures/plugins/support.rs"]
mod support;

use std::sync::Arc;

use mcp_adapter::plugin::{PackageIssue, PluginPackage};
use mcp_adapter::skills::{
    FrontmatterError, SkillCatalog, SkillCatalogIssue, SkillProblem, SkillProvider,
    normalize_description,
};
use support::*;

fn problems(p: &PluginPackage) -> Vec<(String, SkillProblem)> {
    p.issues()
        .iter()
        .filter_map(|i| match i {
            PackageIssue::Skill { dir, problem } => Some((dir.clone(), problem.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn mcp60_bad_frontmatter_disables_only_that_skill() {
    let d = package_dir(&manifest("notes", &["notes"]));
    skill(d.path(), "good", "Works.");
    write(d.path(), "skills/nofm/SKILL.md", "# Just markdown\n");
    write(
        d.path(),
        "skills/garbage/SKILL.md",
        "---\n{{{ ]]] :::\n---\nbody\n",
    );
    write(
        d.path(),
        "skills/open/SKILL.md",
        "---\nname: open\ndescription: never closed\n",
    );
    write(
        d.path(),
        "skills/noname/SKILL.md",
        "---\ndescription: d\n---\n",
    );
    write(
        d.path(),
        "skills/nodesc/SKILL.md",
        "---\nname: nodesc\n---\n",
    );
    write(
        d.path(),
        "skills/other/SKILL.md",
        "---\nname: mismatch\ndescription: d\n---\n",
    );
    write(
        d.path(),
        "skills/Bad_Name/SKILL.md",
        "---\nname: Bad_Name\ndescription: d\n---\n",
    );
    write(
        d.path(),
        "skills/binary/SKILL.md",
        b"---\nname: binary\ndescription: d\n---\n\0\0",
    );
    write(
        d.path(),
        "skills/latin1/SKILL.md",
        b"---\nname: latin1\ndescription: caf\xe9\n---\n",
    );
    let long = format!(
        "---\nname: long\ndescription: {}\n---\n",
        "x".repeat(20_000)
    );
    write(d.path(), "skills/long/SKILL.md", long);
    let p = read(d.path());
    assert!(p.is_ready());
    let names: Vec<&str> = p.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let got = problems(&p);
    let expect = [
        ("skills/Bad_Name", SkillProblem::InvalidName),
        ("skills/binary", SkillProblem::Binary),
        (
            "skills/garbage",
            SkillProblem::Frontmatter(FrontmatterError::BadLine(2)),
        ),
        ("skills/latin1", SkillProblem::NotUtf8),
        (
            "skills/long",
            SkillProblem::Frontmatter(FrontmatterError::TooLong),
        ),
        ("skills/nodesc", SkillProblem::MissingDescription),
        (
            "skills/nofm",
            SkillProblem::Frontmatter(FrontmatterError::Missing),
        ),
        ("skills/noname", SkillProblem::MissingName),
        (
            "skills/open",
            SkillProblem::Frontmatter(FrontmatterError::Unterminated),
        ),
        ("skills/other", SkillProblem::NameMismatch),
    ];
    for (dir, problem) in &expect {
        assert!(
            got.contains(&((*dir).to_owned(), problem.clone())),
            "{dir}: {problem:?} not in {got:?}"
        );
    }
    assert_eq!(got.len(), expect.len(), "{got:?}");
    // Issue text names the Skill, never its content.
    for i in issue_texts(&p) {
        assert!(!i.contains("xxxxxxxx") && !i.contains("{{{"), "{i}");
    }
}

#[test]
fn mcp60_quoted_and_folded_descriptions_parse() {
    let d = package_dir(&manifest("notes", &[]));
    write(
        d.path(),
        "skills/quoted/SKILL.md",
        "---\nname: \"quoted\"\ndescription: 'Use it''s tools: search, then add.'\nallowed-tools: Bash\n---\n",
    );
    write(
        d.path(),
        "skills/folded/SKILL.md",
        "---\nname: folded\ndescription: >\n  First line\n  second line.\nmetadata:\n  version: 2\n---\n",
    );
    let p = read(d.path());
    let got: Vec<(&str, &str)> = p
        .skills()
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("folded", "First line second line."),
            ("quoted", "Use it's tools: search, then add.")
        ]
    );
}

#[test]
fn mcp61_only_ready_and_enabled_plugins_are_listed() {
    let a = package_dir(&manifest("alpha", &[]));
    skill(a.path(), "a-skill", "A.");
    let b = package_dir(&manifest("beta", &[]));
    skill(b.path(), "b-skill", "B.");
    let c = package_dir(&manifest("Not Valid", &[]));
    skill(c.path(), "c-skill", "C.");
    let cat = SkillCatalog::build([
        SkillProvider {
            package: Arc::new(read(a.path())),
            usable: true,
        },
        SkillProvider {
            package: Arc::new(read(b.path())),
            usable: false,
        },
        // A rejected manifest has no name: never listed even if marked usable.
        SkillProvider {
            package: Arc::new(read(c.path())),
            usable: true,
        },
    ]);
    let names: Vec<&str> = cat.skills().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a-skill"]);
}

#[test]
fn mcp62_at_most_64_per_plugin_and_256_in_total() {
    let big = package_dir(&manifest("big", &[]));
    for i in 0..70 {
        skill(big.path(), &format!("s{i:03}"), "d");
    }
    let cat = catalog(&[big.path()]);
    assert_eq!(cat.len(), 64);
    assert_eq!(cat.skills().last().unwrap().name, "s063");
    match &cat.issues()[0] {
        SkillCatalogIssue::TooManyInPlugin { plugin, dropped } => {
            assert_eq!(plugin, "big");
            assert_eq!(dropped.len(), 6);
            assert_eq!(dropped[0], "s064");
        }
        other => panic!("{other:?}"),
    }

    let dirs: Vec<tempfile::TempDir> = (0..5)
        .map(|p| {
            let d = package_dir(&manifest(&format!("p{p}"), &[]));
            for i in 0..60 {
                skill(d.path(), &format!("p{p}-s{i:02}"), "d");
            }
            d
        })
        .collect();
    let mut paths: Vec<&std::path::Path> = dirs.iter().map(|d| d.path()).collect();
    let cat = catalog(&paths);
    assert_eq!(cat.len(), 256);
    // Kept in (plugin, skill) order: p0..p3 whole (240), then p4's first 16.
    assert_eq!(cat.skills().last().unwrap().name, "p4-s15");
    assert!(cat.issues().iter().any(|i| matches!(i,
        SkillCatalogIssue::TooManyInTotal { dropped } if dropped.len() == 44)));
    // Deterministic whatever the input order.
    paths.reverse();
    let again = catalog(&paths);
    assert!(cat.skills().eq(again.skills()));
}

#[test]
fn mcp63_descriptions_are_normalized_and_capped_in_utf16_units() {
    let (d, cut) = normalize_description("  Search\tfirst,\n\n then \u{7}add.\u{202e}  ");
    assert_eq!(d, "Search first, then add.");
    assert!(!cut);
    // 1,024 UTF-16 units: 511 astral characters (2 units each) + "ab" = 1,024 exactly.
    let exact = format!("{}ab", "😀".repeat(511));
    assert_eq!(normalize_description(&exact), (exact.clone(), false));
    // One more unit is cut, and never in the middle of a surrogate pair.
    let over = format!("a{}", "😀".repeat(512));
    let (d, cut) = normalize_description(&over);
    assert!(cut);
    assert_eq!(d.encode_utf16().count(), 1_023);

    let pkg = package_dir(&manifest("notes", &[]));
    write(
        pkg.path(),
        "skills/long/SKILL.md",
        format!("---\nname: long\ndescription: {}\n---\n", "y".repeat(1_500)),
    );
    let p = read(pkg.path());
    assert_eq!(p.skills()[0].description.len(), 1_024);
    assert!(p.issues().contains(&PackageIssue::Skill {
        dir: "skills/long".into(),
        problem: SkillProblem::DescriptionTruncated
    }));
}

#[test]
fn mcp64_every_conflicting_skill_is_renamed_order_independently() {
    let a = package_dir(&manifest("alpha", &[]));
    skill(a.path(), "search", "A.");
    skill(a.path(), "only-a", "A.");
    let b = package_dir(&manifest("beta", &[]));
    skill(b.path(), "search", "B.");
    for order in [[a.path(), b.path()], [b.path(), a.path()]] {
        let cat = catalog(&order);
        let names: Vec<&str> = cat.skills().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["only-a", "alpha:search", "beta:search"]);
        assert!(cat.issues().contains(&SkillCatalogIssue::Renamed {
            skill: "search".into()
        }));
        assert!(
            cat.read("alpha:search", None)
                .unwrap()
                .contains("Body of search.")
        );
        assert_eq!(
            cat.read("search", None),
            Err(mcp_adapter::SkillError::UnknownSkill),
            "the bare name is ambiguous and not listed"
        );
    }
}
