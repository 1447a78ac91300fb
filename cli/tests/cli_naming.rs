//! `capbridge tool-name` and `capbridge catalog assign` (CAT-10..CAT-17 from the command line).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn tool_name_prints_one_json_line_per_input_line() {
    let o = run(
        &["tool-name"],
        "{\"plugin\":\"com.example.notes\",\"server\":\"main\",\"tool\":\"list\"}\n\
         {\"plugin\":\"p\",\"server\":\"s\",\"tool\":\"😀x\"}\n\
         {\"source\":\"session\",\"server\":\"w\",\"tool\":\"t\"}\n",
    );
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        "{\"name\":\"mcp__com_example_notes__main__list\"}\n{\"name\":\"mcp__p__s____x\"}\n{\"name\":\"ses__w__t\"}\n"
    );
}

#[test]
fn tool_name_bad_line_exits_2_with_one_line() {
    for input in [
        "{not json}\n",
        "{\"plugin\":\"p\",\"server\":\"s\"}\n",
        "{\"plugin\":1,\"server\":\"s\",\"tool\":\"t\"}\n",
    ] {
        let o = run(&["tool-name"], input);
        assert_eq!(o.status.code(), Some(2), "{input}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("capbridge: line 1:"), "{err}");
    }
}

#[test]
fn assign_names_in_input_order_with_collisions() {
    let o = run(
        &["catalog", "assign"],
        r#"[{"plugin":"a_b","server":"s","tool":"t"},{"plugin":"a.b","server":"s","tool":"t"},{"plugin":"a.b","server":"s","tool":"u"},{"source":"session","server":"s","tool":"t"}]"#,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "mcp__a_b__s__t_74a108",
            "mcp__a_b__s__t_0b737e",
            "mcp__a_b__s__u",
            "ses__s__t"
        ]
    );
    assert_eq!(v[0]["plugin"], "a_b");
    assert_eq!(v[0]["tool"], "t");
}

#[test]
fn assign_rejects_bad_input_with_exit_2() {
    let cases = [
        "not json",
        "{}",
        r#"[{"plugin":"p","server":"s","tool":"t"},{"plugin":"p","server":"s","tool":"t"}]"#,
        r#"[{"plugin":"","server":"s","tool":"t"}]"#,
        r#"[{"plugin":"p","server":"s","tool":""}]"#,
        r#"[{"plugin":"p","server":"s"}]"#,
        r#"[5]"#,
    ];
    for input in cases {
        let o = run(&["catalog", "assign"], input);
        assert_eq!(o.status.code(), Some(2), "{input}");
        assert!(o.stdout.is_empty());
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
