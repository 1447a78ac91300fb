//! The consent surfaces: terminal (over a real pipe), fixed policy, scripted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capability_model::Risk;
use permissions::consent::{
    CallerChoice, CallerPrompt, Choice, ConsentId, ConsentRequest, ConsentSurface, DenyReason,
    Initiator, ToolPrompt,
};
use permissions::sanitize::SanitizeConfig;
use permissions::{FixedSurface, TerminalSurface};

/// A writer tests can read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn prompt(choices: Vec<Choice>) -> ToolPrompt {
    let req = ConsentRequest {
        capability: common::write_tool("note_add").id,
        title: Some("Add a note".into()),
        risk: Risk::Write,
        arguments: serde_json::Map::new(),
        initiator: Initiator::App {
            package: "com.example.caller".into(),
            label: None,
        },
        choices,
    };
    ToolPrompt::build(ConsentId(7), &req, SanitizeConfig::default())
}

/// Waits (real time, bounded) until the surface has printed `needle`, then types `answer`.
async fn answer_when_shown(
    out: &Shared,
    needle: &str,
    pipe: &mut std::io::PipeWriter,
    answer: &str,
) {
    for _ in 0..2000 {
        if out.text().matches(needle).count() > 0 {
            pipe.write_all(answer.as_bytes()).unwrap();
            pipe.flush().unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("prompt never shown; output so far: {}", out.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_surface_asks_and_parses_answers() {
    let (reader, mut writer) = std::io::pipe().unwrap();
    let out = Shared::default();
    let surface = TerminalSurface::new(reader, out.clone());
    let p = prompt(Choice::offered(true));

    // Typed before the prompt appears: discarded (no type-ahead approvals).
    writer.write_all(b"3\n").unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let ask = surface.ask_tool(&p);
    let (answer, ()) = tokio::join!(ask, async {
        answer_when_shown(&out, "Answer 1-4: ", &mut writer, "bogus\n").await;
        // The second hint appears after the invalid answer.
        for _ in 0..2000 {
            if out.text().matches("Answer 1-4: ").count() >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        writer.write_all(b"2\n").unwrap();
    });
    assert_eq!(answer, Some(Choice::DontAskAgainThisSession));
    let text = out.text();
    assert!(
        text.contains("Allow tool 「note_add」 (「Add a note」) to run?"),
        "{text}"
    );
    assert!(
        text.contains("Initiated by 「com.example.caller」"),
        "{text}"
    );
    assert!(text.contains("[4] deny"));
    assert!(text.contains("Not a valid answer."));

    // HIGH-style prompt: "always" is not offered, so typing it is invalid; "d" denies.
    let p = prompt(Choice::offered(false));
    let (answer, ()) = tokio::join!(surface.ask_tool(&p), async {
        answer_when_shown(&out, "Answer 1-2: ", &mut writer, "always\nd\n").await;
    });
    assert_eq!(answer, Some(Choice::Deny));

    // Caller prompt: empty line = the default, Deny (AUT-04).
    let cp = CallerPrompt::build(
        "com.example.app",
        permissions::CertDigest([1; 32]),
        Some("App"),
        SanitizeConfig::default(),
    );
    let (answer, ()) = tokio::join!(surface.ask_caller(&cp), async {
        answer_when_shown(&out, "Answer 1 or 2 [2]: ", &mut writer, "\n").await;
    });
    assert_eq!(answer, Some(CallerChoice::Deny));

    surface.withdrawn(ConsentId(9), DenyReason::Timeout);
    assert!(
        out.text()
            .contains("[capbridge consent #9] timed out; the call was not run.")
    );

    // End of input: deny.
    drop(writer);
    assert_eq!(surface.ask_tool(&prompt(Choice::offered(true))).await, None);
}

#[tokio::test]
async fn fixed_surface_allows_once_or_denies() {
    let allow = FixedSurface::allow();
    assert_eq!(
        allow.ask_tool(&prompt(Choice::offered(true))).await,
        Some(Choice::AllowOnce)
    );
    let cp = CallerPrompt::build(
        "com.a",
        permissions::CertDigest([1; 32]),
        None,
        SanitizeConfig::default(),
    );
    assert_eq!(allow.ask_caller(&cp).await, Some(CallerChoice::Allow));
    let deny = FixedSurface::deny();
    assert_eq!(
        deny.ask_tool(&prompt(Choice::offered(true))).await,
        Some(Choice::Deny)
    );
    assert_eq!(deny.ask_caller(&cp).await, Some(CallerChoice::Deny));
}
