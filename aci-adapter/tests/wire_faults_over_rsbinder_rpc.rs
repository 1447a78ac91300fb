//! Faults on the ACI wire (E.1, E.2a) over real rsbinder RPC, made with raw transactions as a
//! misbehaving peer would: a wrong interface token, truncated parcels, a Bundle with a tag we
//! do not read; a rogue provider calling our `IACICallback.onResult` twice and `onProgress`
//! after it; and a controller that disappears while its async call runs. The other side keeps
//! serving through all of them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aci_adapter::bundle::BundleValue;
use aci_adapter::parcel::{ParcelWriter, tag};
use aci_adapter::provider::AciClient;
use aci_adapter::wire::{
    AciRequest, AciResponse, BnACIService, IACICallback, IACISERVICE_DESCRIPTOR, IACIService,
    error_code,
};
use permissions::AciPolicy;
use provider_support::{CALL, Running, Scripted, start};
use rsbinder::{Interface, SIBinder, StatusCode, Strong};

const CALL_CODE: u32 = rsbinder::FIRST_CALL_TRANSACTION;

/// A raw two-way transaction: `token` (or none), then `words` as they are.
fn raw(
    binder: &SIBinder,
    token: Option<&str>,
    body: &[u8],
) -> Result<Option<rsbinder::Parcel>, StatusCode> {
    let remote = binder.as_remote().ok_or(StatusCode::BadType)?;
    let mut data = remote.prepare_transact(false)?;
    if let Some(t) = token {
        data.write(&t)?;
    }
    aci_adapter::parcel::write_to_binder(&mut data, body)?;
    remote.submit_transact(CALL_CODE, &data, 0)
}

async fn raw_call(
    rt: &Running,
    token: Option<&'static str>,
    body: Vec<u8>,
) -> Result<Option<rsbinder::Parcel>, StatusCode> {
    let binder = rt.client.binder();
    tokio::task::spawn_blocking(move || raw(&binder, token, &body))
        .await
        .unwrap()
}

/// The reply of a raw `call`: Ok(response) or the failure status.
fn reply_of(r: Result<Option<rsbinder::Parcel>, StatusCode>) -> Result<AciResponse, String> {
    let mut reply = r.map_err(|c| format!("{c:?}"))?.ok_or("no reply")?;
    let status: rsbinder::Status = reply.read().map_err(|c| format!("{c:?}"))?;
    if !status.is_ok() {
        return Err(format!("{status:?}"));
    }
    reply.read::<AciResponse>().map_err(|c| format!("{c:?}"))
}

async fn still_serves(rt: &Running) {
    let resp = rt
        .client
        .call(&AciRequest::new("echo").param("text", BundleValue::String(Some("ok".into()))))
        .await
        .unwrap();
    assert!(resp.success, "the provider keeps serving: {resp:?}");
}

fn marker_then(req: &AciRequest) -> Vec<u8> {
    let mut body = vec![1, 0, 0, 0];
    body.extend(req.encode());
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e1_wrong_interface_token_is_refused_and_no_hook_runs() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let body = marker_then(&AciRequest::new("whoami"));
    for token in [
        Some("ai.aci.core.IACIServiceX"),
        Some("org.agentos.channel.IMcpService"),
        None,
    ] {
        let r = reply_of(raw_call(&rt, token, body.clone()).await);
        assert!(r.is_err(), "token {token:?} must be refused: {r:?}");
    }
    assert_eq!(seen.hooks(), 0);
    // The right token works with the same bytes.
    let ok = reply_of(raw_call(&rt, Some(IACISERVICE_DESCRIPTOR), body).await).unwrap();
    assert!(ok.success, "{ok:?}");
    still_serves(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2a_truncated_request_parcels_fail_the_transaction_not_the_provider() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let mut req = AciRequest::new("echo").param("text", BundleValue::String(Some("hi".into())));
    req.caller_pkg = Some("x".into());
    let body = marker_then(&req);
    for cut in (0..body.len()).step_by(4) {
        let r = reply_of(raw_call(&rt, Some(IACISERVICE_DESCRIPTOR), body[..cut].to_vec()).await);
        assert!(r.is_err(), "cut at {cut}: {r:?}");
    }
    assert_eq!(seen.hooks(), 0);
    still_serves(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2a_unsupported_bundle_tag_from_a_peer_is_answered_400_with_the_call_id() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;

    // params = {"text": "hi", "p": <a Parcelable, length-prefixed since Android 13>}
    let mut entries = ParcelWriter::new();
    entries.write_i32(2);
    entries.write_string(Some("text"));
    entries.write_value(&BundleValue::String(Some("hi".into())));
    entries.write_string(Some("p"));
    entries.write_i32(tag::PARCELABLE);
    entries.write_i32(8);
    entries.write_i32(7);
    entries.write_i32(7);
    let entries = entries.into_bytes();
    let mut w = ParcelWriter::new();
    w.write_i32(1); // non-null parcelable
    w.write_string(Some("echo"));
    w.write_string(Some("1.0"));
    w.write_i32(entries.len() as i32);
    w.write_i32(0x4C44_4E42);
    let mut body = w.into_bytes();
    body.extend(entries);
    let mut tail = ParcelWriter::new();
    tail.write_string(Some("call-42"));
    tail.write_string(None);
    body.extend(tail.into_bytes());

    let resp = reply_of(raw_call(&rt, Some(IACISERVICE_DESCRIPTOR), body).await).unwrap();
    assert!(!resp.success);
    assert_eq!(resp.error_code, error_code::BAD_REQUEST);
    assert_eq!(resp.call_id, "call-42");
    assert!(
        resp.error_message
            .as_deref()
            .unwrap()
            .contains("unsupported Bundle value type tag 4"),
        "{resp:?}"
    );
    assert_eq!(
        seen.hooks(),
        0,
        "a request we cannot read never reaches the provider"
    );
    still_serves(&rt).await;
}

/// A provider that breaks the contract: `onResult` twice, `onProgress` after it.
struct Rogue {
    statuses: Arc<Mutex<Vec<bool>>>,
    done: Arc<tokio::sync::Notify>,
}

impl Interface for Rogue {}

impl IACIService for Rogue {
    fn r#call(&self, request: &AciRequest) -> rsbinder::BinderResult<AciResponse> {
        Ok(AciResponse::success().with_call_id(&request.call_id))
    }

    fn r#callAsync(
        &self,
        request: &AciRequest,
        callback: &Strong<dyn IACICallback>,
    ) -> rsbinder::BinderResult<()> {
        let cb = callback.clone();
        let id = request.call_id.clone();
        let statuses = self.statuses.clone();
        let done = self.done.clone();
        std::thread::spawn(move || {
            // In this order: progress, the result, a second result, progress after it.
            let s = vec![
                cb.r#onProgress(5, Some("starting")).is_ok(),
                cb.r#onResult(
                    &AciResponse::success()
                        .put_string("n", "first")
                        .with_call_id(&id),
                )
                .is_ok(),
                cb.r#onResult(
                    &AciResponse::success()
                        .put_string("n", "second")
                        .with_call_id(&id),
                )
                .is_ok(),
                cb.r#onProgress(99, None).is_ok(),
            ];
            *statuses.lock().unwrap() = s;
            done.notify_one();
        });
        Ok(())
    }

    fn r#getCapabilities(&self) -> rsbinder::BinderResult<Vec<String>> {
        Ok(vec![])
    }

    fn r#ping(&self) -> rsbinder::BinderResult<bool> {
        Ok(true)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e1_callback_called_twice_keeps_the_first_result_and_ignores_the_rest() {
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(tokio::sync::Notify::new());
    let rogue = Rogue {
        statuses: statuses.clone(),
        done: done.clone(),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rogue.sock");
    let _guard = rsbinder::serve(binder_channel::binder::rpc_uri(&path, "rogue"))
        .unwrap()
        .add("rogue", BnACIService::new_binder(rogue).as_binder())
        .unwrap()
        .spawn()
        .unwrap();
    let client = AciClient::connect_unix(&path, "rogue").await.unwrap();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let p2 = progress.clone();
    let req = AciRequest::new("anything");
    let resp = client
        .call_async(&req, move |p, _| p2.lock().unwrap().push(p))
        .await
        .unwrap();
    assert_eq!(
        resp.result.get("n"),
        Some(&BundleValue::String(Some("first".into())))
    );
    tokio::time::timeout(Duration::from_secs(10), done.notified())
        .await
        .unwrap();
    // Every callback transaction succeeded on the wire: the extra ones are ignored, not errors.
    assert_eq!(
        statuses.lock().unwrap().as_slice(),
        &[true, true, true, true]
    );
    assert_eq!(
        progress.lock().unwrap().as_slice(),
        &[5],
        "progress after the result is dropped"
    );
    assert!(client.ping().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e1_controller_gone_before_the_async_result_leaves_the_provider_serving() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let first = AciClient::connect_unix(&rt.path, "aci").await.unwrap();
    let pending = tokio::spawn(async move {
        let r = first.call_async(&AciRequest::new("wait"), |_, _| {}).await;
        drop(first);
        r
    });
    // Wait until the provider is inside `wait`.
    for _ in 0..500 {
        if seen.calls.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);
    pending.abort();
    let _ = pending.await;
    // The controller (and its callback) are gone; now the provider answers.
    seen.release.notify_one();
    for _ in 0..500 {
        if seen.after.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        seen.after.load(Ordering::SeqCst),
        1,
        "the call completed on the provider"
    );
    still_serves(&rt).await;
    // A fresh async call on the surviving connection is delivered normally.
    let resp = rt
        .client
        .call_async(&AciRequest::new("slow"), |_, _| {})
        .await
        .unwrap();
    assert!(resp.success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2a_random_call_bodies_never_take_the_provider_down() {
    let (svc, seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    // A fixed xorshift stream: reproducible, covers lengths 0..=256 in words.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..200 {
        let words = (next() % 65) as usize;
        let mut body = Vec::with_capacity(words * 4);
        for w in 0..words {
            let v = next();
            // Mostly small numbers (plausible lengths, tags, markers), sometimes anything.
            let word = if round % 3 == 0 || w == 0 {
                (v % 5) as u32
            } else if v % 4 == 0 {
                v as u32
            } else {
                (v % 300) as u32
            };
            body.extend_from_slice(&word.to_le_bytes());
        }
        let _ = reply_of(raw_call(&rt, Some(IACISERVICE_DESCRIPTOR), body).await);
    }
    assert_eq!(
        seen.calls.load(Ordering::SeqCst),
        seen.after.load(Ordering::SeqCst)
    );
    still_serves(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2_concurrent_sync_and_async_calls_each_get_their_own_call_id() {
    let (svc, _seen) = Scripted::new();
    let rt = start(Arc::new(svc), &[CALL], AciPolicy::allow_all(), None).await;
    let second = AciClient::connect_unix(&rt.path, "aci").await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let client = if i % 2 == 0 {
            rt.client.clone()
        } else {
            second.clone()
        };
        tasks.push(tokio::spawn(async move {
            let text = format!("msg-{i}");
            let req =
                AciRequest::new("echo").param("text", BundleValue::String(Some(text.clone())));
            let resp = if i % 3 == 0 {
                client.call_async(&req, |_, _| {}).await.unwrap()
            } else {
                client.call(&req).await.unwrap()
            };
            assert_eq!(resp.call_id, req.call_id);
            assert_eq!(
                resp.result.get("text"),
                Some(&BundleValue::String(Some(text)))
            );
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}
