//! MCP-32: more than 128 valid tools — or a provider that pages forever / lists 10,000
//! tools — leaves the server with no tools and a `too_many_tools` issue.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use capability_model::IssueKind;
use common::{Raw, connect_fake};
use serde_json::{Value, json};

fn tools(range: std::ops::Range<usize>) -> Vec<Value> {
    range
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect()
}

/// Serves `tools/list` pages of `per_page` tools out of `total` until done (or forever
/// when `total` is `None`).
async fn serve_pages(fake: &Raw, per_page: usize, total: Option<usize>) {
    let mut offset = 0;
    loop {
        let req = fake.next().await;
        assert_eq!(req["method"], "tools/list");
        if offset > 0 {
            assert_eq!(req["params"]["cursor"], offset.to_string());
        }
        let end = total.map_or(offset + per_page, |t| (offset + per_page).min(t));
        let mut page = json!({"tools": tools(offset..end)});
        offset = end;
        let more = total.is_none_or(|t| offset < t);
        if more {
            page["nextCursor"] = json!(offset.to_string());
        }
        fake.answer(&req["id"], page);
        if !more {
            return;
        }
    }
}

#[tokio::test]
async fn mcp32_exactly_128_tools_are_accepted_over_pages() {
    let (client, fake) = connect_fake().await;
    let (listing, ()) = tokio::join!(
        client.list_capabilities("p", "s"),
        serve_pages(&fake, 50, Some(128))
    );
    let listing = listing.unwrap();
    assert_eq!(listing.capabilities.len(), 128);
    assert!(listing.issues.is_empty());
}

#[tokio::test]
async fn mcp32_129_tools_contribute_none() {
    let (client, fake) = connect_fake().await;
    let (listing, ()) = tokio::join!(
        client.list_capabilities("p", "s"),
        serve_pages(&fake, 200, Some(129))
    );
    let listing = listing.unwrap();
    assert!(listing.capabilities.is_empty());
    assert_eq!(listing.issues[0].kind, IssueKind::TooManyTools);
}

#[tokio::test]
async fn mcp32_ten_thousand_tools_or_endless_paging_contribute_none() {
    let (client, fake) = connect_fake().await;
    let list = client.list_capabilities("p", "s");
    let pager = serve_pages(&fake, 100, Some(10_000));
    // The client stops asking after its page limit; the pager is left waiting.
    let listing = tokio::select! {
        l = list => l,
        () = pager => panic!("the client read all 100 pages"),
    };
    let listing = listing.unwrap();
    assert!(listing.capabilities.is_empty());
    assert_eq!(listing.issues.len(), 1);
    assert_eq!(listing.issues[0].kind, IssueKind::TooManyTools);

    let list = client.list_capabilities("p", "s");
    let listing = tokio::select! {
        l = list => l,
        () = serve_pages(&fake, 1, None) => unreachable!(),
    };
    assert_eq!(listing.unwrap().issues[0].kind, IssueKind::TooManyTools);
}
