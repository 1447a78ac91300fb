//! `http_request` as a [`CapabilitySource`] of built-ins, so the catalog can list it and the
//! runtime can call it like any other tool.

use async_trait::async_trait;
use capability_model::{
    CallError, CancelToken, CapabilityId, CapabilitySource, ListError, Listing, Source, ToolOutput,
};
use futures::stream::BoxStream;
use futures::{FutureExt as _, StreamExt as _};
use serde_json::{Map, Value};

use crate::capability::{CAPABILITY_ID, http_request_capability};
use crate::client::HttpExecutor;
use crate::error::HttpError;

/// The built-in source that offers exactly one capability, `http_request`.
#[derive(Debug, Clone)]
pub struct HttpCapabilitySource {
    executor: HttpExecutor,
}

impl HttpCapabilitySource {
    /// Wraps an executor.
    pub fn new(executor: HttpExecutor) -> Self {
        Self { executor }
    }

    /// The executor.
    pub fn executor(&self) -> &HttpExecutor {
        &self.executor
    }
}

#[async_trait]
impl CapabilitySource for HttpCapabilitySource {
    fn source(&self) -> Source {
        Source::Builtin
    }

    async fn list(&self) -> Result<Listing, ListError> {
        Ok(Listing {
            capabilities: vec![http_request_capability()],
            issues: Vec::new(),
        })
    }

    async fn call(
        &self,
        id: &CapabilityId,
        arguments: Map<String, Value>,
        cancel: CancelToken,
    ) -> Result<ToolOutput, CallError> {
        if id.source != Source::Builtin || id.name != CAPABILITY_ID {
            return Err(CallError::UnknownTool);
        }
        if cancel.is_cancelled() {
            return Err(CallError::Cancelled);
        }
        let outcome = futures::select_biased! {
            _ = cancel.cancelled().fuse() => Err(HttpError::Cancelled),
            r = self.executor.execute(&arguments).fuse() => r,
        };
        match outcome {
            Ok(result) => Ok(result.to_tool_output()),
            Err(e) => e.into_call_result(),
        }
    }

    fn changes(&self) -> BoxStream<'static, ()> {
        futures::stream::pending().boxed()
    }
}
